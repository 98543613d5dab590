import Foundation
import Testing

@Suite("tern infer, run as a process")
struct InferCommandTests {
    static let bookStore = CheckAndGenerateCommandTests.bookStore

    @Test("infers BookStore 2 → 3 (the rename) as Tern's mapping format, to a file")
    func infersToFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-infer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("v2-to-v3.yaml").path
        let outcome = try TernProcess.run(["infer", "--model", Self.bookStore, "--from", "BookStore 2", "--to", "BookStore 3", "-o", output])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let text = try String(contentsOfFile: output, encoding: .utf8)
        #expect(text.contains("- name: BookToPublication\n  type: transform\n  source: Book\n  destination: Publication"))
        #expect(try TernProcess.run(["infer", "--model", Self.bookStore, "--from", "BookStore 2", "-o", output]).status == 65)
    }

    @Test("a step that cannot be inferred exits 5 with every reason")
    func cannotInfer() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-infer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "name: M\ncurrent: b\nversions: [a.yaml, b.yaml]\n".write(to: directory.appendingPathComponent("model.yaml"), atomically: true, encoding: .utf8)
        try "version: a\nentities:\n  Book:\n    attributes:\n      isbn: string\n".write(
            to: directory.appendingPathComponent("a.yaml"), atomically: true, encoding: .utf8)
        try "version: b\nentities:\n  Book:\n    attributes:\n      isbn: integer64\n      pages: { type: integer32, optional: false }\n".write(
            to: directory.appendingPathComponent("b.yaml"), atomically: true, encoding: .utf8)
        let outcome = try TernProcess.run(["infer", "--model", directory.path, "--from", "a"])
        #expect(outcome.status == 5)
        #expect(outcome.standardError.contains("entity Book, attribute isbn: type changed from String to Integer 64, which cannot be inferred"))
        #expect(outcome.standardError.contains("entity Book, attribute pages: new non-optional attribute with no default value"))
        #expect(try TernProcess.run(["infer", "--model", directory.path, "--from", "c"]).status == 65)
    }

    @Test("tern check says whether the step to the current version is lightweight")
    func checkReportsLightweight() throws {
        let base = "\(CheckAndGenerateCommandTests.fixtures)/wibosco__CoreDataMigrationRevised-Example"
        let outcome = try TernProcess.run([
            "check", "\(base)/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_2.sqlite",
            "--model", "\(base)/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld", "--json",
        ])
        #expect(outcome.status == 3)
        let object = try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) as? [String: Any]
        #expect(object?["lightweight"] as? Bool == true)
    }
}
