import Foundation
import TernMapping
import TernModel
import TernStore
import TernPlanning
import TernDurability
import TernExecution

/// A run's record, before any step runs: for a new run, made after the checks that come before
/// anything is written (the store is the one planned), and written once the source's reads of
/// every row end (`StartChecks`: it refers to no missing file, no rows Core Data never writes,
/// its digest), perhaps beside the first pass; for a resume, taken up after checking that the store,
/// the model and the mappings are what it recorded — and then its recorded plan is what runs.
struct RunStart {
    var run: MigrationRun
    /// The plan that runs: the one given, or for a resume the one the record holds.
    var plan: MigrationPlan
    var stepPlans: [StepPlan]
    /// Where the record is kept (`MigrationRun.path(for:)`).
    var manifestPath: String
    /// Where the original goes, in place; nil with an output path.
    var backup: String?
    /// Time spent waiting for the source's content digest.
    var checkingSource: Duration
    /// A new run's checks of its source, still reading beside the first pass: its record is
    /// written once they end (`StartChecks`).
    var pendingChecks: StartChecks?

    static func open(
        _ migration: StoreMigration, plan given: MigrationPlan, store: String, output: String?, finalPath: String, resume: Bool,
        registry: PolicyRegistry
    ) throws -> RunStart {
        var plan = given
        var stepPlans = try plan.stepPlans(checkedAgainst: registry, path: nil)
        let manifestPath = MigrationRun.path(for: finalPath)
        let backup = output == nil ? StoreMigration.backupPath(for: store) : nil
        var checkingSource = Duration.zero
        /// The inputs, with the source's digest `known` or read now.
        func inputs(known: StoreDigest? = nil) throws -> MigrationRun.Inputs {
            let reading = ContinuousClock.now
            defer { checkingSource += ContinuousClock.now - reading }
            return MigrationRun.Inputs.of(source: try known ?? migration.digest(of: store), plan: plan)
        }

        var run: MigrationRun
        var pending: StartChecks?
        var found = try resume ? MigrationRun.loadForResume(at: manifestPath) : MigrationRun.load(at: manifestPath)
        if let stale = found, resume, stale.store == store, stale.sourcePending == true, stale.completed > 0 || !Self.untouched(stale, store: store) {
            // Stopped before its start checks ended, on a source that may have changed since:
            // what it wrote cannot be trusted.
            migration.logger.notice("the run stopped before it had read its source, which may have changed since: starting over")
            for file in stale.stepFiles { StoreFiles.removeStepStore(file) }
            try? FileManager.default.removeItem(atPath: manifestPath)
            found = nil
        }
        if let existing = found {
            guard resume else { throw MigrationError.unfinished(existing, manifest: manifestPath) }
            guard existing.store == store else {
                throw MigrationError.resumeMismatch(
                    existing, manifest: manifestPath,
                    differences: [
                        "it migrates another source, \(existing.store), into \(finalPath) (resume it with that store)"
                    ])
            }
            guard existing.steps == plan.steps.map(\.identity), let recorded = existing.inputs else {
                throw MigrationError.resumeMismatch(
                    existing, manifest: manifestPath, differences: ["the steps (then \(existing.steps.map(\.description).joined(separator: ", ")))"])
            }
            // The very file the run began with, written by no one since: its digest is the one
            // recorded (a million objects: 0.5 s not read again).
            let unchanged = Self.untouched(existing, store: store)
            if unchanged, existing.sourcePending != true {
                migration.logger.info("the source is the file the run began with, unchanged: its digest is the one recorded")
            }
            // Recorded by a Tern that hashes content otherwise, on the very file: its digest is
            // read again with this Tern's hash, and recorded so from now on.
            let rehashed = unchanged && existing.sourcePending != true && !recorded.source.takenWithCurrentHash
            let current = try inputs(known: unchanged && !rehashed ? recorded.source : nil)
            var compared = recorded
            if rehashed {
                // Read as the file it began with only if no one wrote it while it was read.
                guard Self.untouched(existing, store: store) else {
                    throw MigrationError.resumeMismatch(
                        existing, manifest: manifestPath,
                        differences: ["the source was written while its digest was read again with this Tern's hash, so whether it changed is not known"])
                }
                compared.source = current.source
            }
            var differences = current.differences(from: compared)
            // A record an earlier Tern wrote, before plans held their decisions: that Tern decided
            // them as the run began, with the policies it ran with, which the inputs above showed
            // unchanged; decided so once here, and recorded with the run from now on.
            var recordedPlan = existing.plan
            if var old = recordedPlan, old.stepPlans == nil {
                for index in old.steps.indices { old.steps[index].decide(with: registry) }
                recordedPlan = old
            }
            // The whole plan, compared field by field: what the named inputs leave out decides
            // the store as much (a step copied rather than changed in place, keys kept).
            if differences.isEmpty, let recordedPlan {
                differences = try plan.differences(from: recordedPlan)
            }
            guard differences.isEmpty else { throw MigrationError.resumeMismatch(existing, manifest: manifestPath, differences: differences) }
            // The same plan: the run goes on with the one it recorded (its instant of `now()`).
            if let recordedPlan {
                plan = recordedPlan
                stepPlans = try plan.stepPlans(checkedAgainst: registry, path: manifestPath)
            }
            // The digest equals the one taken when the record was made, after the scan for rows
            // Core Data never writes found none: the scan would find none again.
            // A file the source refers to may have gone since: say so, and keep the work.
            try migration.checkExternalData(plan, tolerating: Set(existing.absentExternalFiles ?? []))
            // What the run began carrying, --strict refuses on a resume too.
            if migration.options.refuseDataLoss, let tolerated = existing.tolerated, !tolerated.isEmpty {
                throw TernError(
                    .badInput,
                    "the run began without --strict and carries what Core Data reads past, which --strict refuses:\n"
                        + tolerated.map { "  - \($0)" }.joined(separator: "\n"), path: store)
            }
            run = existing
            if rehashed {
                run.inputs?.source = current.source
                try run.save(at: manifestPath)
            }
            if existing.sourcePending == true {
                // Stopped before its start checks ended, on the very file it began with, written
                // by no one since: they read again, beside the first pass where a new run's would.
                let overlapping = migration.options.workers > 1 && stepPlans.first?.inPlace == nil
                let checks = try StartChecks(
                    plan: plan, store: store, options: migration.options, logger: migration.logger, run: existing, manifestPath: manifestPath,
                    overlappingWith: overlapping ? SourceCommits(store: store, inPlace: false, clock: migration.options.wallClock) : nil)
                if checks.overlapping {
                    pending = checks
                } else {
                    do {
                        try checks.settle()
                    } catch let error where !FailureKind.isResumable(error) {
                        // Rows Core Data never writes: the run cannot succeed, as it would have found.
                        for file in existing.stepFiles { StoreFiles.removeStepStore(file) }
                        try? FileManager.default.removeItem(atPath: manifestPath)
                        throw error
                    }
                    checkingSource += checks.waited
                    run = checks.run
                }
            }
            migration.logger.info("resuming", metadata: ["completedSteps": "\(run.completed)", "steps": "\(run.steps.count)"])
        } else {
            if let output, FileManager.default.fileExists(atPath: output) {
                // Killed after the record was removed? Say so, but never take the store as ours.
                if resume, (try? StoreMetadata.read(storeAt: output, countingRows: false))?.migratedFrom == (try inputs()).fingerprint {
                    throw MigrationError.finishedEarlier(output)
                }
                throw MigrationError.destinationExists(output)
            }
            // A backup's stale -wal would be read into the backup made here; a support folder
            // already there would mix someone else's files with the ones carried here.
            let inTheWay = [backup, backup.map { $0 + "-wal" }, backup.map(ExternalBinaryData.supportFolder), output.map(ExternalBinaryData.supportFolder)]
            for file in inTheWay.compactMap({ $0 }) where StoreFiles.exists(file) {
                throw MigrationError.destinationExists(file)
            }
            try migration.checkPlanned(plan, store: store)
            // Before the first pass, which may decode the values whose files are gone.
            let absent = try migration.absentExternalData(plan)
            var record = MigrationRun(
                inputs: .of(source: .unread, plan: plan), store: store, output: output, target: plan.targetVersion,
                steps: plan.steps.map(\.identity),
                stepFiles: plan.steps.indices.map { MigrationRun.stepFile(for: finalPath, index: $0 + 1) }, completed: 0, plan: plan)
            if !absent.files.isEmpty {
                record.absentExternalFiles = absent.files.sorted()
                record.tolerated = absent.anomalies.map(\.description)
            }
            for file in record.stepFiles { StoreFiles.removeStepStore(file) }  // leftovers of a run whose record is gone
            // Beside the first pass when a second worker is free for them and every commit from
            // now on would be seen; an in-place first step changes a copy at once instead.
            let overlapping = migration.options.workers > 1 && stepPlans.first?.inPlace == nil
            let checks = try StartChecks(
                plan: plan, store: store, options: migration.options, logger: migration.logger, run: record, manifestPath: manifestPath,
                overlappingWith: overlapping ? SourceCommits(store: store, inPlace: false, clock: migration.options.wallClock) : nil)
            if !checks.overlapping {
                try checks.settle()
                checkingSource += checks.waited
            }
            run = checks.run
            pending = checks.settled ? nil : checks
        }

        return RunStart(
            run: run, plan: plan, stepPlans: stepPlans, manifestPath: manifestPath, backup: backup, checkingSource: checkingSource, pendingChecks: pending)
    }

    /// Whether the source is the file `run` recorded when it began, unwritten since: the same
    /// file, size and times, and no `-wal` frames.
    static func untouched(_ run: MigrationRun, store: String) -> Bool {
        run.sourceFile.map { StoreFileState(of: store) == $0 && StoreFileState.hasNoWALFrames(store) } ?? false
    }
}
