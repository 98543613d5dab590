import Foundation
import TernModel
import TernStore
import TernMapping
import Logging
import TernSQLite

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
    /// What a run will do: decided once by `plan(to:mappingFiles:appleHashes:)`, read by the run,
    /// `estimate(_:)` and `tern plan` alike.
    public struct Plan: Sendable, Codable {
        /// The version that wrote the store.
        public let storeVersion: String
        /// The version the store is migrated to.
        public let targetVersion: String
        /// The steps in order; empty when the store is at the target already.
        public let steps: [MigrationStep]
        /// True when no version of the model wrote the store and its own model, read from its
        /// `Z_MODELCACHE`, is the source version (named `StoreModelCache.versionName`).
        public var fromStoreModel = false
        /// Core Data's own version hashes of the target version (entity → hex), when known (a
        /// `.momd`'s `VersionInfo.plist`): the migrated store carries them, so Core Data opens it.
        public var targetAppleHashes: [String: String]?
        /// The model and the store schema the plan was made from (nil in a plan built by hand):
        /// a run checks the store still has that schema before it writes anything.
        public internal(set) var origin: Origin?
        /// Every version the steps go through, from the store's to the target (the versions a
        /// composed step passes through included): what a saved plan runs with, no model needed.
        public internal(set) var versions: [ObjectModel] = []
    }

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
        /// Time spent reading the source's content digest (`StoreDigest`), at the start and at
        /// delivery.
        public var checkingSource: Duration = .zero
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

    private func makePlan(
        to target: String?, mappingFiles extra: [String], mappings models: [MappingModel],
        appleHashes: [String: [String: String]]
    ) throws -> Plan {
        // A compiled model's bundle says what Core Data's hashes of each version are.
        var appleHashes = appleHashes
        if appleHashes.isEmpty, model.path.hasSuffix(".momd") {
            appleHashes = (try? VersionMatch.appleHashes(versionInfoAt: model.path + "/VersionInfo.plist")) ?? [:]
        }
        let match = try VersionMatch.find(in: model, storeAt: store, appleHashes: appleHashes)
        var version: String
        let targetVersion = target ?? model.currentVersionName
        var chainModel = model
        var fromStoreModel = false
        var earlierTern = false
        switch match.verdict {
        case .compatible(let name, _):
            version = name
        case .migrationNeeded(let from, _, let evidence):
            version = from
            earlierTern = evidence == .earlierTern
        case .noMatch(let closest, let differences):
            // The store's own model, when it carries one whose layout is its schema: one step
            // from it to the target, inferred or by a mapping file naming it as its source.
            let carried = try StoreModelCache.read(storeAt: store, versionName: StoreModelCache.versionName)
            guard let cached = carried, try StoreModelCache.describes(cached, storeAt: store), let destination = model.version(named: targetVersion) else {
                // Say why the store's own model was not taken either, when it has one.
                let note = carried.map { _ in ["the model the store carries (Z_MODELCACHE) does not match its tables and entities either"] } ?? []
                throw MigrationError.noVersionMatches(closest: closest, differences: differences + note, store: store)
            }
            chainModel = VersionedModel(name: model.name, versions: [cached, destination], currentVersionName: targetVersion, path: model.path)
            version = cached.versionName
            fromStoreModel = true
            logger.notice("no version of the model wrote the store: migrating from the model the store carries", metadata: ["store": "\(store)"])
        }
        guard version != targetVersion || earlierTern else {
            return Plan(storeVersion: version, targetVersion: targetVersion, steps: [])
        }
        let files = MigrationPlanner.mappingFiles(for: model)
        var steps =
            version == targetVersion
            ? [try MigrationPlanner.relayout(of: chainModel.version(named: version)!, now: options.now)]
            : try MigrationPlanner.chain(
                in: chainModel, from: version, to: targetVersion, mappingFiles: files, overriding: extra, models: models,
                composing: options.composeSteps, now: options.now)
        if earlierTern {
            // The first step reads the earlier Tern's tables (where they are not Core Data's
            // already: then only its hashes were its own); every step writes Core Data's.
            let (metadata, signature) = try Self.shape(ofStoreAt: store)
            if !VersionMatch.differences(of: steps[0].source, from: metadata, signature: signature).isEmpty {
                steps[0].readEarlierTernLayout()
            }
            logger.notice(
                "an earlier Tern laid the store out: the migration copies it into Core Data's layout",
                metadata: ["store": "\(store)", "version": "\(version)"])
        }
        try registry.checkPolicies(of: steps)
        if let source = chainModel.version(named: version) {
            try NothingCarried.check(steps, store: store, storeVersion: source)
        }
        try AppSchemaObjects.check(steps, store: store)
        for index in try InPlaceRehearsal.stepsToCopy(steps, store: store) {
            steps[index].copy(
                because: "its schema changes, rehearsed on the store's schema, do not give \(steps[index].destination.versionName)'s tables "
                    + "(the store has tables or columns the model does not lay out): the store is copied")
        }
        var plan = Plan(storeVersion: version, targetVersion: targetVersion, steps: steps)
        plan.fromStoreModel = fromStoreModel
        plan.origin = try Plan.Origin.of(model: model, storeAt: store)
        if let first = chainModel.versions.firstIndex(where: { $0.versionName == version }),
            let last = chainModel.versions.firstIndex(where: { $0.versionName == targetVersion }), first <= last
        {
            plan.versions = Array(chainModel.versions[first...last])
        }
        if let hashes = appleHashes[targetVersion], let destination = model.version(named: targetVersion) {
            try Self.checkAppleHashes(hashes, describe: destination)
            plan.targetAppleHashes = hashes
        }
        return plan
    }

    /// Apple's hashes are written into the migrated store as they are, for Core Data to compare
    /// with its model: hashes of another model's version of the same name (or with an entity
    /// missing) would make a store Core Data refuses, so they must name exactly its entities.
    private static func checkAppleHashes(_ hashes: [String: String], describe version: ObjectModel) throws {
        let (given, entities) = (Set(hashes.keys), Set(version.entities.map(\.name)))
        guard given != entities else { return }
        let only = given.subtracting(entities).sorted(), missing = entities.subtracting(given).sorted()
        throw TernError(
            .badInput,
            "the Apple version hashes given for \(version.versionName) (VersionInfo.plist) do not describe it: "
                + [
                    only.isEmpty ? nil : "they name \(only.joined(separator: ", ")), which it does not have",
                    missing.isEmpty ? nil : "they lack \(missing.joined(separator: ", "))",
                ].compactMap { $0 }.joined(separator: "; ")
                + " — they belong to another model, or to another version of it")
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
    /// where it happened.
    func execute(_ plan: Plan, output: String?, resume: Bool) throws -> Report {
        var plan = plan
        var options = options
        options.registry = registry
        let started = ContinuousClock.now
        let fileManager = FileManager.default
        // A link to the store: migrate the real file, keep the backup beside it, and the link
        // then leads to the migrated store.
        let store = Self.resolvingLinks(self.store)
        guard !plan.steps.isEmpty else {
            // The store is at its target. A run killed right after its swap left its record.
            try Self.removeFinishedRecord(for: output ?? store)
            return Report(plan: plan, steps: [], destination: store, backup: nil, duration: ContinuousClock.now - started)
        }
        if let output { try Self.checkOutputPlace(output) }
        let finalPath = output ?? store
        var stepPlans = plan.steps.map { StepPlan($0, registry: options.registry) }
        // One tern per store: a second run (or --resume, or --restart) waits its turn.
        let lock = try StoreLock(store: finalPath)
        defer { lock.release() }
        // In place, an app using the store would write on into the backup: refuse now rather
        // than after the work. Declared before every connection so its descriptors outlive them.
        let users = output == nil ? StoreUsers(store: store) : nil
        defer { withExtendedLifetime(users) {} }
        if let users, case let others = users.others(), !others.isEmpty {
            throw MigrationError.openElsewhere(store: store, processes: others, resumable: false)
        }
        let manifestPath = MigrationRun.path(for: finalPath)
        let backup = output == nil ? Self.backupPath(for: store) : nil
        let metadata = try StoreMetadata.read(storeAt: store)
        let sourceObjects = Int(metadata.entities.reduce(0) { $0 + ($1.rowCount ?? 0) })
        var checkingSource = Duration.zero
        let inputs = {
            let reading = ContinuousClock.now
            defer { checkingSource += ContinuousClock.now - reading }
            return MigrationRun.Inputs.of(source: try digest(of: store), plans: stepPlans, model: model)
        }

        var run: MigrationRun
        if let existing = try MigrationRun.load(at: manifestPath) {
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
            let differences = try inputs().differences(from: recorded)
            guard differences.isEmpty else { throw MigrationError.resumeMismatch(existing, manifest: manifestPath, differences: differences) }
            // The same inputs: the run goes on with the plan it recorded, not one made anew.
            if let recordedPlan = existing.plan {
                plan = recordedPlan
                stepPlans = plan.steps.map { StepPlan($0, registry: options.registry) }
            }
            // The digest equals the one taken when the record was made, after the scan for rows
            // Core Data never writes found none: the scan would find none again.
            // A file the source refers to may have gone since: say so, and keep the work.
            try checkExternalData(plan)
            run = existing
            logger.info("resuming", metadata: ["completedSteps": "\(run.completed)", "steps": "\(run.steps.count)"])
        } else {
            if let output, fileManager.fileExists(atPath: output) {
                // Killed after the record was removed? Say so, but never take the store as ours.
                if resume, (try? StoreMetadata.read(storeAt: output))?.migratedFrom == (try inputs()).fingerprint {
                    throw MigrationError.finishedEarlier(output)
                }
                throw MigrationError.destinationExists(output)
            }
            // A backup's stale -wal would be read into the backup made here; a support folder
            // already there would mix someone else's files with the ones carried here.
            let inTheWay = [backup, backup.map { $0 + "-wal" }, backup.map(ExternalBinaryData.supportFolder), output.map(ExternalBinaryData.supportFolder)]
            for file in inTheWay.compactMap({ $0 }) where Self.exists(file) {
                throw MigrationError.destinationExists(file)
            }
            try checkPlanned(plan, store: store)
            try refuseAnomalies(plan)
            try checkExternalData(plan)
            run = MigrationRun(
                inputs: try inputs(), store: store, output: output, target: plan.targetVersion, steps: plan.steps.map(\.identity),
                stepFiles: plan.steps.indices.map { MigrationRun.stepFile(for: finalPath, index: $0 + 1) }, completed: 0, plan: plan)
            for file in run.stepFiles { Self.removeStepStore(file) }  // leftovers of a run whose record is gone
            try run.save(at: manifestPath)
        }

        options.progress?(
            .started(
                MigrationOutline(
                    steps: plan.steps.map(\.identity), inPlace: stepPlans.map { $0.inPlace != nil },
                    completedSteps: run.completed, objects: sourceObjects)))
        var reports: [StepReport] = []
        do {
            for index in run.completed..<plan.steps.count {
                let step = plan.steps[index]
                let input = index == 0 ? store : run.stepFiles[index - 1]
                let file = run.stepFiles[index]
                options.progress?(
                    .stepStarted(
                        step: index + 1, steps: plan.steps.count, passes: step.passes.count, source: step.source.versionName,
                        destination: step.destination.versionName))
                logger.info(
                    "migrating",
                    metadata: [
                        "from": "\(step.source.versionName)", "to": "\(step.destination.versionName)", "mapping": "\(step.origins.joined(separator: ", "))",
                    ])
                var dropped = try DataLoss.count(DataLoss.dropped(by: step), of: step, in: input)
                if stepPlans[index].inPlace == nil { dropped += try DataLoss.tablesOutsideModel(of: step, in: input) }
                if options.refuseDataLoss, !dropped.isEmpty {
                    throw MigrationError.dataLoss(step: step.identity, dropped: dropped)
                }
                var report: StepReport
                var memory = PeakMemoryMeter()
                if var inPlace = try Self.applyInPlace(stepPlans[index], from: input, working: file, isOriginal: index == 0, shouldStop: options.shouldStop) {
                    let pass = PassReport(
                        pass: 1, passes: 1, mappings: ["schema changes"], objects: sourceObjects,
                        seconds: inPlace.duration.seconds, peakResidentMemory: memory.peak())
                    inPlace.passes = [pass]
                    options.progress?(.passFinished(pass))
                    report = inPlace
                } else {
                    if stepPlans[index].inPlace != nil {
                        // The plan rehearsed these changes on the store's schema: the store is
                        // not what was planned. Never decided again here.
                        throw TernError(
                            .badInput,
                            "step \(step.identity) was planned in place, but its schema changes no longer give the new version's tables: "
                                + "the store's schema changed since it was planned; plan the migration again", path: input)
                    }
                    report = try Migrator.migrate(
                        stepPlans[index], from: input, to: file, options: options, logger: logger,
                        externalData: Self.externalData(of: run, from: store, step: index), resume: true)
                }
                // What the step found while it ran (objects a policy left unassociated) follows.
                report.dropped = dropped + report.dropped
                reports.append(report)
                options.reached?(.stepCommitted)
                run.completed = index + 1
                try run.save(at: manifestPath)
                if index > 0 { Self.remove(input) }
                options.progress?(.stepFinished(step: index + 1, inPlace: !report.appliedInPlace.isEmpty || report.mappings.isEmpty))
            }
            let final = run.stepFiles[plan.steps.count - 1]
            if fileManager.fileExists(atPath: final) {
                let connection = try Connection(path: final, configuration: .init(mode: .readWrite))
                try connection.setPragma("user_version", .integer(0))  // a finished store looks like Core Data's
                if let inputs = run.inputs { try StoreFile.setMetadata(StoreFile.migratedFromKey, to: inputs.fingerprint, in: connection, path: final) }
                try StoreFile.carryAppMetadata(from: store, into: connection, path: final)
                if let apple = plan.targetAppleHashes { try StoreFile.useAppleHashes(apple, in: connection, path: final) }
                // The source's cached model describes the old version: neither Tern nor Core Data
                // may take it for the migrated store's (Core Data writes a new one when it opens it).
                try connection.execute("DROP TABLE IF EXISTS Z_MODELCACHE")
                // The main file alone is delivered (a hard link): nothing may stay in its -wal.
                try connection.checkpointWAL()
                try connection.close()
                checkingSource += try deliver(
                    final, at: plan.steps[plan.steps.count - 1].destination, from: store, to: finalPath, keepingOriginalAt: backup,
                    externalData: Self.externalData(of: run, from: store, step: plan.steps.count - 1).lookup, recorded: run.inputs?.source, users: users)
            }
            for file in run.stepFiles { Self.removeStepStore(file) }
            // Otherwise the rename happened before a crash: the migrated store is already in place.
            try? fileManager.removeItem(atPath: manifestPath)
        } catch let error where Self.isResumable(error) {
            if Self.isDiskFull(error) { throw Self.diskFull(beside: finalPath, kept: [manifestPath] + run.stepFiles, source: store) }
            // The disk or a lock failed: the message says what is kept and how to go on.
            if error is SQLiteError || error is TernError { throw MigrationError.stoppedResumably(cause: error, record: manifestPath) }
            throw error
        } catch {
            // Running again cannot help (invalid data, a bad mapping): leave nothing behind.
            Self.removeCarriedFiles(into: finalPath, output: output, source: store, stepFiles: run.stepFiles)
            for file in run.stepFiles { Self.removeStepStore(file) }
            try? fileManager.removeItem(atPath: manifestPath)
            throw error
        }
        return Report(
            plan: plan, steps: reports, destination: finalPath, backup: backup, duration: ContinuousClock.now - started, checkingSource: checkingSource)
    }

    /// A crash right after the migrated store was renamed into place leaves the record behind;
    /// the store is at its target then, and the record can go (under the lock, taken only then).
    static func removeFinishedRecord(for finalPath: String) throws {
        let manifest = MigrationRun.path(for: finalPath)
        guard let run = try MigrationRun.load(at: manifest), run.completed == run.steps.count,
            let last = run.stepFiles.last, !FileManager.default.fileExists(atPath: last)
        else { return }
        // Killed after the swap: finish its clean-up under the lock (which a kill leaves behind).
        let lock = try StoreLock(store: finalPath)
        defer { lock.release() }
        for file in run.stepFiles { removeStepStore(file) }
        try? FileManager.default.removeItem(atPath: manifest)
    }

    /// Removes an unfinished migration into `finalPath`: its record, its step stores, and the
    /// external data files it carried.
    public static func discardUnfinished(into finalPath: String) throws {
        let lock = try StoreLock(store: finalPath)
        defer { lock.release() }
        let manifest = MigrationRun.path(for: finalPath)
        if let run = try? MigrationRun.load(at: manifest) {
            removeCarriedFiles(into: finalPath, output: run.output, source: run.store, stepFiles: run.stepFiles)
            for file in run.stepFiles { removeStepStore(file) }
        }
        try? FileManager.default.removeItem(atPath: manifest)
    }

    static func isDiskFull(_ error: any Error) -> Bool {
        (error as? SQLiteError)?.code.primary == .SQLITE_FULL
    }

    /// The full-disk error: the directory, the files that hold the work so far, and their sizes,
    /// and what a step needs: the store and the external data files it reads in or writes out
    /// (attachments decoded into a small store take their own size in it).
    static func diskFull(beside finalPath: String, kept files: [String], source: String) -> MigrationError {
        let size = { (path: String) in try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int }
        var external = 0
        let folder = ExternalBinaryData.folder(forStore: source)
        for name in (try? FileManager.default.subpathsOfDirectory(atPath: folder)) ?? [] {
            external += size(folder + "/" + name) ?? 0
        }
        return MigrationError.diskFull(
            directory: URL(fileURLWithPath: finalPath).deletingLastPathComponent().path,
            keptFiles: files.compactMap { file in size(file).map { (URL(fileURLWithPath: file).lastPathComponent, $0) } },
            sourceBytes: size(source) ?? 0, externalBytes: external)
    }

    /// Removes the external data files a run carried beside its output, its backup, or (in
    /// place) the original — never anything else someone put there. Before the step stores'
    /// folders go: they are how new files are recognised.
    static func removeCarriedFiles(into finalPath: String, output: String?, source: String, stepFiles: [String]) {
        let original = ExternalBinaryData.folder(forStore: source)
        let steps = stepFiles.map(ExternalBinaryData.folder(forStore:))
        if let output {
            ExternalDataCarrier.removeCarried(from: ExternalBinaryData.folder(forStore: output), sources: [original] + steps)
        } else {
            ExternalDataCarrier.removeCarried(from: ExternalBinaryData.folder(forStore: backupPath(for: finalPath)), sources: [original])
            ExternalDataCarrier.removeCarried(from: original, sources: steps)
        }
    }

    /// Where step `index` of `run` finds values stored outside the stores — the original's
    /// folder and every step store's (a later step may copy a reference an earlier one wrote) —
    /// and where it writes new files: its own store's folder.
    static func externalData(of run: MigrationRun, from store: String, step index: Int) -> ExternalDataFolders {
        ExternalDataFolders(
            lookup: [ExternalBinaryData.folder(forStore: store)] + run.stepFiles.map(ExternalBinaryData.folder(forStore:)),
            newFiles: ExternalBinaryData.folder(forStore: run.stepFiles[index]))
    }

    /// Removes a step's store and the support folder of the files it wrote.
    static func removeStepStore(_ path: String) {
        remove(path)
        try? FileManager.default.removeItem(atPath: ExternalBinaryData.supportFolder(forStore: path))
    }

    /// Whether anything is at `path`, a dangling link included.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Whether running again may get further (`FailureKind.isResumable`).
    static func isResumable(_ error: any Error) -> Bool {
        FailureKind.isResumable(error)
    }

    /// Removes a store file with its `-wal`, `-shm` and `-journal`, if they exist.
    public static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Tries a lightweight step as schema changes. The original store is never altered: its
    /// first step works on a copy made with `VACUUM INTO` (which reads pages, not rows, and takes
    /// in rows that live only in a `-wal`); later steps alter the previous temporary store.
    /// Returns nil when the step must be copied instead, else the report and the store now at the
    /// destination version.
    static func applyInPlace(
        _ plan: StepPlan, from current: String, working file: String, isOriginal: Bool,
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) throws -> StepReport? {
        guard let statements = plan.inPlace else { return nil }
        let step = plan.step
        let started = ContinuousClock.now
        let fileManager = FileManager.default
        // Work on the step's own file: a copy of the original, or the previous temporary store
        // renamed (atomically) to it. Whatever a crash left, the file's schema says where it is.
        if fileManager.fileExists(atPath: file) {
            if try isAtDestination(file, step: step) { return inPlaceReport(statements, since: started) }
            if isOriginal, !(try isAtSource(file, step: step)) { remove(file) }
        }
        if !fileManager.fileExists(atPath: file) {
            if isOriginal {
                let store = try ReadOnlyStore(path: current)
                defer { withExtendedLifetime(store) {} }  // its private copy, if it made one, lives on
                let reader = try store.connect()
                // The copy is the long part: a stop request interrupts it, and the partial copy goes.
                try reader.interrupt(when: shouldStop)
                do {
                    try MigrationInterrupted.whenAsked(shouldStop) { try reader.execute("VACUUM INTO \(quoteLiteral(file))") }
                } catch {
                    remove(file)
                    throw error
                }
            } else {
                for suffix in ["-wal", "-shm"] where fileManager.fileExists(atPath: current + suffix) {
                    _ = rename(current + suffix, file + suffix)
                }
                guard rename(current, file) == 0 else {
                    throw MigrationError.io("cannot rename the previous step's store: \(String(cString: strerror(errno)))", path: current)
                }
            }
        }
        let connection = try Connection(path: file, configuration: .init(mode: .readWrite))
        try connection.interrupt(when: shouldStop)
        guard try MigrationInterrupted.whenAsked(shouldStop, { try LightweightInPlace.apply(statements, step: step, to: connection) }) else {
            try connection.close()
            if !isOriginal {
                _ = rename(file, current)  // give the previous step's store its name back, then copy
            } else {
                remove(file)
            }
            return nil
        }
        try connection.setJournalMode(.wal)
        try connection.setPragma("user_version", .integer(StepWorkspace.completedMarker))
        // Closing checkpoints too, but ignores a failed fsync there; this one is checked.
        try connection.checkpointWAL()
        try connection.close()
        return inPlaceReport(statements, since: started)
    }

    private static func inPlaceReport(_ statements: [String], since started: ContinuousClock.Instant) -> StepReport {
        var report = StepReport()
        report.appliedInPlace = statements
        report.verified.append("the store's tables and columns equal the destination layout")
        report.duration = ContinuousClock.now - started
        return report
    }

    private static func isAtDestination(_ file: String, step: MigrationStep) throws -> Bool {
        guard let connection = try? Connection(path: file, configuration: .init(mode: .readOnly)),
            let signature = try? LayoutSignature(connection: connection)
        else { return false }
        return signature == LayoutSignature(layout: StoreLayout(model: step.destination))
            && (try? StoreMetadata.read(from: connection, path: file).versionName) == step.destination.versionName
    }

    private static func isAtSource(_ file: String, step: MigrationStep) throws -> Bool {
        guard let connection = try? Connection(path: file, configuration: .init(mode: .readOnly)),
            let signature = try? LayoutSignature(connection: connection)
        else { return false }
        return signature == LayoutSignature(layout: step.sourceLayout)
    }
}

