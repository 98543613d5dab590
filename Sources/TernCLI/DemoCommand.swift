import ArgumentParser
import Foundation
import Tern

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run Tern's main job on a built-in example.",
        discussion: "Today: creates a BookStore example store in Core Data's layout and inspects it without a model. It grows into the full v1 → v5 migration as the engine lands."
    )

    @Option(help: "Books in the example store.")
    var books = 1_000

    @Option(help: "Pages per book.")
    var pagesPerBook = 3

    @Option(help: "Where to write the example store (default: a new temporary directory, removed afterwards).")
    var output: String?

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard books >= 0, pagesPerBook >= 0 else {
            throw ValidationError("--books and --pages-per-book cannot be negative")
        }
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

            let started = ContinuousClock.now
            try ExampleStore.createBookStore(at: path, books: books, pagesPerBook: pagesPerBook)
            let elapsed = ContinuousClock.now - started
            logger.info("created example store", metadata: ["path": "\(path)"])
            print("Created a BookStore example store with \(books) books and \(books * pagesPerBook) pages in \(elapsed.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow))).\n")
            print(MetadataReport.text(try StoreMetadata.read(storeAt: path), path: path))
        }
    }
}
