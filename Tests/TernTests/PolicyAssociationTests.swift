import Foundation
import Testing
import Tern
import TernSQLite
import TernTesting

/// A source object the policy never associates with a destination object keeps nothing the
/// mapping's relationships would link through it. Core Data says nothing; Tern counts such
/// objects, names the first few, and refuses them with `refuseDataLoss` (`--strict`).
@Suite("A policy's forgotten associate is counted, not silent")
struct PolicyAssociationTests {
    /// Creates every note's destination object, but associates only the odd ones.
    struct ForgetfulPolicy: EntityMigrationPolicy {
        func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            let note = context.create(try context.defaultDestination(for: source))
            if source.key % 2 == 1 { context.associate(source, with: note) }
        }
    }

    static let mapping = """
        source: N 1
        destination: N 2
        entityMappings:
          - name: NoteToNote
            type: custom
            source: Note
            destination: Note
            policy: ForgetfulPolicy
            attributes:
              title: $source.title

        """

    @Test("counted and named in the report's dropped data; refused with refuseDataLoss")
    func forgottenAssociate() async throws {
        let folder = try TemporaryDirectory()
        let version = { (name: String, modifier: String) in
            "version: \(name)\nentities:\n  Note:\n    hashModifier: \"\(modifier)\"\n    attributes: { title: string }\n"
        }
        let model = try folder.model([
            "model.yaml": "name: N\ncurrent: N 2\nversions: [v1.yaml, v2.yaml]\n", "v1.yaml": version("N 1", "1"), "v2.yaml": version("N 2", "2"),
        ])
        let store = try TestStore(model: model, version: "N 1") { store in
            for index in 1...10 { try store.insert("Note", ["title": .text("n\(index)")]) }
        }
        var registry = PolicyRegistry()
        registry.register(ForgetfulPolicy(), as: "ForgetfulPolicy")
        var strict = MigrationOptions()
        strict.refuseDataLoss = true
        await #expect(throws: TernFailure.self) { _ = try await store.migrated(to: "N 2", mapping: Self.mapping, registry: registry, options: strict) }
        do {
            _ = try await store.migrated(to: "N 2", mapping: Self.mapping, registry: registry, options: strict)
        } catch let failure as TernFailure {
            #expect("\(failure.underlying)".contains("entity Note: 5 source objects ForgetfulPolicy associated with no destination object"), "\(failure)")
            #expect("\(failure.underlying)".contains("first: 2, 4, 6"), "\(failure)")
        }
        let migration = StoreMigration(store: store.path, model: model, options: MigrationOptions(registry: registry))
        let file = folder.path("mapping.yaml")
        try Self.mapping.write(toFile: file, atomically: true, encoding: .utf8)
        let plan = try migration.plan(mappingFiles: [file])
        let report = try await migration.run(plan, output: folder.path("out.sqlite"))
        let mapping = try #require(report.steps.first?.mappings.first { $0.name == "NoteToNote" })
        #expect(mapping.neverAssociated == 5)
        #expect(report.steps.first?.dropped.contains { $0.neverAssociatedBy == "ForgetfulPolicy" && $0.values == 5 } == true)
    }
}
