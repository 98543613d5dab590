import Foundation
import Testing
import Tern
import TernSQLite
import TernTesting

/// A policy relates one side of a relationship with an inverse; Core Data's `setValue(_:forKey:)`
/// sets the inverse too, and so does Tern: a one-to-one set from either side keeps both keys,
/// and the run verifies.
@Suite("A policy's link keeps both sides of a one-to-one")
struct PolicyInverseTests {
    /// Makes a `Card` for each person and relates the one side `fromCard` names.
    struct CardMaker: EntityMigrationPolicy {
        let fromCard: Bool

        func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            let person = context.create(try context.defaultDestination(for: source))
            context.associate(source, with: person)
            let card = context.create(DestinationObject(entity: "Card", values: ["number": .integer(source.key)]))
            if fromCard {
                context.relate(card, "person", to: .created(person))
            } else {
                context.relate(person, "card", to: .created(card))
            }
        }
    }

    static let mapping = """
        source: P 1
        destination: P 2
        entityMappings:
          - name: PersonToPerson
            type: custom
            source: Person
            destination: Person
            policy: CardMaker
            attributes:
              name: $source.name

        """

    /// People in version 1; in version 2, each person and a card point at each other.
    static func model(in folder: TemporaryDirectory) throws -> VersionedModel {
        try folder.model([
            "model.yaml": "name: P\ncurrent: P 2\nversions: [v1.yaml, v2.yaml]\n",
            "v1.yaml": "version: P 1\nentities:\n  Person:\n    attributes: { name: string }\n",
            "v2.yaml": """
            version: P 2
            entities:
              Card:
                attributes: { number: integer64 }
                relationships:
                  person: { destination: Person, inverse: card }
              Person:
                attributes: { name: string }
                relationships:
                  card: { destination: Card, inverse: person }

            """,
        ])
    }

    @Test("related from the card or from the person: every person and card point at each other", arguments: [true, false])
    func oneToOne(fromCard: Bool) async throws {
        let folder = try TemporaryDirectory()
        let model = try Self.model(in: folder)
        let store = try TestStore(model: model, version: "P 1") { store in
            for index in 1...20 { try store.insert("Person", ["name": .text("p\(index)")]) }
        }
        var registry = PolicyRegistry()
        registry.register(CardMaker(fromCard: fromCard), as: "CardMaker")
        let migrated = try await store.migrated(to: "P 2", mapping: Self.mapping, registry: registry)
        let connection = try Connection(path: migrated.path, configuration: .init(mode: .readOnly))
        defer { try? connection.close() }
        #expect(try connection.scalar("SELECT count(*) FROM ZCARD")?.int64 == 20)
        // Both keys, pointing at each other, for every pair.
        #expect(
            try connection.scalar("SELECT count(*) FROM ZCARD c JOIN ZPERSON p ON c.ZPERSON = p.Z_PK AND p.ZCARD = c.Z_PK")?.int64 == 20)
    }

    @Test("the report counts every object the step writes, by destination entity: the policy's cards beside the mapping's people")
    func writtenCounts() async throws {
        let folder = try TemporaryDirectory()
        let model = try Self.model(in: folder)
        let store = try TestStore(model: model, version: "P 1") { store in
            for index in 1...20 { try store.insert("Person", ["name": .text("p\(index)")]) }
        }
        var registry = PolicyRegistry()
        registry.register(CardMaker(fromCard: true), as: "CardMaker")
        let file = folder.path("mapping.yaml")
        try Self.mapping.write(toFile: file, atomically: true, encoding: .utf8)
        let migration = StoreMigration(store: store.path, model: model, options: MigrationOptions(registry: registry))
        let report = try await migration.run(try migration.plan(mappingFiles: [file]), output: folder.path("out.sqlite"))
        let step = try #require(report.steps.first)
        #expect(step.written == ["Person": 20, "Card": 20])
        #expect(step.mappings.first { $0.name == "PersonToPerson" }?.created == 20)
    }

    /// Links each card to a person that does not exist.
    struct DanglingCardMaker: EntityMigrationPolicy {
        func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            let person = context.create(try context.defaultDestination(for: source))
            context.associate(source, with: person)
            let card = context.create(DestinationObject(entity: "Card", values: ["number": .integer(source.key)]))
            context.relate(card, "person", to: .existing(key: 1_000_000 + source.key, entity: "Person"))
        }
    }

    @Test("a verification failure over what a policy wrote names the policy and its entity mapping")
    func failureNamesThePolicy() async throws {
        let folder = try TemporaryDirectory()
        let model = try Self.model(in: folder)
        let store = try TestStore(model: model, version: "P 1") { store in
            for index in 1...5 { try store.insert("Person", ["name": .text("p\(index)")]) }
        }
        var registry = PolicyRegistry()
        registry.register(DanglingCardMaker(), as: "CardMaker")
        let failure = await #expect(throws: TernFailure.self) { _ = try await store.migrated(to: "P 2", mapping: Self.mapping, registry: registry) }
        let words = failure.map { "\($0.underlying)" } ?? ""
        #expect(words.contains("verification failed") && words.contains("written by policy CardMaker in entity mapping PersonToPerson"), "\(words)")
    }
}
