import Foundation
import Logging
import Synchronization
import TernLoop
import TernStore
import TernPlanning
import TernDurability

/// A new run's reads of its whole source before its record is complete: its references to
/// external files (each must be there), the scan for rows Core Data never writes
/// (`StoreAnomalies`: keys and references, then each row's checks counted in the next scan)
/// and the content digest the record holds (`StoreDigest`), which reads every row once.
/// Together about a second and a half per four million objects on one core — while the first
/// pass's SQL writer keeps a single core busy. So, when the run has a second worker and
/// can see every commit to the source (`SourceCommits`), they read on a thread of their own
/// beside the first pass, and the digest joins the record at the first batch boundary after
/// they end.
///
/// The record is written at once, the digest marked pending (`MigrationRun.sourcePending`),
/// with the source file's state when it had been still: a run killed before the checks end
/// resumes if the source is that file, unchanged (no commit can have happened), and starts over
/// otherwise. A commit to the source between the start and the digest's end refuses the run,
/// since the pass may have read the source before it and the digest after. A store with rows
/// Core Data never writes is refused as before; what the pass wrote meanwhile is discarded.
package final class StartChecks {
    /// What the checks found: the digest, and whether no one committed from before the first
    /// pass began until it was read.
    private struct Outcome: Sendable {
        var digest: StoreDigest
        var unchanged: Bool
        /// What Core Data reads all the same, which the run carries and reports.
        var tolerated: [StoreAnomaly]
    }

    /// What the checking thread hands over: its outcome, once it has one.
    private final class Shared: Sendable {
        let outcome = Mutex<Result<Outcome, any Error>?>(nil)
        let cancelled = Atomic<Bool>(false)
    }

    private let shared = Shared()
    private var thread: OSThread?
    /// Opened when the checks end, however they end.
    private let ending = Latch()
    private let store: String
    private let manifestPath: String
    /// The source file before its digest was read, when it had been still with no `-wal` frames.
    private let stillFile: StoreFileState?
    /// The run's record, written once the checks have passed.
    package private(set) var run: MigrationRun
    /// Whether the run goes on while they read (else it waits for them at once).
    package let overlapping: Bool
    /// Where the checks wait while the pass needs every core (a policy's workers beside the writer).
    let gate = CoreGate()
    /// Whether the record has been written.
    package private(set) var settled = false
    /// How long the run waited for the checks: all of their time when they do not overlap.
    package private(set) var waited = Duration.zero

    /// Starts the checks for `run`, whose inputs lack only the source's digest (the files the
    /// source refers to are checked before, by `RunStart`, since a pass may decode them). With `commits`,
    /// evidence taken before the first pass begins, the caller goes on meanwhile: the record is
    /// written now, its digest pending, and they read on one worker fewer, leaving the writer
    /// its core.
    package init(
        plan: MigrationPlan, store: String, options: MigrationOptions, logger: Logger, run: MigrationRun, manifestPath: String,
        overlappingWith commits: consuming sending SourceCommits?
    ) throws {
        self.store = store
        self.run = run
        self.manifestPath = manifestPath
        let file = StoreFileState(of: store)
        stillFile = file?.isStill(by: options.wallClock) == true && StoreFileState.hasNoWALFrames(store) ? file : nil
        // Opened before the record is written: a source that cannot be read leaves no record.
        let source = try ReadOnlyStore(path: store)
        if commits != nil {
            self.run.sourcePending = true
            self.run.sourceFile = stillFile
            try self.run.save(at: manifestPath)
        }
        let first = plan.steps.first
        let shared = self.shared
        overlapping = commits != nil
        let besideThePass = overlapping
        let workers = overlapping ? max(1, options.workers - 1) : options.workers
        let stopNow: @Sendable () -> Bool = { options.shouldStop() || shared.cancelled.load(ordering: .relaxed) }
        let gate = self.gate
        let shouldStop: @Sendable () -> Bool = {
            gate.pass(unless: stopNow)
            return stopNow()
        }
        let evidence = Mutex(commits)
        let ending = self.ending
        thread = try OSThread {
            defer { ending.open() }
            // Beside the pass, only the cores it leaves idle: its workers and writer come first.
            // Alone, the run waits for them at full priority.
            if besideThePass { OSThread.yieldCoresToOthers() }
            let commits = evidence.withLock { $0.take() }
            defer { commits?.close() }
            var tolerated: [StoreAnomaly] = []
            // What Core Data reads past goes on, reported; under --strict it is refused too.
            let refused = { (found: [StoreAnomaly]) in options.refuseDataLoss ? found : found.filter { !$0.isTolerated } }
            let outcome = Result<Outcome, any Error> {
                try MigrationInterrupted.whenAsked(shouldStop) {
                    if let first {
                        // Keys and references first; the checks of every row are counted in the
                        // digest's scan, which reads every row anyway.
                        let started = ContinuousClock.now
                        let found = try StoreAnomalies.find(
                            in: source.attachPath, model: first.source, rules: first.sourceRules, workers: workers, rowsFlagged: [], shouldStop: shouldStop)
                        logger.debug(
                            "scanned the source's keys and references for rows Core Data never writes",
                            metadata: ["seconds": "\((ContinuousClock.now - started).seconds)", "found": "\(found.count)"])
                        tolerated = found.filter(\.isTolerated)
                        guard refused(found).isEmpty else {
                            // Every row is checked too, so the refusal names all there is.
                            throw MigrationError.sourceAnomalies(
                                try StoreAnomalies.find(
                                    in: source.attachPath, model: first.source, rules: first.sourceRules, workers: workers, shouldStop: shouldStop),
                                store: store)
                        }
                    }
                    options.reached?(.readingStartDigest)
                    let started = ContinuousClock.now
                    let (digest, flagged) = try StoreDigest.read(
                        storeAt: source.attachPath, workers: workers,
                        countingRowsWhere: first.map { StoreAnomalies.rowConditions(of: $0.source, rules: $0.sourceRules) } ?? [:], shouldStop: shouldStop)
                    logger.info(
                        "read the source's digest", metadata: ["seconds": "\((ContinuousClock.now - started).seconds)", "tables": "\(digest.tables.count)"])
                    if let first, !flagged.isEmpty {
                        // Counted by kind and with a first key, in the tables where some were.
                        let anomalies = try StoreAnomalies.find(
                            in: source.attachPath, model: first.source, rules: first.sourceRules, workers: workers, rowsFlagged: flagged,
                            shouldStop: shouldStop)
                        guard !anomalies.isEmpty else {
                            // Counted in one read, not in the next: the source moved between them.
                            throw MigrationError.changedDuringMigration(
                                store: store, changes: ["rows changed while the run read its content at the start, so what it migrated is not known"])
                        }
                        tolerated += anomalies.filter { $0.isTolerated && !tolerated.contains($0) }
                        if !refused(anomalies).isEmpty { throw MigrationError.sourceAnomalies(anomalies, store: store) }
                    }
                    return Outcome(digest: digest, unchanged: commits?.noneSinceStart(store: store) ?? true, tolerated: tolerated)
                }
            }
            shared.outcome.withLock { $0 = outcome }
            options.reached?(.startChecksEnded)
        }
    }

    deinit { cancel() }

    /// Returns once the checks have ended, on any thread: work that waits for their core.
    var waitForEnd: @Sendable () -> Void {
        { [ending] in ending.wait() }
    }

    /// Writes the record if the checks have ended, without waiting: for batch boundaries.
    func settleIfEnded() throws {
        if !settled, shared.outcome.withLock({ $0 != nil }) { try settle() }
    }

    /// Waits for the checks, throws what they found, and writes the run's record. Does nothing
    /// the second time.
    package func settle() throws {
        guard !settled else { return }
        settled = true
        let waiting = ContinuousClock.now
        thread.take()?.join()
        waited += ContinuousClock.now - waiting
        let outcome = try shared.outcome.withLock { $0! }.get()
        // Read beside the pass, the digest is the content the pass read only if no one committed
        // from before the pass began until the digest's end.
        guard outcome.unchanged else {
            throw MigrationError.changedDuringMigration(
                store: store, changes: ["a commit landed while the run read its content at the start, so what it migrated is not known"])
        }
        run.inputs?.source = outcome.digest
        run.sourcePending = nil
        let tolerated = (run.tolerated ?? []) + outcome.tolerated.map(\.description)
        run.tolerated = tolerated.isEmpty ? nil : tolerated
        // Evidence only if nothing moved while the digest was read.
        let unmoved = stillFile != nil && StoreFileState(of: store) == stillFile && StoreFileState.hasNoWALFrames(store)
        run.sourceFile = unmoved ? stillFile : nil
        try run.save(at: manifestPath)
    }

    /// Whether a run stopped before the checks end can be resumed: the source file had been
    /// still, and a resume that finds it so again knows no commit happened.
    package var resumable: Bool { stillFile != nil }

    /// What the checks found wrong, once they end: when a pass fails before they did, a store
    /// with rows Core Data never writes is the cause to report. Nil when they found nothing.
    package func failure() -> (any Error)? {
        thread.take()?.join()
        guard case .failure(let error)? = shared.outcome.withLock({ $0 }), !(error is MigrationInterrupted) else { return nil }
        return error
    }

    /// Stops the checks and waits for their thread: the run ends without them.
    func cancel() {
        shared.cancelled.store(true, ordering: .relaxed)
        thread.take()?.join()
    }
}