extension StoreMigration {
    /// Every file the source refers to is a regular file in its folder (exit 7 naming the first
    /// that is not), before any work.
    func checkExternalData(_ plan: Plan) throws {
        guard let first = plan.steps.first else { return }
        try ExternalDataCarrier.checkReferences(
            in: Self.resolvingLinks(store), model: first.source,
            folders: [ExternalBinaryData.folder(forStore: Self.resolvingLinks(store))], shouldStop: options.shouldStop)
    }

    /// A plan runs on a store with the schema and version hashes it was made from (a saved plan
    /// may be run on another store of that version), and with the policies it names registered.
    func checkPlanned(_ plan: Plan, store: String) throws {
        if let origin = plan.origin, try Plan.Origin.schema(ofStoreAt: store) != origin.storeSchema {
            throw TernError(
                .badInput,
                "the store's tables or version hashes are not those the plan was made from (\(plan.storeVersion) of \(origin.modelName)): "
                    + "plan the migration again", path: store)
        }
        // The first step's version is the store's: its hashes are the store's, or its layout is
        // the store's tables (a plan's versions are values like any other, and could be edited).
        if let first = plan.steps.first {
            let (metadata, signature) = try Self.shape(ofStoreAt: store)
            let hashes = metadata.hasCoreDataHashes && first.source.versionHashes.mapValues(VersionHash.hex) == metadata.versionHashes
            let differences = VersionMatch.differences(of: first.source, rules: first.sourceRules, from: metadata, signature: signature)
            guard hashes || differences.isEmpty else {
                throw TernError(
                    .badInput,
                    "the plan's first step reads version \(first.source.versionName)\(first.sourceRules == .earlierTern ? " as an earlier Tern laid it out" : ""), "
                        + "but the store is not of it: \(differences.joined(separator: "; "))", path: store)
            }
        }
        try registry.checkPolicies(of: plan.steps)
    }

