import Foundation
import Testing

@Suite("tern inspect and tern demo, run as processes")
struct InspectCommandTests {
    @Test("demo generates a BookStore 1 store, inspects it, finds it needs migrating to 5, plans, migrates and checks it")
    func demo() throws {
        let outcome = try TernProcess.run(["demo", "--rows", "20", "--progress", "bar"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardOutput.contains("Book     20 rows in ZBOOK"))
        #expect(outcome.standardOutput.contains("Page     20 rows in ZPAGE"))
        #expect(outcome.standardOutput.contains("migration needed: the store was written by BookStore 1; the current version is BookStore 5"))
        #expect(outcome.standardOutput.contains("PublicationToPublication [custom] Publication → Publication: about 20 rows, 1 batches, in Swift"))
        #expect(outcome.standardOutput.contains("Step 3, BookStore 4 → BookStore 5: 60 objects"))
        #expect(outcome.standardOutput.contains("compatible: the store was written by BookStore 5, the current version"))
        #expect(outcome.standardError.contains("100%  step 3/3 BookStore 4 → BookStore 5"))
    }

    @Test("inspect --json prints the documented keys")
    func json() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("BookStore.sqlite").path
        #expect(
            try TernProcess.run(["generate", "--model", CheckAndGenerateCommandTests.bookStore, "--version", "BookStore 1", "--rows", "5", store]).status == 0)

        let outcome = try TernProcess.run(["inspect", store, "--json"])
        #expect(outcome.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) as? [String: Any]
        #expect(Set((object ?? [:]).keys).isSuperset(of: ["uuid", "storeType", "versionHashes", "versionIdentifiers", "keys", "entities"]))
        let entities = object?["entities"] as? [[String: Any]]
        #expect(entities?.map { $0["name"] as? String } == ["Book", "Category", "Page"])
        #expect(entities?.first?["rowCount"] as? Int == 5)
    }

    @Test("a missing store exits 66 and names it")
    func missingStore() throws {
        let outcome = try TernProcess.run(["inspect", "/nonexistent/Store.sqlite"])
        #expect(outcome.status == 66)
        #expect(outcome.standardError.contains("/nonexistent/Store.sqlite: no such store"))
    }

    @Test("a file that is not a store exits 65")
    func notAStore() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tern-cli-\(UUID().uuidString).sqlite")
        try Data(String(repeating: "hello ", count: 300).utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let outcome = try TernProcess.run(["inspect", file.path])
        #expect(outcome.status == 65)
        #expect(outcome.standardError.contains("not an SQLite database"))
    }

    @Test("a usage error exits 64")
    func usage() throws {
        #expect(try TernProcess.run(["inspect"]).status == 64)
        #expect(try TernProcess.run(["demo", "--rows", "-1"]).status == 64)
    }
}
