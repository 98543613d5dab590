import Foundation
import Testing

/// Names that would land on one SQLite object — SQLite compares them without regard to case, and
/// Core Data's own tables and Tern's work tables share the store — are refused before any work,
/// naming both holders: never copied into and then dropped, never a bare SQLite error.
@Suite("Two things one store would name alike are refused before any work")
struct SchemaNameTests {
    let scratch: ScratchFolder
    var directory: URL { scratch.url }

    init() throws { scratch = try ScratchFolder("tern-names") }

    /// A two-version model folder: version 1 has `Item`; version 2 adds `extra` (YAML lines under
    /// `entities:`).
    private func model(_ name: String, adding extra: String) throws -> String {
        let folder = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let files = [
            "model.yaml": "name: Names\ncurrent: Names 2\nversions: [v1.yaml, v2.yaml]\n",
            "v1.yaml": "version: Names 1\nentities:\n  Item:\n    attributes: { title: string }\n",
            "v2.yaml": "version: Names 2\nentities:\n  Item:\n    attributes: { title: string }\n" + extra,
        ]
        for (file, text) in files { try text.write(to: folder.appendingPathComponent(file), atomically: true, encoding: .utf8) }
        return folder.path
    }

    /// A version-1 store of `model` with 20 items.
    private func store(_ name: String, model: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        let made = try TernProcess.run(["generate", "--model", model, "--version", "Names 1", "--rows", "20", path])
        #expect(made.status == 0, "\(made.standardError)")
        return path
    }

    /// `migrate` refuses (65) naming `holders`, leaves the store's bytes and folder as they were,
    /// and `check` does not call the step lightweight.
    private func expectRefused(_ store: String, model: String, naming holders: [String]) throws {
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let run = try TernProcess.run(["migrate", store, "--model", model, "--progress", "none"])
        #expect(run.status == 65, "\(run.standardError)")
        for holder in holders { #expect(run.standardError.contains(holder), "\(run.standardError)") }
        #expect(!run.standardError.contains("--resume"), "\(run.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == files)
    }

    @Test("an entity named _MODELCACHE would be Core Data's own Z_MODELCACHE: refused, not copied and dropped")
    func coreDataTables() throws {
        for (entity, table) in [("_MODELCACHE", "Z_MODELCACHE"), ("_METADATA", "Z_METADATA"), ("_primaryKey", "Z_PRIMARYKEY")] {
            let model = try model("m\(table)", adding: "  \(entity):\n    attributes: { payload: string }\n")
            let store = try store("\(table).sqlite", model: model)
            try expectRefused(store, model: model, naming: ["Core Data's own table \(table)", "the table of entity \(entity)"])
            let check = try TernProcess.run(["check", store, "--model", model])
            #expect(!check.standardOutput.contains("a lightweight migration"), "\(check.standardOutput)")
            #expect(check.standardOutput.contains("Core Data's own table \(table)"), "\(check.standardOutput)")
        }
    }

    @Test("Item beside ITEM, and an entity _1TAGS beside Item.tags' join table Z_1TAGS: refused by generate and migrate")
    func caseAndJoinTables() throws {
        let cases = [
            ("case", "  ITEM:\n    attributes: { label: string }\n", ["the table of entity Item", "the table of entity ITEM"]),
            (
                "join",
                "  Tag:\n    relationships:\n      items: { destination: Item, toMany: true, inverse: tags }\n"
                    + "  _1TAGS:\n    attributes: { label: string }\n",
                ["the join table of", "the table of entity _1TAGS"]
            ),
        ]
        for (name, extra, holders) in cases {
            var model = try model(name, adding: extra)
            if name == "join" {
                // Item needs the other side of the many-to-many in version 2.
                let v2 = URL(fileURLWithPath: model).appendingPathComponent("v2.yaml")
                let text = try String(contentsOf: v2, encoding: .utf8).replacingOccurrences(
                    of: "  Item:\n    attributes: { title: string }\n",
                    with: "  Item:\n    attributes: { title: string }\n    relationships:\n      tags: { destination: Tag, toMany: true, inverse: items }\n")
                try text.write(to: v2, atomically: true, encoding: .utf8)
                model = v2.deletingLastPathComponent().path
            }
            let store = try store("\(name).sqlite", model: model)
            try expectRefused(store, model: model, naming: holders)
            let generated = directory.appendingPathComponent("\(name)-2.sqlite").path
            let generate = try TernProcess.run(["generate", "--model", model, "--version", "Names 2", "--rows", "5", generated])
            #expect(generate.status == 65, "\(generate.standardError)")
            for holder in holders { #expect(generate.standardError.contains(holder), "\(generate.standardError)") }
            #expect(!FileManager.default.fileExists(atPath: generated))
        }
    }

    @Test("the app's own table where the new version puts an entity, or named like tern's work tables: refused, naming it")
    func appObjects() throws {
        let model = try model("app", adding: "  Place:\n    attributes: { name: string }\n")
        let clashing = try store("clashing.sqlite", model: model)
        try SQLiteShell.run(clashing, "CREATE TABLE ZPLACE (id INTEGER PRIMARY KEY, note TEXT); INSERT INTO ZPLACE VALUES (1, 'the app''s');")
        try expectRefused(clashing, model: model, naming: ["the store's own table ZPLACE", "the table of entity Place"])

        let work = try store("work.sqlite", model: model)
        try SQLiteShell.run(work, "CREATE TABLE tern_rebuilt_ZITEM (id INTEGER PRIMARY KEY);")
        try expectRefused(work, model: model, naming: ["the store's own table tern_rebuilt_ZITEM", "work tables"])

        // An index on a model table named as Core Data names its own (`Z…`) is taken for Core
        // Data's: the new version's index of that name replaces it, never a clash mid-step.
        let indexed = try self.model("indexed", adding: "")
        let v2 = URL(fileURLWithPath: indexed).appendingPathComponent("v2.yaml")
        try "version: Names 2\nentities:\n  Item:\n    hashModifier: \"2\"\n    attributes: { title: { type: string, indexed: true } }\n".write(
            to: v2, atomically: true, encoding: .utf8)
        let appIndex = try store("appindex.sqlite", model: indexed)
        try SQLiteShell.run(appIndex, "CREATE INDEX ZITEM_ZTITLE_INDEX ON ZITEM (ZTITLE);")
        let replaced = try TernProcess.run(["migrate", appIndex, "--model", indexed, "--progress", "none"])
        #expect(replaced.status == 0, "\(replaced.standardError)")
        #expect(try SQLiteShell.run(appIndex, "SELECT count(*) FROM sqlite_master WHERE name = 'ZITEM_ZTITLE_INDEX';") == "1\n")

        // An app index of another name is the app's, and kept out of the way.
        let fine = try store("fine.sqlite", model: model)
        try SQLiteShell.run(fine, "CREATE TABLE app_settings (key TEXT PRIMARY KEY, value TEXT);")
        let run = try TernProcess.run(["migrate", fine, "--model", model, "--progress", "none"])
        #expect(run.status == 0, "\(run.standardError)")
    }
}
