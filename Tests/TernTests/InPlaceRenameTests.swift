import Foundation
import Logging
import Testing
@testable import Tern
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
        for (name, text) in files { try text.write(toFile: folder.path(name), atomically: true, encoding: .utf8) }
        return (try ModelLoader.load(folder.url.path), folder)
    }

    @Test("step by step, each step in place: every value lands under its new name", arguments: [false, true])
    func swappedNames(composed: Bool) async throws {
        let (model, folder) = try model()
        defer { withExtendedLifetime(folder) {} }
        let store = try TestStore(model: model, version: "Swap 1") { store in
            for key in 1...3 { try store.insert("Person", ["a": .text("a\(key)"), "b": .text("b\(key)"), "c": .text("c\(key)"), "d": key == 2 ? nil : .text("d\(key)")]) }
        }
        var options = MigrationOptions()
        options.composeSteps = composed
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
}
