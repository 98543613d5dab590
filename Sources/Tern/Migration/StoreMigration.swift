import Foundation
import TernModel
import TernStore
import TernMapping
import Logging
import TernSQLite
import TernPlanning
import TernDurability
import TernExecution

/// The default migration process: find the store's version, the chain to the target version,
/// migrate through temporary stores beside the original, verify, and only then put the result
/// in place.
///
/// ```swift
/// let migration = StoreMigration(store: "/data/Books.sqlite", model: try ModelLoader.load("MyApp.app"))
/// let plan = try migration.plan()  // refuses here a mapping naming an unregistered policy
/// let report = try await migration.run(plan, output: "/data/Books-migrated.sqlite")
/// ```
public struct StoreMigration: Sendable {
    /// What a run will do (`MigrationPlan`).
    public typealias Plan = MigrationPlan

    /// What a finished run did.
    public struct Report: Sendable {
        /// The plan it ran.
        public let plan: Plan
        /// One report per step this run ran (not those an interrupted run had finished).
        public var steps: [StepReport]
        /// Where the migrated store is.
        public var destination: String
        /// Where the original was kept, for an in-place migration (nil with an output path).
        public var backup: String?
        /// The run's wall time.
        public var duration: Duration
        /// Time the run waited for its source's checks: the scan for rows Core Data never writes
        /// and the content digest (`StoreDigest`) at the start — beside the first pass, only
        /// what outlasts it — and the digest at delivery.
        public var checkingSource: Duration = .zero
        /// What the source holds that Core Data reads all the same (`StoreAnomaly.isTolerated`):
        /// carried as it is (a value), or dropped as Core Data drops it (a link to no object).
        public var tolerated: [String] = []
    }

    /// The store to migrate, as given (a symbolic link is followed when the run starts).
    public let store: String
    /// The versioned model the store's version and the target are found in.
    public let model: VersionedModel
    /// How the run goes: batch size, workers, policies, progress, cancellation.
    public var options: MigrationOptions
    /// Where the run logs (the library never sets up a log handler).
    public var logger: Logger

    /// A migration of `store` through the versions of `model`; nothing is read until `plan`.
    public init(store: String, model: VersionedModel, options: MigrationOptions = MigrationOptions(), logger: Logger = .ternDefault) {
        self.store = store
        self.model = model
        self.options = options
        self.logger = logger
    }

    /// The policies this migration may use: the options', less Tern's examples for other
    /// models (`PolicyRegistry.forModel(at:)`).
    var registry: PolicyRegistry { options.registry.forModel(at: model.path) }

    /// Reads the store's version and works out the steps to `target` (default: the current
    /// version).
    ///
    /// - Throws: `TernFailure` when no version wrote the store, a step has no mapping, or a mapping
    ///   names a policy the registry does not hold (its `underlying` error says which).
    /// - Parameters:
    ///   - target: the version to migrate to (default: the model's current version).
    ///   - extra: mapping files that replace, for the steps they cover, those found beside the model.
    ///   - models: mapping models built in memory (naming their source and destination versions),
    ///     which replace files for the steps they cover.
    ///   - appleHashes: Core Data's version hashes per version (`VersionInfo.plist`), to recognise
    ///     a store Core Data wrote.
    public func plan(
        to target: String? = nil, mappingFiles extra: [String] = [], mappings models: [MappingModel] = [],
        appleHashes: [String: [String: String]] = [:]
    ) throws -> Plan {
        try TernFailure.wrapping { try makePlan(to: target, mappingFiles: extra, mappings: models, appleHashes: appleHashes) }
    }

    /// Runs the plan on the calling thread, blocking it until the run ends (its event loop runs
    /// there): for a command-line program's main thread. `run(_:output:resume:) async` runs it
    /// on a thread of its own, and is what `try await` finds: the two have different names so
    /// that an `await` can never block its task's thread.
    ///
    /// With `output`, the migrated store is written there and the original left alone; otherwise
    /// the original is kept as `NAME~.sqlite` and the migrated store takes its place, but only
    /// once it is complete and verified. Progress is recorded as it goes (see `MigrationRun`):
    /// after a crash or an interruption, running again with `resume` continues exactly where it
    /// stopped. Without `resume`, an unfinished migration is reported rather than silently
    /// continued or overwritten.
    ///
    /// - Throws: `TernFailure`, with the step and pass it happened in.
    public func runBlocking(_ plan: Plan, output: String? = nil, resume: Bool = false) throws -> Report {
        let place = RunPlace()
        var migration = self
        migration.options.progress = place.observing(options.progress)
        do {
            return try migration.execute(plan, output: output, resume: resume)
        } catch {
            throw place.failure(error)
        }
    }

