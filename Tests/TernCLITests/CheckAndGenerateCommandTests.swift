import Foundation
import Testing

@Suite("tern check and tern generate, run as processes")
struct CheckAndGenerateCommandTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let bookStore = repository.appendingPathComponent("configs/bookstore").path
    static let fixtures = repository.deletingLastPathComponent().appendingPathComponent("shared/fixtures/coredata").path

    /// Removed with the suite's instance, whatever the test did.
    let scratch: ScratchFolder
    var directory: URL { scratch.url }

    init() throws {
        scratch = try ScratchFolder("tern-cli")
    }

    private func generate(version: String) throws -> String {
        let store = directory.appendingPathComponent("\(version).sqlite").path
        let outcome = try TernProcess.run(["generate", "--model", Self.bookStore, "--version", version, "--rows", "30", store])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardOutput.contains("rows/s"))
        return store
    }

    @Test("exit 0 for a store of the current version")
    func compatible() throws {
        let outcome = try TernProcess.run(["check", try generate(version: "BookStore 5"), "--model", Self.bookStore])
        #expect(outcome.status == 0)
        #expect(outcome.standardOutput.hasPrefix("compatible: the store was written by BookStore 5"))
    }

    @Test("exit 3 for an older version, naming both versions, also as JSON")
    func migrationNeeded() throws {
        let store = try generate(version: "BookStore 2")
        let outcome = try TernProcess.run(["check", store, "--model", Self.bookStore, "--json"])
        #expect(outcome.status == 3)
        let object = try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) as? [String: Any]
        #expect(object?["status"] as? String == "migration-needed")
        #expect(object?["storeVersion"] as? String == "BookStore 2")
        #expect(object?["currentVersion"] as? String == "BookStore 5")
        #expect(object?["evidence"] as? String == "apple-hashes")
    }

    @Test("--model given three times merges the models, as DuckDuckGo opens its store: recognised by Core Data's hashes; generate makes the merged version")
    func mergedModels() throws {
        let base = Self.repository.deletingLastPathComponent().appendingPathComponent("shared/fixtures/corpus/duckduckgo__iOS").path
        let models = ["DuckDuckGo/AppRatingPrompt.xcdatamodeld", "Core/HTTPSUpgrade.xcdatamodeld", "DuckDuckGo/RemoteMessaging.xcdatamodeld"]
            .flatMap { ["--model", "\(base)/\($0)"] }
        let outcome = try TernProcess.run(["check", "\(base)/DuckDuckGoTests/AppRatingPrompt_v1/Database.sqlite"] + models)
        #expect(outcome.status == 3, "\(outcome.standardOutput)\(outcome.standardError)")
        #expect(
            outcome.standardOutput.contains(
                "written by AppRatingPrompt + HTTPSUpgrade 3 + RemoteMessaging; the current version is AppRatingPrompt 2 + HTTPSUpgrade 3 + RemoteMessaging (recognised by apple-hashes)"
            ),
            "\(outcome.standardOutput)")
        let store = directory.appendingPathComponent("merged.sqlite").path
        #expect(try TernProcess.run(["generate", "--rows", "5", store] + models).status == 0)
        #expect(try TernProcess.run(["check", store] + models).status == 0)
        // One model alone does not describe the store.
        #expect(try TernProcess.run(["check", store, "--model", models[1]]).status == 4)
    }

    @Test("a model Xcode compiles though it looks wrong (YES as an Integer 32's default) is used, with a warning on standard error")
    func modelWarning() throws {
        let version = directory.appendingPathComponent("Flags.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try Data(
            #"<?xml version="1.0"?><model><entity name="Flag"><attribute name="count" attributeType="Integer 32" defaultValueString="YES"/></entity></model>"#
                .utf8
        )
        .write(to: version.appendingPathComponent("contents"))
        let store = directory.appendingPathComponent("flags.sqlite").path
        let outcome = try TernProcess.run(["generate", "--model", version.path, "--rows", "3", store])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(
            outcome.standardError.contains(
                "tern: warning: \(version.path)/contents: entity Flag, attribute count: defaultValueString \"YES\" is not an integer; read as 0"),
            "\(outcome.standardError)")
    }

    @Test(
        "a mapping model naming the app's own policy class: refused (65) naming it, saying what to do, and listing what the user registered, not Tern's example policies"
    )
    func appPolicyNamed() throws {
        let base = "\(Self.fixtures)/hwaxxer__BookMigration/BookMigration"
        let store = directory.appendingPathComponent("Model1.sqlite").path
        try FileManager.default.copyItem(atPath: base + "/Model1.sqlite", toPath: store)
        let outcome = try TernProcess.run(["plan", store, "--model", base + "/Model.xcdatamodeld"])
        #expect(outcome.status == 65, "\(outcome.standardError)")
        #expect(
            outcome.standardError.contains(
                "names the migration policy MHWBookToBookPolicy, which is not registered (registered: none). It is the app's own NSEntityMigrationPolicy subclass"
            ),
            "\(outcome.standardError)")
        #expect(
            outcome.standardError.contains("tern policy scaffold --model MODEL --out DIR") && !outcome.standardError.contains("AuthorSplitPolicy"),
            "\(outcome.standardError)")
    }

    @Test("exit 4 when no version wrote the store, with the closest version's differences")
    func noMatch() throws {
        let store = "\(Self.fixtures)/hwaxxer__BookMigration/BookMigration/Model1.sqlite"
        let outcome = try TernProcess.run(["check", store, "--model", Self.bookStore])
        #expect(outcome.status == 4)
        #expect(outcome.standardOutput.contains("no version of the model wrote this store"))
        #expect(outcome.standardOutput.contains("the store has a table ZUSER the version does not"))
    }

    @Test("a Core Data store is recognised by Core Data's hashes: wibosco store 1 needs migrating to model 4")
    func coreDataStore() throws {
        let base = "\(Self.fixtures)/wibosco__CoreDataMigrationRevised-Example"
        let outcome = try TernProcess.run([
            "check", "\(base)/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_1.sqlite",
            "--model", "\(base)/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld",
        ])
        #expect(outcome.status == 3)
        #expect(
            outcome.standardOutput.contains(
                "written by CoreDataMigration_Example; the current version is CoreDataMigration_Example 4 (recognised by apple-hashes)"))
    }

    @Test("a bad model exits 65 naming the file; an unknown version exits 65 listing the versions")
    func badModel() throws {
        let model = directory.appendingPathComponent("bad.yaml")
        try Data("entities:\n  Book:\n    relationships:\n      shelf: { destination: Shelf }\n".utf8).write(to: model)
        let outcome = try TernProcess.run(["generate", "--model", model.path, "--rows", "1", directory.appendingPathComponent("x.sqlite").path])
        #expect(outcome.status == 65)
        #expect(outcome.standardError.contains("bad.yaml"))
        #expect(outcome.standardError.contains("entity Book, relationship shelf: destination entity Shelf does not exist"))
        let unknown = try TernProcess.run([
            "generate", "--model", Self.bookStore, "--version", "BookStore 9", "--rows", "1", directory.appendingPathComponent("y.sqlite").path,
        ])
        #expect(unknown.status == 65)
        #expect(unknown.standardError.contains("BookStore 1, BookStore 2"))
    }

    @Test("generate refuses to overwrite an existing store")
    func refusesOverwrite() throws {
        let store = try generate(version: "BookStore 1")
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let outcome = try TernProcess.run(["generate", "--model", Self.bookStore, "--rows", "5", store])
        #expect(outcome.status == 65)
        #expect(outcome.standardError.contains("refusing to overwrite"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    }
}
