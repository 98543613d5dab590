import Foundation
import Logging
import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore
import TernTesting

/// A step applied as schema changes renames columns through names of their own, so renames may
/// swap names or pass one along a row (a → b, b → c) without two columns meeting.
@Suite("Renames applied in place: swapped and shifted names")
struct InPlaceRenameTests {
    /// Version 2 swaps `a` and `b` and passes `c` on to `d`, `d` to `e`; version 3, with the
    /// first version's names and no renaming identifiers, matches them back (a property's
    /// identifier is its renaming identifier, or else its name), and adds `f`.
    private func model() throws -> (VersionedModel, TemporaryDirectory) {
        let folder = try TemporaryDirectory()
        let files = [
            "model.yaml": "name: Swap\ncurrent: Swap 3\nversions: [v1.yaml, v2.yaml, v3.yaml]\n",
            "v1.yaml": "version: Swap 1\nentities:\n  Person:\n    attributes: { a: string, b: string, c: string, d: string }\n",
            "v2.yaml": """
            version: Swap 2
            entities:
              Person:
                attributes:
                  a: { type: string, renamingIdentifier: b }
                  b: { type: string, renamingIdentifier: a }
                  d: { type: string, renamingIdentifier: c }
                  e: { type: string, renamingIdentifier: d }
            """,
            "v3.yaml": """
            version: Swap 3
            entities:
              Person:
                attributes: { a: string, b: string, c: string, d: string, f: string }
            """,
        ]
        return (try folder.model(files), folder)
    }

    @Test("step by step, each step in place: every value lands under its new name", arguments: [RouteChoice.through(["Swap 2"]), .coreData])
    func swappedNames(route: RouteChoice) async throws {
        let composed = route == .coreData
        let (model, folder) = try model()
        defer { withExtendedLifetime(folder) {} }
        let store = try TestStore(model: model, version: "Swap 1") { store in
            for key in 1...3 {
                try store.insert("Person", ["a": .text("a\(key)"), "b": .text("b\(key)"), "c": .text("c\(key)"), "d": key == 2 ? nil : .text("d\(key)")])
            }
        }
        var options = MigrationOptions()
        options.route = route
        let plan = try StoreMigration(store: store.path, model: model, options: options, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }).plan()
        #expect(plan.steps.count == (composed ? 1 : 2))
        if !composed { #expect(plan.steps.allSatisfy { LightweightInPlace.statements(for: $0) != nil }, "both steps are schema changes") }
        let second = try await store.migrated(to: "Swap 2", options: options).objects("Person")
        #expect(second.map { $0["a"] } == ["b1", "b2", "b3"] && second.map { $0["b"] } == ["a1", "a2", "a3"])
        #expect(second.map { $0["d"] } == ["c1", "c2", "c3"] && second.map { $0["e"] } == ["d1", nil, "d3"])
        let third = try await store.migrated(options: options).objects("Person")
        #expect(third.map { $0["a"] } == ["a1", "a2", "a3"] && third.map { $0["b"] } == ["b1", "b2", "b3"])
        #expect(third.map { $0["c"] } == ["c1", "c2", "c3"] && third.map { $0["d"] } == ["d1", nil, "d3"])
    }

