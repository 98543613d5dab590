import Foundation
import TernModel
import TernStore
import TernSQLite
import TernPlanning
import TernDurability
@_spi(Testing) import TernExecution

extension StoreMigration {
    /// Migrates the store while other processes go on reading and writing it (`tern migrate
    /// --live`), in the phases a record beside it keeps (`LiveFiles`), each resumable:
    ///
    /// 1. **Capture**: a change log and triggers in the store, in one immediate transaction
    ///    (`LiveCapture`).
    /// 2. **Mirror**: `VACUUM INTO` a private copy, one read transaction, after the capture began.
    /// 3. **Copy**: the mirror migrated offline by the engine as it is, verified by content.
    /// 4. **Catch up**: rounds apply the log to the mirror and the migrated store
    ///    (`LiveCatchUp`); once, everything is verified again against the mirror while the app writes.
    /// 5. **Cut-over**: caught up, and every other process closed the store: under its write
    ///    lock, the last round, the objects it changed verified, the key counters and metadata
    ///    carried, and the swap as offline (`NAME~` kept, its log and triggers removed).
    ///
    /// Only plans `LiveEligibility` accepts; refused before any work otherwise.
    ///
    /// - Throws: `TernFailure`; a stop, a busy store or an app writing faster than the rounds keep
    ///   up leave the capture and the record for `resume`.
    public func runBlockingLive(_ plan: Plan, resume: Bool = false, live: LiveMigrationOptions = LiveMigrationOptions()) throws -> LiveReport {
        do {
            return try executeLive(plan, resume: resume, live: live)
        } catch {
            // Running again cannot help (a verification or validation failure, a bad input): the
            // store stops logging, and nothing of the run is left behind. A refusal before the
            // capture began leaves nothing to remove; one of an unfinished run keeps it.
            if !FailureKind.isResumable(error), !(error is TernError) {
                _ = try? Self.abortLive(store: store)
            }
            throw TernFailure(error)
        }
    }

    /// Removes what a live migration left in and beside the store: the triggers and the log
    /// (in the store and in its backup), the folder with the mirror and the migrated store.
    /// Returns what it removed, in words; empty when there was nothing.
    public static func abortLive(store path: String) throws -> [String] {
        let store = StoreFile.resolvingLinks(path)
        let lock = try StoreLock(store: store)
        defer { lock.release() }
        var removed: [String] = []
        // The record first: a run resumed after an abort cut short must not take the missing
        // triggers for a finished swap.
        let files = LiveFiles(store: store)
        try? FileManager.default.removeItem(atPath: files.record)
        for file in [store, backupPath(for: store)] where FileManager.default.fileExists(atPath: file) {
            let connection = try Connection(path: file, configuration: .init(mode: .readWrite))
            defer { try? connection.close() }
            let (triggers, log) = try LiveCapture.leftovers(in: connection)
            guard !triggers.isEmpty || log else { continue }
            try LiveCapture.remove(from: connection)
            removed.append("\(file): \(triggers.count) triggers\(log ? " and the change log \(LiveCapture.log)" : "")")
        }
        if FileManager.default.fileExists(atPath: files.folder) {
            files.removeFolder()
            removed.append(files.folder)
        }
        return removed
    }

    /// Why `plan` cannot run live (`--live`), in words naming the mapping or property at fault;
    /// nil when it can. What `runBlockingLive` refuses before any work.
    public func liveRefusal(_ plan: Plan) throws -> String? {
        guard !plan.steps.isEmpty else { return nil }
        return try Self.liveRefusal(try plan.stepPlans(checkedAgainst: registry, path: nil), store: StoreFile.resolvingLinks(store))
    }

    /// The plan's refusal (`LiveEligibility`), else the store's: one in rollback-journal mode.
    private static func liveRefusal(_ stepPlans: [StepPlan], store: String) throws -> String? {
        if let refusal = LiveEligibility.refusal(stepPlans) { return refusal }
        return try ReadOnlyStore.isWALMode(store)
            ? nil : "the store is in rollback-journal mode, not WAL (Core Data's default): the app's writes would block every read"
    }

