import Foundation
import TernModel
import TernStore
import TernMapping
import Synchronization
import TernLoop
import TernPlanning
import TernDurability
import TernExecution

extension StoreMigration {
    /// Runs the plan without blocking the caller: the migration runs on a thread of its own (its
    /// event loop and writer block while they work), and the caller's task awaits the report.
    ///
    /// Cancelling the awaiting task stops the run at its next batch boundary, or inside a long
    /// statement (copying a store, verification, index builds), and throws a `TernFailure` of
    /// kind `.interrupted` once the work so far is saved: running the same plan again with
    /// `resume: true` continues it. The original store is untouched either way.
    ///
    /// - Throws: `TernFailure`, whatever stopped the run.
    public func run(_ plan: Plan, output: String? = nil, resume: Bool = false) async throws -> Report {
        try await start(plan, output: output, resume: resume).report
    }

    /// Starts running the plan on a thread of its own, and returns at once: watch the run's
    /// `events`, then await its `report`.
    public func start(_ plan: Plan, output: String? = nil, resume: Bool = false) -> RunningMigration {
        RunningMigration(self, plan: plan, output: output, resume: resume)
    }
}

/// A migration running on its own thread: what it reports as it goes, and how it ends.
///
/// ```swift
/// let running = migration.start(plan, output: "/data/Books-v5.sqlite")
/// for await event in running.events { print(event) }
/// let report = try await running.report
/// ```
public final class RunningMigration: Sendable {
    /// The run's events as they happen (the ones `tern migrate --progress json` prints); the
    /// sequence ends when the run does; read it from one task only. Events wait here until read,
    /// at most `bufferedEvents` of them (a few per committed batch): a reader that falls further
    /// behind loses the oldest, and sees the latest and the end; `report` is the whole account.
    public let events: AsyncStream<MigrationEvent>

    /// The most unread events `events` keeps: about a megabyte.
    public static let bufferedEvents = 10_000
    private let stopRequested = Atomic<Bool>(false)
    private let outcome = Mutex<Outcome>(.running(waiting: []))

    private enum Outcome {
        case running(waiting: [CheckedContinuation<StoreMigration.Report, any Error>])
        case finished(Result<StoreMigration.Report, any Error>)
    }

    init(_ migration: StoreMigration, plan: MigrationPlan, output: String?, resume: Bool) {
        let (events, sink) = AsyncStream.makeStream(of: MigrationEvent.self, bufferingPolicy: .bufferingNewest(Self.bufferedEvents))
        self.events = events
        var migration = migration
        let userProgress = migration.options.progress
        let userStop = migration.options.shouldStop
        migration.options.progress = { event in
            userProgress?(event)
            sink.yield(event)
        }
        migration.options.shouldStop = { [unowned self] in stopRequested.load(ordering: .relaxed) || userStop() }
        let configured = migration
        // Task-local values do not cross onto a thread: the run's wording goes with it by hand.
        let wording = RecoveryWording.current
        do {
            // Detached: the run ends itself, and nothing waits for its thread, only for its report.
            try OSThread { [self] in
                let result = RecoveryWording.$current.withValue(wording) {
                    Result { try configured.runBlocking(plan, output: output, resume: resume) }
                }
                sink.finish()
                finish(with: result)
            }.detach()
        } catch {
            sink.finish()
            finish(with: .failure(error))
        }
    }

    /// Asks the run to stop at its next batch boundary (or inside the statement it is running);
    /// `report` then throws a `TernFailure` of kind `.interrupted`, with the work so far saved
    /// for a resume.
    public func cancel() {
        stopRequested.store(true, ordering: .relaxed)
    }

    /// Whether `cancel()` was called (or the task awaiting `report` was cancelled).
    public var isCancelled: Bool { stopRequested.load(ordering: .relaxed) }

    /// The run's report, once it has finished; throws a `TernFailure` saying what stopped it.
    /// Cancelling the task that awaits it cancels the run.
    public var report: StoreMigration.Report {
        get async throws {
            try await TernFailure.wrapping { try await awaitReport() }
        }
    }

    private func awaitReport() async throws -> StoreMigration.Report {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let finished: Result<StoreMigration.Report, any Error>? = outcome.withLock { outcome in
                    switch outcome {
                    case .finished(let result):
                        return result
                    case .running(var waiting):
                        waiting.append(continuation)
                        outcome = .running(waiting: waiting)
                        return nil
                    }
                }
                if let finished { continuation.resume(with: finished) }
            }
        } onCancel: {
            cancel()
        }
    }

    private func finish(with result: Result<StoreMigration.Report, any Error>) {
        let waiting = outcome.withLock { outcome in
            guard case .running(let waiting) = outcome else { return [CheckedContinuation<StoreMigration.Report, any Error>]() }
            outcome = .finished(result)
            return waiting
        }
        for continuation in waiting { continuation.resume(with: result) }
    }
}

/// The step and pass a run is in, followed from its events, to say where a failure happened.
final class RunPlace: Sendable {
    private let place = Mutex<(step: StepIdentity?, pass: Int?)>((nil, nil))

    /// `progress`, noting each event here first.
    func observing(_ progress: (@Sendable (MigrationEvent) -> Void)?) -> @Sendable (MigrationEvent) -> Void {
        { [self] event in
            note(event)
            progress?(event)
        }
    }

    private func note(_ event: MigrationEvent) {
        switch event {
        case .stepStarted(_, _, _, let source, let destination): place.withLock { $0 = (StepIdentity(source: source, destination: destination), nil) }
        case .passStarted(let pass, _, _), .batchCommitted(_, let pass, _, _, _), .entityMappingFinished(_, let pass, _): place.withLock { $0.pass = pass }
        case .stepStage, .stepFinished: place.withLock { $0.pass = nil }
        case .started, .passFinished: break
        }
    }

    /// `error` as a `TernFailure` of the step and pass the run was in.
    func failure(_ error: any Error) -> TernFailure {
        let (step, pass) = place.withLock { $0 }
        return TernFailure(error, step: step, pass: pass)
    }
}
