import ArgumentParser
import Foundation
import Tern
import TernLoop

struct FleetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Migrate many stores, sharded across the tasks of a job engine (Kubernetes Indexed Jobs, AWS Batch or Slurm arrays).",
        discussion: """
            tern fleet plan lists the stores in a manifest; each task of a job array runs tern fleet run \
            on its shard of it; tern fleet status shows where the fleet stands, while it runs too. \
            Exit codes of run and status: 0 every store of the shard (or fleet) is at the target; 75 some \
            store is left for a retry; 12 some store failed in a way retrying cannot help.
            """,
        subcommands: [FleetPlanCommand.self, FleetRunCommand.self, FleetStatusCommand.self]
    )
}

struct FleetPlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Write a fleet's manifest: every store with its version and objects, and the migration by content hash.",
        discussion: "Each store is planned as tern migrate would plan it, so a store the run would refuse is listed now, with the reason. Exit status 0 once the manifest is written, whatever the stores' states."
    )

    @Option(help: "The model (see tern check --help).")
    var model: String

    @Option(help: "The version to migrate to (default: the model's current version).")
    var to: String?

    @Option(help: ArgumentHelp("The stores: a shell pattern, quoted so the shell leaves it alone ('/data/users/*/App.sqlite').", valueName: "glob"))
    var stores: String?

    @Option(help: ArgumentHelp("A file naming the stores, one path per line (# starts a comment).", valueName: "file"))
    var list: String?

    @Option(help: ArgumentHelp("Where to write the manifest (JSON Lines). Relative store paths in it are taken from its folder.", valueName: "file.jsonl"))
    var manifest: String

    @Flag(help: "Replace an existing manifest.")
    var replace = false

    @Option(help: "A mapping model file to use instead of the one found beside the model for its step (repeatable).")
    var mapping: [String] = []

    @Option(help: "A compiled model's VersionInfo.plist, to recognise Core Data stores by Apple's hashes.")
    var versionInfo: String?

    @Flag(help: "Run consecutive inferred steps one by one instead of composed into one.")
    var stepByStep = false

    @Option(help: "Stores planned at once (default: the number of cores).")
    var parallel = ProcessStats.availableParallelism

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard (stores == nil) != (list == nil) else { throw ValidationError("name the stores with either --stores GLOB or --list FILE") }
        guard (1...256).contains(parallel) else { throw ValidationError("--parallel must be from 1 to 256") }
    }

    func run() throws {
        try reportingErrors {
            if !replace, FileManager.default.fileExists(atPath: manifest) {
                throw MigrationError.destinationExists(manifest)
            }
            try FleetInputs.checkPlace(of: manifest, what: "manifest", model: model)
            let listing = StoreList.stores(try stores.map(StoreList.matching) ?? StoreList.read(list!))
            guard !listing.stores.isEmpty else {
                throw TernError(.badInput, "no stores: \(stores.map { "the pattern \($0) matches none" } ?? "the list names none")\(listing.leftOut.isEmpty ? "" : " (\(listing.leftOut.count) files left out: tern's own, or links)")")
            }
            let planner = FleetPlanner(modelPath: model, target: to, mappingOverrides: mapping, versionInfo: versionInfo, stepByStep: stepByStep,
                                       registry: CommandEnvironment.current.registry)
            let planned = try planner.manifest(stores: listing.stores, at: manifest, parallel: parallel)
            let partial = manifest + ".tern-partial"
            do {
                try Data(try planned.text().utf8).write(to: URL(fileURLWithPath: partial))
                guard rename(partial, manifest) == 0 else { throw TernError(.io, "cannot put the manifest in place: \(String(cString: strerror(errno)))", path: manifest) }
            } catch {
                unlink(partial)
                throw error
            }
            let count = { (state: FleetManifest.State) in planned.entries.filter { $0.state == state }.count }
            let pendingObjects = planned.entries.filter { $0.state == .pending }.reduce(0) { $0 + $1.objects }
            print("Planned \(Formatting.count(planned.entries.count)) stores to \(planned.header.target) in \(manifest): "
                  + "\(Formatting.count(count(.pending))) to migrate (\(Formatting.count(pendingObjects)) objects), \(Formatting.count(count(.current))) at the target, \(Formatting.count(count(.unreadable))) unreadable")
            for (path, reason) in listing.leftOut.prefix(10) { print("  left out: \(path): \(reason)") }
            if listing.leftOut.count > 10 { print("  left out: \(listing.leftOut.count - 10) more") }
            for entry in planned.entries where entry.state == .unreadable {
                // Messages name the store by its full path; the manifest's path is shorter.
                let reason = (entry.error?.message ?? "").replacingOccurrences(of: planned.storePath(entry) + ": ", with: "")
                print("  unreadable: \(entry.path): \(reason)")
            }
        }
    }
}

struct FleetRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Migrate this task's shard of a fleet in place, each store under a lease, and record every outcome.",
        discussion: """
            The shard is --shard-index of --shard-count, or comes from the job engine: JOB_COMPLETION_INDEX \
            (Kubernetes), AWS_BATCH_JOB_ARRAY_INDEX (AWS Batch) or SLURM_ARRAY_TASK_ID (Slurm, with its \
            count). A store at the target is skipped; one an earlier attempt began is resumed. SIGTERM \
            stops every running migration at its next batch boundary. Exit status: 0 every store of the \
            shard is at the target; 75 some store is left for a retry (interrupted, I/O, in use, its \
            lease held); 12 otherwise, when a store failed permanently (bad input, validation, \
            verification) or the manifest no longer matches the model and mapping files.
            """
    )

    @Option(help: ArgumentHelp("The fleet's manifest (tern fleet plan).", valueName: "file.jsonl"))
    var manifest: String

    @Option(help: "This task's shard, from 0 (default: from the job engine's variables; else the whole manifest).")
    var shardIndex: Int?

    @Option(help: "How many shards the fleet is cut into (default: SLURM_ARRAY_TASK_COUNT under Slurm).")
    var shardCount: Int?

    @Option(help: "Stores migrated at once in this task; each has the memory bound of one migration.")
    var parallel = 1

    @Option(help: ArgumentHelp("Where outcomes are recorded (default: beside the manifest, NAME.results).", valueName: "folder"))
    var results: String?

    @Option(help: "Seconds a store's lease lasts unless renewed (renewed every third of it).")
    var leaseSeconds = 60.0

    @Option(help: "Seconds to wait for a store whose lease a live task holds, before leaving it for a retry.")
    var leaseWait = 300.0

    @Flag(help: "Delete each store's backup (NAME~.sqlite) once its migration is verified and in place.")
    var discardBackups = false

    @Option(help: "Source objects per batch (see tern migrate --help).")
    var batchSize = 10_000

    @Option(name: .customLong("memory-budget"), help: "MiB of source values a migration holds at once (see tern migrate --help).")
    var memoryBudgetMiB = MigrationOptions.defaultMemoryBudget >> 20

    @Option(help: "Worker threads of each migration (default: the cores shared among --parallel).")
    var workers: Int?

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard (1...256).contains(parallel) else { throw ValidationError("--parallel must be from 1 to 256") }
        guard (1...StoreLease.longest).contains(leaseSeconds) else { throw ValidationError("--lease-seconds must be from 1 to 86400 (a day)") }
        guard (0...604_800).contains(leaseWait) else { throw ValidationError("--lease-wait must be from 0 to 604800 (a week)") }
        guard batchSize >= 1, (1...1 << 20).contains(memoryBudgetMiB) else { throw ValidationError("--batch-size must be at least 1, --memory-budget from 1 to 1048576") }
        guard workers.map({ (1...256).contains($0) }) ?? true else { throw ValidationError("--workers must be from 1 to 256") }
    }

    func run() throws {
        let logger = global.makeLogger(label: "tern.fleet")
        let stop = CommandEnvironment.current.stop
        stop.installSignalHandlers()
        let summary = try reportingFleetErrors { () -> FleetRunner.Summary in
            let manifest = try FleetManifest.read(manifest)
            try FleetInputs.check(manifest)
            let shard: Shard
            do { shard = try Shard.resolve(index: shardIndex, count: shardCount, environment: ProcessInfo.processInfo.environment) } catch {
                throw ValidationError("\(error)")  // the task's command line or the engine's job is wrong: 64
            }
            let resultsPath = results ?? manifest.defaultResultsFolder
            try FleetInputs.checkPlace(of: resultsPath, what: "results folder", model: manifest.resolve(manifest.header.model.path))
            let folder = try ResultsFolder(path: resultsPath)
            let model = try ModelLoader.load(manifest.resolve(manifest.header.model.path))
            let apple = try manifest.header.versionInfo.map { try VersionMatch.appleHashes(versionInfoAt: manifest.resolve($0.path)) } ?? [:]
            var settings = FleetRunner.Settings(parallel: parallel, leaseLength: leaseSeconds, leaseWait: leaseWait, keepBackups: !discardBackups, batchSize: batchSize,
                                                workers: workers ?? max(1, ProcessStats.availableParallelism / parallel))
            settings.memoryBudget = memoryBudgetMiB << 20
            let runner = FleetRunner(manifest: manifest, model: model, appleHashes: apple, shard: shard, results: folder,
                                     identity: LeaseIdentity(task: Self.taskName(shard)), settings: settings,
                                     registry: CommandEnvironment.current.registry, shouldStop: stop.isRequested, logger: logger)
            let stores = shard.stores(of: manifest).count
            print("Shard \(shard) (from \(shard.source)): \(Formatting.count(stores)) of \(Formatting.count(manifest.entries.count)) stores, \(parallel) at once; outcomes in \(folder.path)")
            let summary = runner.run()
            let counts = StoreOutcome.Status.allCases.filter { $0 != .started }.map { "\(summary.counts[$0] ?? 0) \($0.rawValue)" }
            print("Shard \(shard): " + counts.joined(separator: ", ") + (summary.retryable > 0 ? "; \(summary.retryable) left for a retry" : ""))
            return summary
        }
        if summary.exitCode != 0 { throw ExitCode(summary.exitCode) }
    }

    /// The task as its lease names it: the shard, and the engine's job where there is one.
    static func taskName(_ shard: Shard) -> String {
        let environment = ProcessInfo.processInfo.environment
        let job = environment["SLURM_JOB_ID"].map { "Slurm job \($0)" } ?? environment["AWS_BATCH_JOB_ID"].map { "AWS Batch job \($0)" }
            ?? (environment["JOB_COMPLETION_INDEX"] != nil ? environment["HOSTNAME"].map { "pod \($0)" } : nil)
        return "shard \(shard)" + (job.map { ", \($0)" } ?? "")
    }
}

