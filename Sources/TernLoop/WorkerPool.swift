import CLibUV

/// A fixed set of worker threads that run jobs off the loop thread and deliver each job's result
/// back on the loop thread.
///
/// - Each worker thread builds its own `Worker` (say, a read-only SQLite connection) with
///   `makeWorker` and keeps it for every job it runs, so per-thread resources never cross threads.
/// - At most `maxInFlight` jobs are handed to the workers at once; later submissions wait in the
///   pool's backlog on the loop thread until a completion frees a place. `hasCapacity` says whether
///   a job would start now; a producer whose results wait after completion (to be written in
///   order) bounds its memory with its own count of results not yet consumed.
/// - The number of workers is fixed when the pool is made, before any thread starts.
/// - Completions, cancellation and shutdown happen on the loop thread; the pool is not `Sendable`.
///   Workers reach the loop thread only through `uv_async_send`.
///
/// A pool keeps its loop running, and itself alive, until `shutdown` completes.
public final class WorkerPool<Worker> {
    /// The number of worker threads, fixed when the pool was made.
    public let workerCount: Int
    /// The most jobs handed to workers at once; later ones wait in the backlog.
    public let maxInFlight: Int

    private let channel: PoolChannel<Worker>
    private let wakeup: AsyncWakeup
    private let owner: HandleOwner<WorkerPool>
    private var threads: [uv_thread_t] = []
    private var backlog: [Job<Worker>] = []
    private var handedOver: [JobID: JobContext] = [:]
    private var completions: [JobID: (ErasedOutcome) -> Void] = [:]
    private var nextJobNumber: UInt64 = 0
    private var state = State.running
    private var shutdownCompletions: [() -> Void] = []

    private enum State { case running, draining, stopping, closed }

    /// Starts `workers` threads on `loop`.
    ///
    /// - Parameters:
    ///   - loop: the loop completions are delivered on (its thread runs them).
    ///   - workers: the number of threads, at least 1.
    ///   - maxInFlight: jobs handed to workers at once, at least `workers`; default twice `workers`,
    ///     so each worker has its next job ready.
    ///   - yieldingToLoop: whether the workers run below the loop thread's priority
    ///     (`WorkerThread.yieldToCreator`): where the loop's thread does the one job that cannot
    ///     be shared — a single writer — and the workers outnumber the cores left, a worker
    ///     should never take the core the writer wants.
    ///   - makeWorker: builds one worker's state on its own thread, given its index `0..<workers`.
    ///     If it throws, every job that worker takes fails with that error.
    public init(
        loop: EventLoop,
        workers: Int,
        maxInFlight: Int? = nil,
        yieldingToLoop: Bool = false,
        makeWorker: @escaping @Sendable (Int) throws -> Worker
    ) throws {
        guard workers >= 1 else {
            throw UVError(code: UV_EINVAL.rawValue, operation: "WorkerPool", detail: "workers must be at least 1, not \(workers)")
        }
        let limit = maxInFlight ?? workers * 2
        guard limit >= workers else {
            throw UVError(code: UV_EINVAL.rawValue, operation: "WorkerPool", detail: "maxInFlight (\(limit)) must be at least workers (\(workers))")
        }
        workerCount = workers
        self.maxInFlight = limit

        // The wake-up callback needs `self`, which exists only after every stored property is set.
        let target = HandleOwner<WorkerPool>()
        wakeup = try AsyncWakeup(loop: loop) { target.object?.deliverOutcomes() }
        channel = PoolChannel(wakeup: wakeup.sender)
        owner = target
        target.object = self

        for index in 0..<workers {
            let channel = self.channel
            do {
                threads.append(
                    try WorkerThread.start {
                        if yieldingToLoop { WorkerThread.yieldToCreator() }
                        WorkerThread.serve(index: index, channel: channel, makeWorker: makeWorker)
                    })
            } catch {
                abandonStart()
                throw error
            }
        }
    }

    /// Stops the threads already started when a later one failed to start.
    private func abandonStart() {
        channel.stop()
        threads.forEach(WorkerThread.join)
        threads.removeAll()
        state = .closed
        wakeup.close { [owner] in owner.object = nil }
    }

    /// Jobs handed to workers and not yet completed.
    public var inFlightCount: Int { handedOver.count }

    /// Jobs waiting in the backlog for a place.
    public var backlogCount: Int { backlog.count }

