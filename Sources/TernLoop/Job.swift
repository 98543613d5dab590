import Synchronization

/// Identifies a job submitted to a `WorkerPool`.
public struct JobID: Hashable, Sendable, CustomStringConvertible {
    let value: UInt64
    public var description: String { "job \(value)" }
}

/// How a job ended, delivered on the loop thread.
public enum JobResult<Output> {
    /// The job ran and returned.
    case success(Output)
    /// The job ran and threw (or its worker could not be set up).
    case failure(any Error)
    /// The job was cancelled before a worker started it; it never ran.
    case cancelled
}

/// What a running job can ask about itself.
public final class JobContext: Sendable {
    /// The job this context belongs to, as `WorkerPool.submit` returned it.
    public let id: JobID
    private let cancelled = Atomic<Bool>(false)

    init(id: JobID) {
        self.id = id
    }

    /// True once `cancel` was called for this job while it ran: a long job checks it between
    /// units of work and stops early (throwing `CancellationError` is the convention).
    public var isCancelled: Bool {
        cancelled.load(ordering: .acquiring)
    }

    func cancel() {
        cancelled.store(true, ordering: .releasing)
    }
}

/// A job's outcome with its output type erased, for the trip from a worker to the loop thread.
enum ErasedOutcome: Sendable {
    case success(any Sendable)
    case failure(any Error)
    case cancelled
}

/// A submitted job as the workers see it.
final class Job<Worker>: Sendable {
    let context: JobContext
    let body: @Sendable (inout Worker, JobContext) throws -> any Sendable

    init(context: JobContext, body: @escaping @Sendable (inout Worker, JobContext) throws -> any Sendable) {
        self.context = context
        self.body = body
    }
}