struct FleetStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show where a fleet stands: stores per outcome, failures with reasons, the slowest stores, throughput.",
        discussion: "Reads the manifest, the results folder and the leases held now; safe while tasks run. Exit status: 0 every store is at the target; 75 stores are pending, running or left for a retry; 12 the rest failed permanently."
    )

    @Option(help: ArgumentHelp("The fleet's manifest.", valueName: "file.jsonl"))
    var manifest: String

    @Option(help: ArgumentHelp("The results folder (default: beside the manifest, NAME.results).", valueName: "folder"))
    var results: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Flag(help: "Wait until no store is pending, running or left for a retry, then show the status.")
    var wait = false

    @Option(help: "Seconds between looks with --wait.")
    var interval = 5.0

    func validate() throws {
        guard (0.1...3600).contains(interval) else { throw ValidationError("--interval must be from 0.1 to 3600 seconds") }
    }

    func run() throws {
        let report = try reportingFleetErrors { () -> FleetStatusReport in
            let manifest = try FleetManifest.read(manifest)
            let folder = ResultsFolder(reading: results ?? manifest.defaultResultsFolder)
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) {
                try? CommandEnvironment.current.errors.write("tern: note: no results folder at \(folder.path) yet: no task has recorded an outcome\n")
            } else if !isDirectory.boolValue {
                throw TernError(.badInput, "is not a folder: name the fleet's results folder", path: folder.path)
            }
            var report = FleetStatusReport(manifest: manifest, results: folder)
            while wait, !report.finished, !CommandEnvironment.current.stop.isRequested() {
                usleep(UInt32(interval * 1_000_000))
                report = FleetStatusReport(manifest: manifest, results: folder)
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                print(report.text)
            }
            return report
        }
        if report.exitCode != 0 { throw ExitCode(report.exitCode) }
    }
}

