import ArgumentParser
import Foundation
import Tern

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run Tern's main job on a built-in example.",
        discussion: """
            Generates a BookStore version 1 store (configs/bookstore) with synthetic books, categories \
            and pages, inspects it without the model, and checks it against the model: it was written \
            by version 1 and needs migrating to version 5. The migration itself joins the demo as the \
            engine lands.
            """
    )

    @Option(help: "Objects per entity (books, categories and pages each).")
    var rows = 100_000

    @Option(help: "The BookStore model directory (default: configs/bookstore in this checkout).")
    var model: String?

    @Option(help: "Where to write the example store (default: a new temporary directory, removed afterwards).")
    var output: String?

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

            let bookStore = try ModelLoader.load(model ?? Self.findBookStoreModel())
            let first = bookStore.versions[0]
            logger.info("generating", metadata: ["path": "\(path)", "version": "\(first.versionName)"])
            let report = try DataGenerator.generate(model: first, at: path, rows: rows, seed: 1)
            print("1. Generated a \(first.versionName) store: \(report.summary).\n")
            print("2. What the store says about itself, read without a model:\n")
            print(MetadataReport.text(try StoreMetadata.read(storeAt: path), path: path))
            let match = try VersionMatch.find(in: bookStore, storeAt: path)
            print("\n3. Checked against \(bookStore.path):\n")
            print(CheckReport(match: match, model: bookStore).text)
        }
    }

    /// configs/bookstore in the working directory, or in the checkout the binary was built in.
    private static func findBookStoreModel() throws -> String {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let candidates = [
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
            executable.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent(),  // .build/<config>/tern
            executable.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent(),  // .build/<triple>/<config>/tern
        ].map { $0.appendingPathComponent("configs/bookstore").path }
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0 + "/model.yaml") }) else {
            throw TernError(.missingInput, "the BookStore model was not found in \(candidates.joined(separator: " or ")); pass --model DIR")
        }
        return found
    }
}
