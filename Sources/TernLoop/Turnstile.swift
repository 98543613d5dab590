/// A gate one thread stops at until another opens it: tests step a run to a chosen point (a
/// milestone the engine reports, a batch a worker takes) and act there — cancel, kill, tamper —
/// instead of sleeping and hoping the run has got that far.
///
/// `@unchecked Sendable`: `isOpen`, `hasArrival` and `waiting` are read and written only with
/// `lock` held.
@_spi(Testing) public final class Turnstile: @unchecked Sendable {
    private let lock = ConditionLock()
    private var isOpen = false
    private var hasArrival = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// A closed turnstile no thread has reached yet.
    public init() {}

    /// Called on the thread to hold: wakes whoever awaits `arrival()`, then returns once `open()`
    /// has been called (at once if it already was).
    public func pass() {
        let arrivalSeen = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            hasArrival = true
            lock.broadcast()
            defer { waiting = [] }
            return waiting
        }
        for continuation in arrivalSeen { continuation.resume() }
        lock.withLock {
            while !isOpen { lock.wait() }
        }
    }

    /// Returns once a thread has reached `pass()` (at once if one already has).
    public func arrival() async {
        await withCheckedContinuation { continuation in
            let arrived = lock.withLock {
                if !hasArrival { waiting.append(continuation) }
                return hasArrival
            }
            if arrived { continuation.resume() }
        }
    }

    /// Blocks the calling thread until a thread has reached `pass()`: for a test that drives a
    /// loop itself.
    public func waitForArrival() {
        lock.withLock {
            while !hasArrival { lock.wait() }
        }
    }

    /// Lets every thread held at `pass()` go, and every later one through.
    public func open() {
        lock.withLock {
            isOpen = true
            lock.broadcast()
        }
    }
}