/// A fleet command's own failure (its manifest, its shard, its results folder) ends it with the
/// fleet's contract: 75 when a retry may get past it, 12 when it cannot.
func reportingFleetErrors<Result>(_ body: () throws -> Result) throws -> Result {
    do {
        return try body()
    } catch let error where error is ExitCode || error is ValidationError || error is CleanExit {
        throw error
    } catch {
        let failure = FleetError(error)
        printError(failure.message)
        throw ExitCode(failure.isPermanent ? TernExitCode.fleetPermanentFailure : TernExitCode.resumable)
    }
}

/// The model and mapping files, as the manifest was planned with them.
enum FleetInputs {
    /// Refuses a manifest or results folder inside a model folder (whose every file is hashed: the
    /// fleet's own writes would look like a changed model), and one whose folder does not exist.
    static func checkPlace(of path: String, what: String, model: String) throws {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        let modelFolder = URL(fileURLWithPath: model).standardizedFileURL.path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: modelFolder, isDirectory: &isDirectory), isDirectory.boolValue, absolute.hasPrefix(modelFolder + "/") {
            throw TernError(.badInput, "the \(what) is inside the model's folder, whose files are hashed to prove every task runs the same migration: put it elsewhere", path: path)
        }
        let folder = URL(fileURLWithPath: absolute).deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw TernError(.missingInput, "the folder to write the \(what) in does not exist", path: folder)
        }
    }

    /// Throws, naming the file, when one changed, went or came since `tern fleet plan`: every task
    /// must run the same migration.
    static func check(_ manifest: FleetManifest) throws {
        let header = manifest.header
        for input in [header.model] + header.mappings + (header.versionInfo.map { [$0] } ?? []) {
            let now = try ContentHash.of(manifest.resolve(input.path))
            guard now == input.sha256 else {
                throw TernError(.badInput, "\(input.path) changed since the fleet was planned (sha256 \(input.sha256.prefix(12))… then, \(now.prefix(12))… now): plan the fleet again", path: manifest.path)
            }
        }
        let model = try ModelLoader.load(manifest.resolve(header.model.path))
        let found = Set((MigrationPlanner.mappingFiles(for: model) + header.mappingOverrides.map(manifest.resolve)).map { FleetManifest.written($0, manifestAt: manifest.path) })
        let planned = Set(header.mappings.map(\.path))
        guard found == planned else {
            let added = found.subtracting(planned).sorted(), removed = planned.subtracting(found).sorted()
            throw TernError(.badInput, "the mapping files beside the model changed since the fleet was planned (\((added.map { "new: \($0)" } + removed.map { "gone: \($0)" }).joined(separator: ", "))): plan the fleet again", path: manifest.path)
        }
    }
}
