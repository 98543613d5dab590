import CLibUV

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Starts OS threads through libuv and joins them.
enum WorkerThread {
    /// The body handed to a new thread, boxed for the trip through a C pointer.
    private final class Start: Sendable {
        let main: @Sendable () -> Void
        init(_ main: @escaping @Sendable () -> Void) { self.main = main }
    }

    /// Starts a thread running `main`, with `stackSize` bytes of stack (0: libuv's default).
    static func start(stackSize: Int = 0, _ main: @escaping @Sendable () -> Void) throws -> uv_thread_t {
        var thread = uv_thread_t()
        let start = Unmanaged.passRetained(Start(main)).toOpaque()
        var options = uv_thread_options_t()
        options.flags = stackSize > 0 ? UInt32(UV_THREAD_HAS_STACK_SIZE.rawValue) : 0
        options.stack_size = stackSize
        let result = uv_thread_create_ex(
            &thread, &options,
            { argument in
                guard let argument else { return }
                Unmanaged<Start>.fromOpaque(argument).takeRetainedValue().main()
            }, start)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw UVError(code: result, operation: "uv_thread_create")
        }
        return thread
    }

    /// Waits for a thread to return.
    static func join(_ thread: uv_thread_t) {
        var thread = thread
        // Fails only for a thread that was already joined, which the pool's bookkeeping rules out.
        _ = uv_thread_join(&thread)
    }

    /// Lets a thread's resources go when it returns, unjoined.
    static func detach(_ thread: uv_thread_t) {
        _ = pthread_detach(thread)
    }

    /// Sets the calling thread's nice value to the lowest priority, 19. On Linux a thread's
    /// nice value is its own (`setpriority` of its thread ID), and threads it starts inherit it.
    static func lowerCurrentPriority() {
        #if os(Linux)
            _ = uv_os_setpriority(tern_current_thread_id(), UV_PRIORITY_LOW)
        #endif
    }

    /// How far below the thread that started it `yieldToCreator` puts a thread: nice +10
    /// weighs a tenth of the starting thread's share of a core it contends for.
    static let belowCreator: Int32 = 10

    /// Lowers the calling thread's nice value `belowCreator` steps below the one it inherited
    /// from the thread that started it (at most to 19): that thread then runs whenever it can,
    /// and this one on what it leaves. Best effort, as `lowerCurrentPriority`.
    static func yieldToCreator() {
        #if os(Linux)
            let thread = tern_current_thread_id()
            var inherited: Int32 = 0
            guard uv_os_getpriority(thread, &inherited) == 0 else { return }
            _ = uv_os_setpriority(thread, min(UV_PRIORITY_LOW, inherited + belowCreator))
        #endif
    }

    /// The loop a worker thread runs: set up its worker, then run jobs until the pool stops.
    static func serve<Worker>(
        index: Int,
        channel: PoolChannel<Worker>,
        makeWorker: @Sendable (Int) throws -> Worker
    ) {
        var worker: Worker?
        var setupError: (any Error)?
        do {
            worker = try makeWorker(index)
        } catch {
            setupError = error
        }
        while let job = channel.nextJob() {
            let outcome: ErasedOutcome
            if var current = worker {
                worker = nil  // keep a class-backed worker uniquely referenced while the job runs
                do {
                    outcome = .success(try job.body(&current, job.context))
                } catch {
                    outcome = .failure(error)
                }
                worker = current
            } else {
                outcome = .failure(setupError ?? UVError(code: UV_EINVAL.rawValue, operation: "worker setup"))
            }
            channel.finish(job.context.id, outcome)
        }
        worker = nil  // release the worker (its connections) on its own thread
        channel.workerExited()
    }
}
