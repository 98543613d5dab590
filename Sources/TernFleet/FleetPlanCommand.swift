import ArgumentParser
import Foundation
import Tern
import TernCommands
import TernLoop

struct FleetPlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Write a fleet's manifest: every store with its version and objects, and the migration by content hash.",
        discussion:
            "Each store is planned as tern migrate would plan it, so a store the run would refuse is listed now, with the reason. Exit status 0 once the manifest is written, whatever the stores' states."
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

    @Flag(help: "Staged: every version between the store's and the target, by content, instead of Core Data's route.")
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
                throw TernError(
                    .badInput,
                    "no stores: \(stores.map { "the pattern \($0) matches none" } ?? "the list names none")\(listing.leftOut.isEmpty ? "" : " (\(listing.leftOut.count) files left out: tern's own, or links)")"
                )
            }
            let planner = FleetPlanner(
                modelPath: model, target: to, mappingOverrides: mapping, versionInfo: versionInfo, stepByStep: stepByStep,
                registry: CommandEnvironment.current.registry)
            let planned = try planner.manifest(stores: listing.stores, at: manifest, parallel: parallel)
            let partial = manifest + ".tern-partial"
            do {
                try Data(try planned.text().utf8).write(to: URL(fileURLWithPath: partial))
                guard rename(partial, manifest) == 0 else {
                    throw TernError(.io, "cannot put the manifest in place: \(String(cString: strerror(errno)))", path: manifest)
                }
            } catch {
                unlink(partial)
                throw error
            }
            let count = { (state: FleetManifest.State) in planned.entries.filter { $0.state == state }.count }
            let pendingObjects = planned.entries.filter { $0.state == .pending }.reduce(0) { $0 + $1.objects }
            print(
                "Planned \(Formatting.count(planned.entries.count)) stores to \(planned.header.target) in \(manifest): "
                    + "\(Formatting.count(count(.pending))) to migrate (\(Formatting.count(pendingObjects)) objects), \(Formatting.count(count(.current))) at the target, \(Formatting.count(count(.unreadable))) unreadable"
            )
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
