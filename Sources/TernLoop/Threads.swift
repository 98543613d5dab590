import CLibUV

/// Threads of Tern's own outside the worker pool — the async API's run, a fleet's slots, a
/// child's pipe, a memory sampler — started through libuv like the pool's, so the process has one
/// way to make a thread. Each gets `stackSize` bytes of stack: planning and policies recurse
/// through expressions as deep as on a main thread (8 MiB), deeper than a secondary thread's
/// default allows. A thread does not see the starting task's task-local values: callers that
/// need them re-bind them in `body` (`TernCommands`' `onThreads` does, for the command's).
public struct OSThread: ~Copyable, Sendable {
    /// The stack a main thread has: what planning and policies are written for.
    public static let mainStackSize = 8 << 20

    private let handle: uv_thread_t

    /// Starts `body` on a new thread; `join()` waits for it.
    public init(stackSize: Int = mainStackSize, _ body: @escaping @Sendable () -> Void) throws {
        handle = try WorkerThread.start(stackSize: stackSize, body)
    }

    /// Waits for the thread to return. Every thread is joined or detached once: the type cannot
    /// be copied, and either consumes it.
    public consuming func join() {
        WorkerThread.join(handle)
    }

    /// Lets the thread run on unjoined: its resources go when it returns. For a thread that ends
    /// itself (a sampler told to stop) whose end no one waits for.
    public consuming func detach() {
        WorkerThread.detach(handle)
    }

    /// Lowers the calling thread (and the threads it starts after) to the lowest scheduling
    /// priority, so it runs on cores no other thread of normal priority wants: work that may
    /// overlap a pass, such as reading the source's digest, then takes the core a single writer
    /// leaves idle rather than one the pass's workers need (those of a policy run at nice 10,
    /// below the writer: a thread at 19 weighs a seventh of one of them). Best effort: where the
    /// system refuses, the thread keeps its priority, which changes only the timing.
    public static func yieldCoresToOthers() {
        WorkerThread.lowerCurrentPriority()
    }

    /// Runs `body(slot)` for each slot of `0..<count` (at least one) on threads of their own, and
    /// returns once every one has returned.
    public static func run(_ count: Int, stackSize: Int = mainStackSize, _ body: @escaping @Sendable (Int) -> Void) throws {
        var threads: [uv_thread_t] = []
        defer { threads.forEach(WorkerThread.join) }
        for slot in 0..<max(1, count) {
            threads.append(try WorkerThread.start(stackSize: stackSize) { body(slot) })
        }
    }
}
