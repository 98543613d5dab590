import CLibUV

/// What the loop thread and the worker threads of one pool share: jobs handed to workers, and
/// outcomes on their way back.
///
/// `@unchecked Sendable`: every mutable field is read and written only with `lock` held.
final class PoolChannel<Worker>: @unchecked Sendable {
    private let lock = ConditionLock()
    private let wakeup: AsyncWakeup.Sender
    private var queued: [Job<Worker>] = []
    private var finished: [(JobID, ErasedOutcome)] = []
    private var stopping = false
    private var exitedWorkers = 0

    init(wakeup: AsyncWakeup.Sender) {
        self.wakeup = wakeup
    }

    // MARK: Loop thread

    func enqueue(_ job: Job<Worker>) {
        lock.withLock {
            queued.append(job)
            lock.broadcast()
        }
    }

    /// Takes a job back if no worker has started it yet.
    func withdraw(_ id: JobID) -> Bool {
        lock.withLock {
            guard let index = queued.firstIndex(where: { $0.context.id == id }) else { return false }
            queued.remove(at: index)
            return true
        }
    }

    /// Takes back every job no worker has started yet.
    func withdrawAll() -> [JobID] {
        lock.withLock {
            defer { queued.removeAll() }
            return queued.map(\.context.id)
        }
    }

    /// Outcomes that arrived since the last call, and how many workers have exited.
    func collect() -> (outcomes: [(JobID, ErasedOutcome)], exitedWorkers: Int) {
        lock.withLock {
            defer { finished.removeAll(keepingCapacity: true) }
            return (finished, exitedWorkers)
        }
    }

    /// Tells idle workers to exit once the queue is empty.
    func stop() {
        lock.withLock {
            stopping = true
            lock.broadcast()
        }
    }

    // MARK: Worker threads

    /// Blocks until there is a job, or returns nil when the pool stops.
    func nextJob() -> Job<Worker>? {
        lock.withLock {
            while queued.isEmpty && !stopping {
                lock.wait()
            }
            return queued.isEmpty ? nil : queued.removeFirst()
        }
    }

    func finish(_ id: JobID, _ outcome: ErasedOutcome) {
        lock.withLock { finished.append((id, outcome)) }
        wakeup.send()
    }

    func workerExited() {
        lock.withLock { exitedWorkers += 1 }
        wakeup.send()
    }
}