    /// The run itself, throwing what Tern's layers throw; `runBlocking` and the async `run` say
    /// where it happened. Its parts, in order: own the store (`StoreOwnership`), record the run
    /// or take up the recorded one (`RunStart`), run the steps (`StepSequence`), finish the last
    /// step's store and deliver it (`StoreMigration+Delivery`); verification runs inside each step.
    func execute(_ plan: Plan, output: String?, resume: Bool) throws -> Report {
        var options = options
        options.registry = registry
        let started = ContinuousClock.now
        // A link to the store: migrate the real file, keep the backup beside it, and the link
        // then leads to the migrated store.
        let store = StoreFile.resolvingLinks(self.store)
        guard !plan.steps.isEmpty else {
            // The store is at its target. A run killed right after its swap left its record.
            try Self.removeFinishedRecord(for: output ?? store)
            return Report(plan: plan, steps: [], destination: store, backup: nil, duration: ContinuousClock.now - started)
        }
        if let output { try Self.checkOutputPlace(output) }
        let finalPath = output ?? store
        let ownership = try StoreOwnership(store: store, finalPath: finalPath, inPlace: output == nil, clock: options.wallClock)
        defer { ownership.release() }
        var start = try RunStart.open(self, plan: plan, store: store, output: output, finalPath: finalPath, resume: resume, registry: options.registry)
        let plan = start.plan
        var reports: [StepReport] = []
        let manifestPath = start.manifestPath
        // Made inside the `do`: once the record exists, a failure reading the source here is
        // handled as any later one.
        var steps: StepSequence?
        var run: MigrationRun { steps?.run ?? start.run }
        do {
            let sequence = try StepSequence(
                plan: plan, stepPlans: start.stepPlans, store: store, run: start.run, manifestPath: start.manifestPath, options: options, logger: logger,
                startChecks: start.pendingChecks)
            steps = sequence
            options.progress?(
                .started(
                    MigrationOutline(
                        steps: plan.steps.map(\.identity), inPlace: start.stepPlans.map { $0.inPlace != nil },
                        completedSteps: start.run.completed, objects: sequence.sourceObjects)))
            for index in start.run.completed..<plan.steps.count {
                reports.append(try steps!.run(index))
            }
            start.checkingSource += start.pendingChecks?.waited ?? .zero
            let final = run.stepFiles[plan.steps.count - 1]
            if FileManager.default.fileExists(atPath: final) {
                try Self.finishLastStore(final, plan: plan, run: run, source: store)
                start.checkingSource += try deliver(
                    final, at: plan.steps[plan.steps.count - 1].destination, from: store, to: finalPath, keepingOriginalAt: start.backup,
                    externalData: Self.externalData(of: run, from: store, step: plan.steps.count - 1), recorded: run.inputs?.source,
                    users: ownership.users, commits: ownership.commits)
            }
            for file in run.stepFiles { StoreFiles.removeStepStore(file) }
            // Otherwise the rename happened before a crash: the migrated store is already in place.
            try? FileManager.default.removeItem(atPath: manifestPath)
        } catch let error where FailureKind.isResumable(error) && start.pendingChecks.map({ !$0.settled && !$0.resumable }) == true {
            // Stopped before the start checks ended, on a source no resume could prove untouched
            // since (`StartChecks`): nothing to resume from.
            for file in run.stepFiles { StoreFiles.removeStepStore(file) }
            try? FileManager.default.removeItem(atPath: manifestPath)
            throw error is MigrationInterrupted ? MigrationInterrupted(saved: false) : error
        } catch let error where FailureKind.isResumable(error) {
            if Self.isDiskFull(error) { throw Self.diskFull(beside: finalPath, kept: [manifestPath] + run.stepFiles, source: store) }
            // The disk or a lock failed: the message says what is kept and how to go on.
            if error is SQLiteError || error is TernError { throw MigrationError.stoppedResumably(cause: error, record: manifestPath) }
            throw error
        } catch {
            // Running again cannot help (invalid data, a bad mapping): leave nothing behind.
            Self.removeCarriedFiles(into: finalPath, output: output, source: store, stepFiles: run.stepFiles)
            for file in run.stepFiles { StoreFiles.removeStepStore(file) }
            try? FileManager.default.removeItem(atPath: manifestPath)
            throw changeBehind(error, store: store, recorded: run.inputs?.source, commits: ownership.commits) ?? error
        }
        var report = Report(
            plan: plan, steps: reports, destination: finalPath, backup: start.backup, duration: ContinuousClock.now - started,
            checkingSource: start.checkingSource)
        report.tolerated = run.tolerated ?? []
        return report
    }

}