    @Test(
        "version 2 renames name to fullName (identifier name), version 3 adds a new name: through version 2, fullName keeps the values and name is new and empty; inferred from 1 to 3 directly, the name that stayed keeps them; what the plan says runs in place is what runs",
        arguments: [RouteChoice.through(["R 2"]), .coreData])
    func newNameBesideRenamed(route: RouteChoice) async throws {
        let folder = try TemporaryDirectory()
        let model = try folder.model([
            "model.yaml": "name: R\ncurrent: R 3\nversions: [v1.yaml, v2.yaml, v3.yaml]\n",
            "v1.yaml": "version: R 1\nentities:\n  P:\n    attributes: { name: string, age: integer32 }\n",
            "v2.yaml": "version: R 2\nentities:\n  P:\n    attributes: { fullName: { type: string, renamingIdentifier: name }, age: integer32 }\n",
            "v3.yaml":
                "version: R 3\nentities:\n  P:\n    attributes: { fullName: { type: string, renamingIdentifier: name }, name: string, age: integer32 }\n",
        ])
        let store = try TestStore(model: model, version: "R 1") { store in
            for key in 1...3 { try store.insert("P", ["name": .text("n\(key)"), "age": .integer(Int64(key))]) }
        }
        var options = MigrationOptions()
        options.route = route
        let migration = StoreMigration(store: store.path, model: model, options: options, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let plan = try migration.plan()
        let planned = plan.steps.map { LightweightInPlace.statements(for: $0) ?? [] }
        let output = folder.path("out.sqlite")
        let report = try await migration.run(plan, output: output)
        #expect(report.steps.map(\.appliedInPlace) == planned)
        let objects = try await store.migrated(options: options).objects("P")
        let staged = route != .coreData
        #expect(objects.map { $0["fullName"] } == (staged ? ["n1", "n2", "n3"] : [nil, nil, nil]))
        #expect(objects.map { $0["name"] } == (staged ? [nil, nil, nil] : ["n1", "n2", "n3"]))
    }

    @Test(
        "a string's length rules count UTF-16 units, as Core Data validates them: five emoji are 10, longer than 8; three kanji (9 bytes) are 3, shorter than 4"
    )
    func lengthRuleCountsUTF16() async throws {
        let folder = try TemporaryDirectory()
        let files = [
            "model.yaml": "name: Lengths\ncurrent: Lengths 2\nversions: [v1.yaml, v2.yaml]\n",
            "v1.yaml": "version: Lengths 1\nentities:\n  Note:\n    attributes: { title: string }\n",
            "v2.yaml": "version: Lengths 2\nentities:\n  Note:\n    attributes: { title: { type: string, minLength: 4, maxLength: 8 }, seen: boolean }\n",
        ]
        let model = try folder.model(files)
        let fits = try TestStore(model: model, version: "Lengths 1") { store in try store.insert("Note", ["title": "12345678"]) }
        // A mapping file, so the step is copied and validated rather than applied in place.
        let mapping = """
            source: Lengths 1
            destination: Lengths 2
            entityMappings:
              - { name: NoteToNote, type: copy, source: Note, destination: Note, attributes: { title: $source.title } }
            """
        #expect(try await fits.migrated(mapping: mapping).objects("Note").map { $0["title"] } == ["12345678"])
        for (title, rule) in [("😀😀😀😀😀", "title is longer than 8"), ("日本語", "title is shorter than 4")] {
            let store = try TestStore(model: model, version: "Lengths 1") { store in try store.insert("Note", ["title": .text(title)]) }
            do {
                _ = try await store.migrated(mapping: mapping)
                Issue.record("\(title) passed")
            } catch {
                #expect("\(error)".contains(rule), "\(error)")
            }
        }
    }

    @Test("entities renamed along a row (A → B while B → C) in one step applied in place: each table lands under its new name")
    func shiftedTables() async throws {
        let folder = try TemporaryDirectory()
        let files = [
            "model.yaml": "name: Shift\ncurrent: Shift 2\nversions: [v1.yaml, v2.yaml]\n",
            "v1.yaml": "version: Shift 1\nentities:\n  A:\n    attributes: { label: string }\n  B:\n    attributes: { label: string }\n",
            "v2.yaml":
                "version: Shift 2\nentities:\n  B:\n    renamingIdentifier: A\n    attributes: { label: string }\n  C:\n    renamingIdentifier: B\n    attributes: { label: string }\n",
        ]
        let model = try folder.model(files)
        let store = try TestStore(model: model, version: "Shift 1") { store in
            try store.insert("A", ["label": "was A"])
            try store.insert("B", ["label": "was B"])
        }
        let plan = try StoreMigration(store: store.path, model: model, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }).plan()
        #expect(plan.steps.count == 1 && LightweightInPlace.statements(for: plan.steps[0]) != nil, "applied in place")
        let migrated = try await store.migrated()
        #expect(try migrated.objects("B").map { $0["label"] } == ["was A"])
        #expect(try migrated.objects("C").map { $0["label"] } == ["was B"])
    }
}