    /// The store's metadata and tables, read without leaving files beside it.
    static func shape(ofStoreAt store: String) throws -> (StoreMetadata, LayoutSignature) {
        try StoreMetadata.reading(store) {
            let reader = try ReadOnlyStore(path: store)
            let connection = try reader.connect()
            return (try StoreMetadata.read(from: connection, path: store), try LayoutSignature(connection: connection))
        }
    }

    /// The plan an unfinished migration into `finalPath` recorded (nil when there is none, or
    /// its record predates recorded plans): what `--resume` runs again.
    public static func unfinishedPlan(into finalPath: String) throws -> Plan? {
        try TernFailure.wrapping { try MigrationRun.load(at: MigrationRun.path(for: resolvingLinks(finalPath)))?.plan }
    }

    /// Refuses a store with rows a migration would drop or change silently, before anything is
    /// written: every path (SQL, Swift, in place) then treats them the same way.
    func refuseAnomalies(_ plan: Plan) throws {
        guard let first = plan.steps.first else { return }
        let source = try ReadOnlyStore(path: store)
        let started = ContinuousClock.now
        let anomalies = try StoreAnomalies.find(in: source.attachPath, model: first.source, rules: first.sourceRules, workers: options.workers)
        logger.debug(
            "scanned the source for rows Core Data never writes",
            metadata: ["seconds": "\((ContinuousClock.now - started).seconds)", "found": "\(anomalies.count)"])
        guard anomalies.isEmpty else { throw MigrationError.sourceAnomalies(anomalies, store: store) }
    }
}
