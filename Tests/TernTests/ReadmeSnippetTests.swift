import Foundation
import Testing
import Tern
import TernExamples
import TernGenerate
import TernTesting

// The README's "Using Tern as a library" shows the code between each `// README: NAME` line and
// the next `// README: end` exactly (a test below compares them), so every snippet it shows
// compiles, and runs here against real stores.

// README: migrate
/// Migrates `store` to the model's current version into `output`, printing progress; a
/// cancelled task stops at the next batch boundary with the work kept for a resume.
func migrate(store: String, into output: String, model directory: String, resume: Bool = false) async throws -> StoreMigration.Report {
    let model = try ModelLoader.load(directory)
    var options = MigrationOptions(batchSize: 5_000)
    options.registry.register(BookStoreExample.AuthorSplitPolicy(), as: "PublicationToPublicationMigrationPolicy")
    let migration = StoreMigration(store: store, model: model, options: options)
    let plan = try migration.plan()  // fails here if a mapping names a policy not registered
    let running = migration.start(plan, output: output, resume: resume)
    let printer = Task {
        let tracker = ProgressTracker()
        for await event in running.events {
            let progress = tracker.record(event)
            if case .passFinished(let pass) = event {
                print("\(progress.stepName) pass \(pass.pass): \(pass.objects) objects, \(Int(progress.fraction * 100))%")
            }
        }
    }
    defer { printer.cancel() }
    do {
        return try await running.report
    } catch let error as TernFailure where error.isResumable {
        print("stopped (\(error.kind)): run again with resume: true to continue")
        throw error
    }
}
// README: end

// README: policy-test
@Test("the author split, tested on two literal books")
func authorSplit() async throws {
    let model = try ModelLoader.load(Configs.path("bookstore"))
    let store = try TestStore(model: model, version: "BookStore 3") { store in
        try store.insert("Publication", ["title": "Dune", "author": "Frank Herbert"])
        try store.insert("Publication", ["title": "Emma", "author": nil])
    }
    var registry = PolicyRegistry()
    registry.register(BookStoreExample.AuthorSplitPolicy(), as: "PublicationToPublicationMigrationPolicy")
    let migrated = try await store.migrated(to: "BookStore 4", registry: registry)
    let names = try migrated.objects("Publication").map { [$0["firstName"], $0["lastName"]] }
    #expect(names == [["Frank", "Herbert"], [nil, nil]])
}
// README: end

@Suite("The README's library snippets: compiled, run, and shown as they are")
struct ReadmeSnippetTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The code between `// README: NAME` and `// README: end` in this file, by name.
    static func snippets(in text: String, start: String, end: String) -> [String: String] {
        var found: [String: String] = [:]
        var name: String?
        var lines: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if let open = name {
                if line == end { found[open] = lines.joined(separator: "\n"); name = nil } else { lines.append(line) }
            } else if line.hasPrefix(start) {
                name = String(line.dropFirst(start.count))
                lines = []
            }
        }
        return found
    }

    @Test("each snippet the README shows is the code compiled here")
    func shownAsCompiled() throws {
        let source = try String(contentsOf: Self.repository.appendingPathComponent("Tests/TernTests/ReadmeSnippetTests.swift"), encoding: .utf8)
        let readme = try String(contentsOf: Self.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let compiled = Self.snippets(in: source, start: "// README: ", end: "// README: end")
        let shown = Self.snippets(in: readme, start: "<!-- snippet: ", end: "```").mapValues { block in
            // "<!-- snippet: NAME -->" then "```swift", then the code up to the closing fence.
            block.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(separator: "\n")
        }
        #expect(Set(compiled.keys) == ["migrate", "policy-test"])
        for (name, code) in compiled {
            #expect(shown[name + " -->"] == code, "README snippet \(name) differs from Tests/TernTests/ReadmeSnippetTests.swift")
        }
    }

    @Test("the migration snippet migrates a BookStore 1 store to 5; cancelled, it stops resumably and resumes")
    func migrationSnippet() async throws {
        let directory = try TemporaryDirectory()
        let model = try ModelLoader.load(Configs.path("bookstore"))
        let store = directory.path("Books.sqlite")
        _ = try DataGenerator.generate(model: model.versions[0], at: store, rows: 20_000, seed: 5)
        let output = directory.path("Books-5.sqlite")

        // Cancelled as it starts (no sleep guessing how far it got), it stops at its first stop
        // check, resumably, and a resume finishes it; should the whole run beat the cancellation,
        // the first run's report is the one.
        let cancelled = Task { try await migrate(store: store, into: output, model: Configs.path("bookstore")) }
        cancelled.cancel()
        var report: StoreMigration.Report
        switch await cancelled.result {
        case .success(let finished):
            report = finished
        case .failure(let error):
            #expect((error as? TernFailure)?.isResumable == true, "\(error)")
            report = try await migrate(store: store, into: output, model: Configs.path("bookstore"), resume: true)
        }
        #expect(report.destination == output)
        #expect(report.plan.targetVersion == "BookStore 5")
    }
}
