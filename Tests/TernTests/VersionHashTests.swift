import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore
import TernSQLite

@Suite("Version hashes: Core Data's, covering exactly what Core Data hashes")
struct VersionHashTests {
    /// The entity's hash in a model of its own.
    static func hash(_ entity: Entity) -> [UInt8] {
        VersionHash.of(entity, in: ObjectModel(versionName: "v", entities: [entity] + (entity.parent.map { [Entity(name: $0)] } ?? [])))
    }

    static let title = Attribute(name: "title", type: .string, isOptional: false)
    static let book = Relationship(name: "book", destination: "Book", inverse: "pages")
    static let page = Entity(name: "Page", attributes: [title], relationships: [book])

    @Test("the documented encoding reproduces: vectors computed independently with Python's hashlib")
    func documentedVectors() {
        #expect(VersionHash.hex(VersionHash.of(Self.title)) == "4abd1a08114b450802745e4b10da04f2afb71e7cf7b2d53ab19a21a2d75c2568")
        #expect(VersionHash.hex(VersionHash.of(Self.book)) == "d626f9aca878a02eb30d35e47e0d5e9a82426d60add1ca312132921f1862dbca")
        #expect(VersionHash.hex(Self.hash(Self.page)) == "163163b6206dd627136966915e4ec7c3fd906d0f09be73a4cc3bfde931adbccc")
    }

    typealias EntityChange = @Sendable (inout Entity) -> Void

    static let includedEntityChanges: [(String, EntityChange)] = [
        ("entity name", { $0.name = "Leaf" }),
        ("parent", { $0.parent = "Paper" }),
        ("abstract", { $0.isAbstract = true }),
        ("entity hash modifier", { $0.versionHashModifier = "2" }),
        ("a property added", { $0.attributes.append(Attribute(name: "number", type: .integer32)) }),
        ("a property removed", { $0.attributes.removeAll() }),
        ("attribute name", { $0.attributes[0].name = "heading" }),
        ("attribute optional", { $0.attributes[0].isOptional = true }),
        ("attribute transient", { $0.attributes[0].isTransient = true }),
        ("attribute type", { $0.attributes[0].type = .uri }),
        ("attribute hash modifier", { $0.attributes[0].versionHashModifier = "3" }),
        ("relationship name", { $0.relationships[0].name = "volume" }),
        ("relationship optional", { $0.relationships[0].isOptional = false }),
        ("relationship transient", { $0.relationships[0].isTransient = true }),
        ("relationship destination", { $0.relationships[0].destination = "Magazine" }),
        ("relationship inverse", { $0.relationships[0].inverse = nil }),
        ("relationship minCount", { $0.relationships[0].minCount = 1 }),
        (
            "relationship maxCount (to-many)",
            {
                $0.relationships[0].isToMany = true; $0.relationships[0].maxCount = 0
            }
        ),
        ("relationship ordered", { $0.relationships[0].isOrdered = true }),
        ("relationship hash modifier", { $0.relationships[0].versionHashModifier = "x" }),
        ("uniqueness constraints", { $0.uniquenessConstraints = [["title"]] }),
        ("attribute kept in history after deletion", { $0.attributes[0].preservesValueInHistoryOnDeletion = true }),
    ]

    static let excludedEntityChanges: [(String, EntityChange)] = [
        ("class name", { $0.className = "PageObject" }),
        ("entity user info", { $0.userInfo = ["k": "v"] }),
        ("entity renaming identifier", { $0.renamingIdentifier = "Leaf" }),
        ("attribute user info", { $0.attributes[0].userInfo = ["k": "v"] }),
        ("attribute validation rules", { $0.attributes[0].validation = ValidationRules(minimumLength: 1, maximumLength: 10, pattern: "[a-z]+") }),
        ("attribute default", { $0.attributes[0].defaultValue = .text("Untitled") }),
        ("attribute renaming identifier", { $0.attributes[0].renamingIdentifier = "heading" }),
        ("attribute transformer", { $0.attributes[0].valueTransformerName = "T" }),
        ("relationship user info", { $0.relationships[0].userInfo = ["k": "v"] }),
        ("relationship renaming identifier", { $0.relationships[0].renamingIdentifier = "volume" }),
        ("relationship delete rule", { $0.relationships[0].deleteRule = .cascade }),
        ("fetch indexes", { $0.fetchIndexes = [FetchIndex(name: "byTitle", properties: ["title"])] }),
        (
            "property order",
            {
                $0.attributes.append(Attribute(name: "a", type: .string)); $0.attributes.reverse()
            }
        ),
    ]

    @Test("each included feature changes the entity hash", arguments: includedEntityChanges.map(\.0))
    func includedFeature(_ feature: String) {
        let change = Self.includedEntityChanges.first { $0.0 == feature }!.1
        var changed = Self.page
        change(&changed)
        #expect(Self.hash(changed) != Self.hash(Self.page))
    }

    @Test("each excluded feature leaves the entity hash alone", arguments: excludedEntityChanges.map(\.0))
    func excludedFeature(_ feature: String) {
        let change = Self.excludedEntityChanges.first { $0.0 == feature }!.1
        var changed = Self.page
        var baseline = Self.page
        if feature == "property order" { baseline.attributes.append(Attribute(name: "a", type: .string)) }
        change(&changed)
        #expect(Self.hash(changed) == Self.hash(baseline))
    }

    @Test("version identifiers and version names do not change a model's hashes; an entity change does")
    func modelLevel() {
        let base = ObjectModel(versionName: "A", versionIdentifiers: ["1"], entities: [Self.page, Entity(name: "Book")])
        let renamed = ObjectModel(versionName: "B", versionIdentifiers: ["2"], entities: [Entity(name: "Book"), Self.page])
        #expect(base.versionHashes == renamed.versionHashes)
        #expect(base.versionChecksum == renamed.versionChecksum)
        let changed = ObjectModel(versionName: "A", entities: [Self.page, Entity(name: "Book", isAbstract: true)])
        #expect(changed.versionChecksum != base.versionChecksum)
        #expect(base.versionHashes.values.allSatisfy { $0.count == 32 })
    }

    @Test("Core Data's model-level formulas reproduce the checksum and digest Apple wrote into a real store")
    func appleFormulas() throws {
        let metadata = try StoreMetadata.read(storeAt: Fixtures.path("alemar11__CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite"))
        let hashes = metadata.versionHashes.mapValues { hex in
            stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
        }
        #expect(VersionHash.checksum(hashes) == metadata.checksum)
        #expect(VersionHash.digest(hashes) == metadata.digest)
    }
}
