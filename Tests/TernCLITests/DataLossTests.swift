import Foundation
import Testing

/// An inferred step that drops data says so, counted, in `tern plan` and in the summary, and
/// `--no-data-loss` refuses it.
@Suite("Data an inferred step drops is never dropped silently")
struct DataLossTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-loss-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Version 2 drops an entity, an attribute, and a relationship from both of its ends.
        let files = [
            "model.yaml": "name: Notes\ncurrent: Notes 2\nversions: [v1.yaml, v2.yaml]\n",
            "v1.yaml": """
                version: Notes 1
                entities:
                  Folder:
                    attributes: { name: string }
                    relationships:
                      notes: { destination: Note, toMany: true, inverse: folder }
                  Note:
                    attributes: { title: string, body: string }
                    relationships:
                      folder: { destination: Folder, inverse: notes }
                  Tag:
                    attributes: { label: string }
                """,
            "v2.yaml": """
                version: Notes 2
                entities:
                  Folder:
                    attributes: { name: string }
                  Note:
                    attributes: { title: string }
                """,
        ]
        for (name, text) in files { try text.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8) }
    }

    @Test("tern plan and the summary count what is dropped; --no-data-loss refuses it (65) and writes nothing")
    func droppedDataIsCounted() throws {
        let store = directory.appendingPathComponent("Notes.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", directory.path, "--version", "Notes 1", "--rows", "40", store]).status == 0)
        try SQLiteShell.run(store, "UPDATE ZNOTE SET ZBODY = NULL WHERE Z_PK <= 10;")
        let bodies = Int(try SQLiteShell.run(store, "SELECT count(ZBODY) FROM ZNOTE;").trimmingCharacters(in: .whitespacesAndNewlines))!
        let folders = Int(try SQLiteShell.run(store, "SELECT count(ZFOLDER) FROM ZNOTE;").trimmingCharacters(in: .whitespacesAndNewlines))!
        #expect(bodies > 0 && bodies <= 30 && folders > 0)
        let expected = ["entity Tag: 40 objects", "Note.body: \(bodies) non-NULL values", "Note.folder: \(folders) non-NULL values"]

        let plan = try TernProcess.run(["plan", store, "--model", directory.path])
        #expect(plan.status == 0, "\(plan.standardError)")
        for line in expected { #expect(plan.standardOutput.contains("drops (not in the new version): \(line)"), "\(plan.standardOutput)") }

        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let refused = try TernProcess.run(["migrate", store, "--model", directory.path, "--no-data-loss", "--progress", "none"])
        #expect(refused.status == 65, "\(refused.standardError)")
        for line in expected { #expect(refused.standardError.contains("  - \(line)"), "\(refused.standardError)") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)

        let migrated = try TernProcess.run(["migrate", store, "--model", directory.path, "--progress", "none"])
        #expect(migrated.status == 0, "\(migrated.standardError)")
        for line in expected { #expect(migrated.standardOutput.contains("dropped (not in the new version): \(line)"), "\(migrated.standardOutput)") }
    }
}