    /// What a live migration left in and beside the store: its triggers, whether its log is
    /// there, the phase its record says (nil without a record).
    public static func liveLeftovers(store path: String) throws -> (triggers: [String], log: Bool, phase: String?) {
        let store = StoreFile.resolvingLinks(path)
        let reader = try ReadOnlyStore(path: store)
        let connection = try reader.connect()
        defer { try? connection.close() }
        let (triggers, log) = try withExtendedLifetime(reader) { try LiveCapture.leftovers(in: connection) }
        return (triggers, log, try LiveRecord.read(LiveFiles(store: store))?.phase.rawValue)
    }

    private func executeLive(_ plan: Plan, resume: Bool, live: LiveMigrationOptions) throws -> LiveReport {
        let started = ContinuousClock.now
        let store = StoreFile.resolvingLinks(self.store)
        let files = LiveFiles(store: store)
        let lock = try StoreLock(store: store)
        defer { lock.release() }
        let record = try LiveRecord.read(files)
        if let record, !resume { throw MigrationError.liveUnfinished(store: store, phase: record.phase.rawValue) }
        var report = LiveReport(backup: Self.backupPath(for: store))
        // A cut-over cut after its swap: the store is the migrated file; only tidying is left.
        if let record, record.phase == .cuttingOver, let migrated = record.migrated, FileIdentity(path: store) == migrated {
            try Self.tidyAfterCutOver(store: store, files: files)
            report.duration = ContinuousClock.now - started
            return report
        }
        guard !plan.steps.isEmpty else {
            throw TernError(.badInput, "the store is at version \(plan.targetVersion), the version to migrate to: nothing to migrate", path: store)
        }
        let stepPlans = try plan.stepPlans(checkedAgainst: registry, path: nil)
        if let refusal = try Self.liveRefusal(stepPlans, store: store) { throw TernError(.badInput, "--live: \(refusal)", path: store) }
        let digest = try plan.contentDigest()
        if let record, record.plan != digest {
            throw TernError(
                .badInput,
                "the live migration under way was started with another plan (the model, a mapping or an option changed): finish it with the same command and --resume, or remove it with tern migrate --abort",
                path: files.record)
        }
        // Made before any connection of the run, so its descriptors outlive them.
        let users = StoreUsers(store: store)
        var current = record ?? LiveRecord(phase: .capturing, plan: digest)
        if record == nil {
            // A folder without a record is what an abort or a reset cut short left: nothing in
            // it belongs to this run.
            files.removeFolder()
            try files.makeFolder()
            try current.save(files)
        }
        // The private stores were written unsynced before a reboot: copied again, from a new
        // mirror (the capture, in the live store, is durable with the app's commits).
        if [.catchingUp, .cuttingOver].contains(current.phase), current.boot != LiveRecord.currentBoot || current.boot == nil {
            files.removeFolder()
            try files.makeFolder()
            current.phase = .mirroring
            current.migrated = nil
            try current.save(files)
        }
        // Until the cut-over the app's commits come first: Tern's threads take only idle cores
        // (`LivePriority`), and its syncs go to disk a piece at a time (`GentleWriteback`).
        if live.priority == .idle { ThreadPolicy.idle() }
        defer { if live.priority == .idle { ThreadPolicy.normal() } }
        let catchUp = try GentleWriteback.during { () throws -> LiveCatchUp in
            if current.phase == .capturing || current.phase == .mirroring {
                try capture(store: store, files: files, record: &current, live: live)
            }
            if current.phase == .copying {
                let copying = ContinuousClock.now
                if !files.copyFinished {
                    var copy = StoreMigration(store: files.mirror, model: model, options: options, logger: logger)
                    copy.options.registry = registry
                    report.copy = try copy.runBlocking(
                        plan, output: files.migrated, resume: FileManager.default.fileExists(atPath: MigrationRun.path(for: files.migrated)))
                }
                options.reached?(.liveCopied)
                current.phase = .catchingUp
                current.boot = LiveRecord.currentBoot
                try current.save(files)
                live.progress?(.copied(seconds: (ContinuousClock.now - copying).seconds))
            }
            let catchUp = try LiveCatchUp(
                plan: stepPlans[0], migrated: files.migrated, mirror: files.mirror, live: store, captured: current.tables, start: current.start,
                options: options, logger: logger)
            do {
                try catchUpUntilClosed(catchUp, store: store, users: users, report: &report, live: live)
            } catch {
                catchUp.close()
                try Self.distrustCopiesAfter(error, record: &current, files: files)
            }
            return catchUp
        }
        var finished = false
        defer { if !finished { catchUp.close() } }
        if live.priority == .idle, !ThreadPolicy.normal() {
            logger.notice("the cut-over runs at idle priority: this process may not raise it again (RLIMIT_NICE)")
        }
        // Tern's part of the downtime starts here: no other process has the store open.
        let cutting = ContinuousClock.now
        current.phase = .cuttingOver
        current.migrated = FileIdentity(path: files.migrated)
        try current.save(files)
        var held = cutting
        do {
            _ = try deliver(
                files.migrated, at: plan.steps[plan.steps.count - 1].destination, from: store, to: store, keepingOriginalAt: report.backup,
                externalData: ExternalDataFolders(source: files.mirror, destination: files.migrated), recorded: nil, users: users, commits: nil
            ) {
                held = ContinuousClock.now
                let last = try catchUp.round()
                options.reached?(.liveHeld)
                let verifying = ContinuousClock.now
                try catchUp.verifyChanged()
                let finishing = ContinuousClock.now
                try catchUp.finish()
                finished = true
                report.cutOverEntries = last.entries
                report.cutOverParts = CutOverParts(
                    lock: held - cutting, round: verifying - held, verification: finishing - verifying, finish: ContinuousClock.now - finishing)
            }
        } catch {
            try Self.distrustCopiesAfter(error, record: &current, files: files)
        }
        report.cutOver = ContinuousClock.now - cutting
        live.progress?(.cutOver(seconds: report.cutOver.seconds, entries: report.cutOverEntries))
        try Self.tidyAfterCutOver(store: store, files: files)
        report.duration = ContinuousClock.now - started
        return report
    }

