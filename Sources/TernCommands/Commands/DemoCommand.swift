import ArgumentParser
import Foundation
import Tern
import TernGenerate

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run Tern's main job on a built-in example.",
        discussion: """
            Generates a BookStore version 1 store (configs/bookstore) with synthetic books, categories \
            and pages, inspects it without the model, checks it against the model (written by version \
            1, to be migrated to version 5), shows the plan, migrates it through the four steps with \
            live progress (an inferred step applied as schema changes, the Book → Publication rename, \
            the author split by a policy in Swift, the synopsis filled by a migration manager), prints \
            the per-pass summary, and checks the result.
            """
    )

    @Option(help: "Objects per entity (books, categories and pages each).")
    var rows = 300_000

    @Option(help: "The BookStore model directory (default: configs/bookstore in this checkout).")
    var model: String?

    @Option(help: "Where to write the example store (default: a new temporary directory, removed afterwards).")
    var output: String?

    @Option(help: "Progress: auto, bar, json or none (see tern migrate --help).")
    var progress = ProgressStyle.auto

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard rows >= 0 else { throw ValidationError("--rows cannot be negative") }
    }

    func run() throws {
        let logger = global.makeLogger(label: "tern.demo")
        try reportingErrors {
            let fileManager = FileManager.default
            let directory = fileManager.temporaryDirectory.appendingPathComponent("tern-demo-\(UUID().uuidString)")
            let path = output ?? directory.appendingPathComponent("BookStore.sqlite").path
            if output == nil {
                try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
            }
            defer { if output == nil { try? fileManager.removeItem(at: directory) } }

            let bookStore = try ModelLoader.load(model ?? ConfigsDirectory.find("bookstore"))
            let first = bookStore.versions[0]
            logger.info("generating", metadata: ["path": "\(path)", "version": "\(first.versionName)"])
            let report = try DataGenerator.generate(model: first, at: path, rows: rows, seed: 1)
            print("1. Generated a \(first.versionName) store: \(report.summary).\n")
            print("2. What the store says about itself, read without a model:\n")
            print(MetadataReport.text(try StoreMetadata.read(storeAt: path), path: path))
            let match = try VersionMatch.find(in: bookStore, storeAt: path)
            print("\n3. Checked against \(bookStore.path):\n")
            print(CheckReport(match: match, model: bookStore).text)

            var options = MigrationOptions(registry: CommandEnvironment.current.registry)
            let renderer = progress == .json ? nil : progress.attach(to: &options)
            let migration = StoreMigration(store: path, model: bookStore, options: options, logger: logger)
            let plan = try migration.plan()
            print("\n4. The plan (tern plan):\n")
            print(PlanCommand.text(try migration.estimate(plan)))
            print("\n5. Migrating in place (tern migrate):")
            let migrated = try {
                defer { renderer?.finish() }; return try migration.runBlocking(plan)
            }()
            print(MigrationSummary.report(migrated))
            print("\n6. Checked again:\n")
            print(CheckReport(match: try VersionMatch.find(in: bookStore, storeAt: path), model: bookStore).text)
        }
    }
}