    /// True while a new job would go straight to a worker.
    public var hasCapacity: Bool { handedOver.count < maxInFlight && backlog.isEmpty }

    /// Submits a job. `work` runs on a worker thread with that worker's state; `completion` runs
    /// later on the loop thread with the outcome.
    ///
    /// - Throws: `UVError` `ECANCELED` once `shutdown` was called.
    @discardableResult
    public func submit<Output: Sendable>(
        _ work: @escaping @Sendable (inout Worker, JobContext) throws -> Output,
        completion: @escaping (JobResult<Output>) -> Void
    ) throws -> JobID {
        guard state == .running else {
            throw UVError(code: UV_ECANCELED.rawValue, operation: "WorkerPool.submit", detail: "the pool is shutting down")
        }
        nextJobNumber += 1
        let id = JobID(value: nextJobNumber)
        completions[id] = { outcome in
            switch outcome {
            case .success(let value): completion(.success(value as! Output))
            case .failure(let error): completion(.failure(error))
            case .cancelled: completion(.cancelled)
            }
        }
        backlog.append(Job(context: JobContext(id: id)) { worker, context in try work(&worker, context) })
        handOver()
        return id
    }

    /// Cancels a job.
    ///
    /// A job that no worker has started completes with `.cancelled` before this returns and never
    /// runs. A running job is asked to stop (`JobContext.isCancelled`) and completes as it ends.
    /// A job that already completed is left alone.
    public func cancel(_ id: JobID) {
        if let index = backlog.firstIndex(where: { $0.context.id == id }) {
            backlog.remove(at: index)
            complete(id, .cancelled)
        } else if let context = handedOver[id] {
            if channel.withdraw(id) {
                handedOver[id] = nil
                complete(id, .cancelled)
                handOver()
            } else {
                context.cancel()
            }
        }
    }

    /// Cancels every job that has not completed (see `cancel`).
    public func cancelAll() {
        let waiting = backlog.map(\.context.id)
        backlog.removeAll()
        for id in waiting { complete(id, .cancelled) }
        for id in channel.withdrawAll() {
            handedOver[id] = nil
            complete(id, .cancelled)
        }
        for context in handedOver.values { context.cancel() }
        finishShutdownIfDrained()
    }

    /// Stops accepting jobs, lets every submitted job run to completion (call `cancelAll` first to
    /// drop them instead), stops and joins the worker threads, and closes the pool's loop handle.
    /// `completion` runs on the loop thread when all of that is done.
    public func shutdown(_ completion: @escaping () -> Void = {}) {
        shutdownCompletions.append(completion)
        if state == .running {
            state = .draining
        }
        finishShutdownIfDrained()
    }

    // MARK: Internals (loop thread)

    private func handOver() {
        while handedOver.count < maxInFlight, !backlog.isEmpty {
            let job = backlog.removeFirst()
            handedOver[job.context.id] = job.context
            channel.enqueue(job)
        }
    }

    private func complete(_ id: JobID, _ outcome: ErasedOutcome) {
        completions.removeValue(forKey: id)?(outcome)
    }

    /// Runs on the loop thread when workers have called `uv_async_send`.
    private func deliverOutcomes() {
        let (outcomes, exitedWorkers) = channel.collect()
        for (id, outcome) in outcomes {
            // A job withdrawn by `cancel` never reaches a worker, so every outcome here is live.
            handedOver[id] = nil
            handOver()
            complete(id, outcome)
        }
        if state == .stopping, exitedWorkers == workerCount {
            close()
        } else {
            finishShutdownIfDrained()
        }
    }

    private func finishShutdownIfDrained() {
        guard state == .draining, backlog.isEmpty, handedOver.isEmpty else { return }
        state = .stopping
        channel.stop()
    }

    private func close() {
        state = .closed
        // Every worker has returned from `serve`; joining only reaps the threads.
        threads.forEach(WorkerThread.join)
        threads.removeAll()
        let completions = shutdownCompletions
        shutdownCompletions.removeAll()
        wakeup.close { [owner] in
            owner.object = nil
            completions.forEach { $0() }
        }
    }
}

/// Lets the wake-up callback, registered during `init`, reach the pool once it exists. Its strong
/// reference keeps the pool alive while its libuv handle is open, as libuv's own handles keep their
/// loop busy; `close()` breaks the cycle.
private final class HandleOwner<Object: AnyObject> {
    var object: Object?
}
