import ArgumentParser
import Foundation
import Logging
import Tern
import TernLoop

/// What `tern migrate` and `tern plan` both take: the store, the model, the mappings, and how
/// the work is cut up.
struct MigrationInputs: ParsableArguments {
    @Argument(help: "The store to migrate.")
    var store: String

    @Option(help: "The model (see tern check --help); repeated, the models are merged. Required but with tern migrate --plan.")
    var model: [String] = []

    @Option(help: "The version to migrate to (default: the model's current version).")
    var to: String?

    @Option(help: "A mapping model file to use instead of the one found beside the model for its step (repeatable).")
    var mapping: [String] = []

    @Option(help: "A compiled model's VersionInfo.plist, to recognise Core Data stores by Apple's hashes.")
    var versionInfo: String?

    @Option(help: "Source objects per batch; for mappings that run in Swift, the most (batches are cut to fit --memory-budget and about half a second).")
    var batchSize = 10_000

    @Option(
        name: .customLong("memory-budget"),
        help: "MiB of source values the batches of a mapping that runs in Swift hold at once (default: 8, which keeps tern under 64 MiB).")
    var memoryBudgetMiB = MigrationOptions.defaultMemoryBudget >> 20

    @Option(help: "Worker threads that read and transform batches of mappings that run in Swift (default: the number of cores).")
    var workers = ProcessStats.availableParallelism

    @Flag(
        help:
            "Staged: go through every version that lies between the store's and the target (by content), each hop by the app's mapping model or inferred, instead of Core Data's route (one inferred mapping where the app ships none on the way)."
    )
    var stepByStep = false

    @Option(
        help: ArgumentHelp(
            "Go through these versions, in this order (comma-separated), each leg by Core Data's route.", valueName: "versions"))
    var through: String?

    @Flag(
        help: "Run every entity mapping through Swift (the default policy where none is named) instead of inside SQLite: slower; a cross-check of the SQL path."
    )
    var inSwift = false

    func validate() throws {
        guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1") }
        guard (1...1 << 20).contains(memoryBudgetMiB) else { throw ValidationError("--memory-budget must be from 1 to 1048576 (MiB)") }
        guard (1...256).contains(workers) else { throw ValidationError("--workers must be from 1 to 256") }
        if through != nil, stepByStep { throw ValidationError("--through and --step-by-step choose the route two ways: give one") }
        if let through, through.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty }) {
            throw ValidationError("--through lists version names separated by commas, none empty")
        }
    }

    /// Options for the run, with the policies this `tern` was built with.
    var options: MigrationOptions {
        let registry = inSwift ? CommandEnvironment.current.registry.sendingEveryMappingThroughSwift() : CommandEnvironment.current.registry
        var options = MigrationOptions(batchSize: batchSize, workers: workers, registry: registry)
        options.memoryBudget = memoryBudgetMiB << 20
        options.route = RouteChoice(stepByStep: stepByStep, through: through)
        return options
    }

    /// Loads the model and works out the steps from the store's version.
    func plan(options: MigrationOptions, logger: Logger) throws -> (StoreMigration, MigrationPlan) {
        guard !model.isEmpty else { throw ValidationError("Missing expected argument '--model <model>'") }
        let versioned = try loadModel(model, forStoreAt: store)
        let migration = StoreMigration(store: store, model: versioned, options: options, logger: logger)
        let apple = try versionInfo.map(VersionMatch.appleHashes(versionInfoAt:)) ?? [:]
        do {
            let plan = try migration.plan(to: to, mappingFiles: mapping, appleHashes: apple)
            warn(about: versioned, versions: Set(plan.versions.map(\.versionName) + [plan.storeVersion, plan.targetVersion]))
            return (migration, plan)
        } catch {
            warn(about: versioned, versions: nil)
            throw error
        }
    }
}
