import CLibUV

/// A mutex with a condition variable: libuv's portable primitives, which are safe from any thread.
///
/// `@unchecked Sendable`: the mutex and condition live in heap memory that never moves and is
/// freed only in `deinit`, when no thread can hold a reference; all uses go through libuv's
/// thread-safe calls.
final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<uv_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<uv_cond_t>.allocate(capacity: 1)

    init() {
        // Both fail only when the OS is out of resources; nothing sensible can continue then.
        precondition(uv_mutex_init(mutex) == 0, "uv_mutex_init failed")
        precondition(uv_cond_init(condition) == 0, "uv_cond_init failed")
    }

    deinit {
        uv_cond_destroy(condition)
        uv_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        uv_mutex_lock(mutex)
        defer { uv_mutex_unlock(mutex) }
        return try body()
    }

    /// Waits for a `broadcast()`; call with the lock held (inside `withLock`), in a loop over the
    /// condition waited for, since wake-ups may be spurious.
    func wait() {
        uv_cond_wait(condition, mutex)
    }

    /// Waits for a `broadcast()` or until `seconds` have passed; same rules as `wait()`.
    func wait(seconds: Double) {
        _ = uv_cond_timedwait(condition, mutex, UInt64(seconds * 1e9))
    }

    func broadcast() {
        uv_cond_broadcast(condition)
    }
}