    /// Rethrows `error`; first, unless it only says the app still has the store or writes too
    /// fast, or a stop was asked for, the record forgets the boot: the private stores were
    /// written unsynced, and after a failed write or sync ("fsyncgate": a second fsync succeeds
    /// on pages the kernel already dropped) a resume must copy the store again, not trust them.
    private static func distrustCopiesAfter(_ error: any Error, record: inout LiveRecord, files: LiveFiles) throws -> Never {
        switch error {
        case is MigrationInterrupted, MigrationError.openElsewhere, MigrationError.liveBehind: break
        default:
            record.boot = nil
            try? record.save(files)
        }
        throw error
    }

    /// Phases 1 and 2: the log and triggers (or those a cut run committed), then the mirror.
    private func capture(store: String, files: LiveFiles, record: inout LiveRecord, live: LiveMigrationOptions) throws {
        let connection = try Connection(path: store, configuration: .init(mode: .readWrite))
        defer { try? connection.close() }
        // The app's store: the capture is durable before the record says so.
        try connection.execute("PRAGMA synchronous = FULL")
        if record.phase == .capturing {
            let (triggers, log) = try LiveCapture.leftovers(in: connection)
            record.tables = triggers.isEmpty && !log ? try LiveCapture.install(on: connection) : try LiveCapture.tables(in: connection)
            record.log = LiveCapture.log
            record.triggers = try LiveCapture.leftovers(in: connection).triggers
            options.reached?(.liveCaptured)
            record.phase = .mirroring
            try record.save(files)
            live.progress?(.capturing(tables: record.tables.count))
        }
        let started = ContinuousClock.now
        let partial = files.mirror + ".partial"
        for file in [partial, files.mirror] { StoreFiles.remove(file) }
        // One read transaction: the copy is the store as of one instant after the capture
        // began, its log included, whose last entry is where the rounds start.
        // The copy is synced below, gently (`GentleWriteback`), not by SQLite in one burst.
        try connection.execute("PRAGMA synchronous = OFF")
        try connection.execute("VACUUM INTO \(quoteLiteral(partial))")
        let copy = try Connection(path: partial, configuration: .init(mode: .readWrite))
        record.start = try copy.scalar("SELECT coalesce(max(Z_SEQ), 0) FROM \(LiveCapture.log)")?.int64 ?? 0
        try copy.transaction(.immediate) { try LiveCapture.strip(copy) }
        try copy.close()
        try DurableFile.syncFile(partial, what: "the live store's mirror")
        guard rename(partial, files.mirror) == 0 else {
            throw TernError(.io, "cannot name the mirror: \(String(cString: strerror(errno)))", path: files.mirror)
        }
        try DurableFile.syncDirectory(containing: files.mirror, what: "the live store's mirror")
        options.reached?(.liveMirrored)
        record.phase = .copying
        try record.save(files)
        live.progress?(.mirrored(seconds: (ContinuousClock.now - started).seconds, position: record.start))
    }

