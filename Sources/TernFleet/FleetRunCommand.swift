import ArgumentParser
import Foundation
import Tern
import TernCommands
import TernLoop

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
        guard batchSize >= 1, (1...1 << 20).contains(memoryBudgetMiB) else {
            throw ValidationError("--batch-size must be at least 1, --memory-budget from 1 to 1048576")
        }
        guard workers.map({ (1...256).contains($0) }) ?? true else { throw ValidationError("--workers must be from 1 to 256") }
    }

    func run() throws {
        let logger = global.makeLogger(label: "tern.fleet")
        let stop = CommandEnvironment.current.stop
        stop.installSignalHandlers()
        let summary = try reportingFleetErrors { () -> FleetRunner.Summary in
            let manifest = try FleetManifest.read(manifest)
            let model = try FleetInputs.check(manifest)
            let shard: Shard
            do { shard = try Shard.resolve(index: shardIndex, count: shardCount, environment: ProcessInfo.processInfo.environment) } catch {
                throw ValidationError("\(error)")  // the task's command line or the engine's job is wrong: 64
            }
            let resultsPath = results ?? manifest.defaultResultsFolder
            try FleetInputs.checkPlace(of: resultsPath, what: "results folder", model: manifest.resolve(manifest.header.model.path))
            let folder = try ResultsFolder(path: resultsPath)
            let apple = try manifest.header.versionInfo.map { try VersionMatch.appleHashes(versionInfoAt: manifest.resolve($0.path)) } ?? [:]
            var settings = FleetRunner.Settings(
                parallel: parallel, leaseLength: leaseSeconds, leaseWait: leaseWait, keepBackups: !discardBackups, batchSize: batchSize,
                workers: workers ?? max(1, ProcessStats.availableParallelism / parallel))
            settings.memoryBudget = memoryBudgetMiB << 20
            let runner = FleetRunner(
                manifest: manifest, model: model, appleHashes: apple, shard: shard, results: folder,
                identity: LeaseIdentity(task: Self.taskName(shard)), settings: settings,
                registry: CommandEnvironment.current.registry, shouldStop: stop.isRequested, logger: logger)
            let stores = shard.stores(of: manifest).count
            print(
                "Shard \(shard) (from \(shard.source)): \(Formatting.count(stores)) of \(Formatting.count(manifest.entries.count)) stores, \(parallel) at once; outcomes in \(folder.path)"
            )
            let summary = try runner.run()
            let counts = StoreOutcome.Status.allCases.filter { $0 != .started }.map { "\(summary.counts[$0] ?? 0) \($0.rawValue)" }
            print("Shard \(shard): " + counts.joined(separator: ", ") + (summary.retryable > 0 ? "; \(summary.retryable) left for a retry" : ""))
            return summary
        }
        if summary.exitCode != 0 { throw ExitCode(summary.exitCode) }
    }

    /// The task as its lease names it: the shard, and the engine's job where there is one.
    static func taskName(_ shard: Shard) -> String {
        let environment = ProcessInfo.processInfo.environment
        let job =
            environment["SLURM_JOB_ID"].map { "Slurm job \($0)" } ?? environment["AWS_BATCH_JOB_ID"].map { "AWS Batch job \($0)" }
            ?? (environment["JOB_COMPLETION_INDEX"] != nil ? environment["HOSTNAME"].map { "pod \($0)" } : nil)
        return "shard \(shard)" + (job.map { ", \($0)" } ?? "")
    }
}