    /// Phase 4: rounds until caught up and no other process has the store open; the first
    /// full verification on the way. Throws, keeping everything for a resume, when the app
    /// keeps the store open or writes faster than the rounds apply, for `closeTimeout`.
    private func catchUpUntilClosed(_ catchUp: LiveCatchUp, store: String, users: StoreUsers, report: inout LiveReport, live: LiveMigrationOptions) throws {
        var verified = false
        var behindSince: ContinuousClock.Instant?
        var waitingSince: ContinuousClock.Instant?
        var writtenOut = ContinuousClock.now
        while true {
            if options.shouldStop() { throw MigrationInterrupted() }
            let roundStarted = ContinuousClock.now
            let round = try catchUp.round()
            let lag = try catchUp.lag()
            if round.entries > 0 {
                options.reached?(.liveRound)
                report.rounds += 1
                report.entries += round.entries
                report.objects += round.objects
                live.progress?(.round(entries: round.entries, objects: round.objects, lagEntries: lag.entries, lagSeconds: lag.seconds))
            }
            if !verified {
                let verifying = ContinuousClock.now
                try catchUp.verifyAll()
                report.verification = ContinuousClock.now - verifying
                live.progress?(.verified(seconds: report.verification.seconds))
                verified = true
                continue
            }
            let now = ContinuousClock.now
            guard lag.entries <= live.caughtUp else {
                waitingSince = nil
                let since = behindSince ?? now
                behindSince = since
                if now - since > live.closeTimeout {
                    throw MigrationError.liveBehind(store: store, entries: lag.entries, seconds: lag.seconds, waited: (now - since).seconds)
                }
                continue
            }
            behindSince = nil
            let others = users.others()
            if others.isEmpty { return }
            // The rounds write unsynced: sent to the disk every few seconds while the app has the store,
            // so that the cut-over's sync is short.
            if now - writtenOut > .seconds(2) {
                try catchUp.writeOut()
                writtenOut = ContinuousClock.now
            }
            let since = waitingSince ?? now
            if waitingSince == nil { live.progress?(.waitingForClose(processes: others)) }
            waitingSince = since
            if now - since > live.closeTimeout { throw MigrationError.openElsewhere(store: store, processes: others, resumable: true) }
            pace(since: roundStarted)
        }
    }

    /// Caught up, rounds start at most every 20 ms: each has a fixed cost (a statement per
    /// logged table), and the app, not Tern, should have the cores while it writes.
    private func pace(since started: ContinuousClock.Instant) {
        let due = started + .milliseconds(20)
        if ContinuousClock.now < due { Thread.sleep(forTimeInterval: (due - ContinuousClock.now).seconds) }
    }

    /// After the swap: the backup (the original) loses the log and triggers, and the folder goes.
    private static func tidyAfterCutOver(store: String, files: LiveFiles) throws {
        let backup = backupPath(for: store)
        if FileManager.default.fileExists(atPath: backup) {
            let connection = try Connection(path: backup, configuration: .init(mode: .readWrite))
            try LiveCapture.remove(from: connection)
            try connection.checkpointWAL()
            try connection.close()
        }
        files.removeFolder()
        try DurableFile.syncDirectory(containing: store, what: "the live migration's folder")
    }
}
