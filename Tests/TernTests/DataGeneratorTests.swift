import Foundation
import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore
import TernGenerate
import TernSQLite

@Suite("Synthetic data")
struct DataGeneratorTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Every row of every table, as text, in a stable order.
    private func dump(_ path: String) throws -> [String] {
        let connection = try Connection(path: path, configuration: .init(mode: .readOnly))
        let tables = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'Z_METADATA' ORDER BY name")
        var names: [String] = []
        var rows = tables.rows()
        while let row = try rows.next() { names.append(row.text(at: 0)!) }
        var lines: [String] = []
        for name in names {
            let select = try connection.prepare("SELECT * FROM \(quoteIdentifier(name)) ORDER BY 1, 2")
            var cursor = select.rows()
            while let row = try cursor.next() { lines.append(name + ": " + row.values.map(\.sqlLiteral).joined(separator: "|")) }
        }
        return lines
    }

    @Test("the same seed gives the same rows; another seed gives others")
    func deterministic() throws {
        let model = try ModelLoader.load(Configs.path("bookstore")).versions[0]
        _ = try DataGenerator.generate(model: model, at: directory.path("a.sqlite"), rows: 300, seed: 7)
        _ = try DataGenerator.generate(model: model, at: directory.path("b.sqlite"), rows: 300, seed: 7)
        _ = try DataGenerator.generate(model: model, at: directory.path("c.sqlite"), rows: 300, seed: 8)
        let a = try dump(directory.path("a.sqlite"))
        #expect(a.count > 900)
        #expect(a == (try dump(directory.path("b.sqlite"))))
        #expect(a != (try dump(directory.path("c.sqlite"))))
    }

    @Test("per-entity counts: 3 pages per book, every page's book exists; an unknown entity is an error naming it")
    func counts() throws {
        let model = try ModelLoader.load(Configs.path("bookstore")).versions[0]
        let report = try DataGenerator.generate(model: model, at: directory.path("counts.sqlite"), rows: 400, counts: ["Page": 1200], seed: 3)
        #expect(report.objects == ["Book": 400, "Category": 400, "Page": 1200])
        let connection = try Connection(path: directory.path("counts.sqlite"), configuration: .init(mode: .readOnly))
        #expect(try connection.scalar("SELECT count(*) FROM ZPAGE") == .integer(1200))
        #expect(
            try connection.scalar("SELECT count(*) FROM ZPAGE p LEFT JOIN ZBOOK b ON b.Z_PK = p.ZBOOK WHERE p.ZBOOK IS NOT NULL AND b.Z_PK IS NULL")
                == .integer(0))
        #expect((try connection.scalar("SELECT count(*) FROM ZPAGE WHERE ZBOOK IS NOT NULL")?.int64 ?? 0) > 1000)
        #expect(throws: TernError.self) {
            try DataGenerator.generate(model: model, at: directory.path("bad.sqlite"), rows: 1, counts: ["Pages": 3], seed: 3)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("bad.sqlite")))
    }

    @Test("relationships point at existing objects of the right entity, with fan-out and order keys")
    func relationshipsAreValid() throws {
        let model = try ModelLoader.load(Fixtures.path(FixtureStore.bookmarks)).version(named: "BookmarksModel 4")!
        let path = directory.path("bookmarks.sqlite")
        let report = try DataGenerator.generate(model: model, at: path, rows: 2_000, seed: 1)
        #expect(report.objects == ["BookmarkEntity": 2_000])
        #expect(report.links > 1_000)
        let connection = try Connection(path: path)
        #expect(
            try connection.scalar(
                "SELECT count(*) FROM ZBOOKMARKENTITY c LEFT JOIN ZBOOKMARKENTITY p ON p.Z_PK = c.ZPARENT WHERE c.ZPARENT IS NOT NULL AND p.Z_PK IS NULL")
                == .integer(0))
        #expect(
            try connection.scalar("SELECT count(*) FROM Z_1FAVORITES j LEFT JOIN ZBOOKMARKENTITY b ON b.Z_PK = j.Z_1FAVORITES WHERE b.Z_PK IS NULL")
                == .integer(0))
        // Sparse, per-owner order keys starting at 2048, as Core Data writes them.
        #expect(try connection.scalar("SELECT min(Z_FOK_PARENT) FROM ZBOOKMARKENTITY WHERE ZPARENT IS NOT NULL") == .integer(2048))
        #expect(
            try connection.scalar(
                "SELECT count(*) FROM (SELECT ZPARENT, Z_FOK_PARENT FROM ZBOOKMARKENTITY WHERE ZPARENT IS NOT NULL GROUP BY 1, 2 HAVING count(*) > 1)")
                == .integer(0))
        // Skewed fan-out: the busiest parent has many more children than the average.
        let busiest =
            try connection.scalar("SELECT max(n) FROM (SELECT count(*) AS n FROM ZBOOKMARKENTITY WHERE ZPARENT IS NOT NULL GROUP BY ZPARENT)")?.int64 ?? 0
        #expect(busiest >= 10)
        #expect(try StoreMetadata.read(storeAt: path).entities.first?.maxPrimaryKey == 2_000)
    }

    @Test("inheritance, abstract entities and minimum counts are honoured")
    func inheritanceAndCounts() throws {
        let model = ObjectModel(
            versionName: "v",
            entities: [
                Entity(name: "Writer", isAbstract: true, attributes: [Attribute(name: "name", type: .string, isOptional: false)]),
                Entity(
                    name: "Author", parent: "Writer",
                    relationships: [Relationship(name: "books", destination: "Book", inverse: "author", isToMany: true, minCount: 2)]),
                Entity(
                    name: "Book",
                    attributes: [Attribute(name: "title", type: .string, isOptional: false, validation: ValidationRules(minimumLength: 3, maximumLength: 12))],
                    relationships: [Relationship(name: "author", destination: "Author", inverse: "books", isOptional: false)]),
            ])
        #expect(model.problems().isEmpty)
        let path = directory.path("writers.sqlite")
        let report = try DataGenerator.generate(model: model, at: path, rows: 100, seed: 3)
        #expect(report.objects == ["Author": 100, "Book": 100])
        let connection = try Connection(path: path)
        #expect(try connection.scalar("SELECT count(*) FROM ZWRITER WHERE Z_ENT = 1") == .integer(0))  // abstract Writer
        // minCount 2 cannot hold for 100 authors with 100 books; the generator gives every author
        // at least one before any author gets a second.
        #expect(try connection.scalar("SELECT count(DISTINCT ZAUTHOR) FROM ZBOOK") == .integer(100))
        #expect(try connection.scalar("SELECT count(*) FROM ZBOOK WHERE ZAUTHOR IS NULL OR length(ZTITLE) NOT BETWEEN 3 AND 12") == .integer(0))
    }

    @Test(
        "every fixture model generates a store Tern recognises as that version",
        arguments: [
            FixtureStore.wibosco, FixtureStore.sampleModel, FixtureStore.sampleModel3, FixtureStore.bookmarks, FixtureStore.bookMigration,
            "magicalpanda__MagicalRecord/Tests/Fixtures/TestModel.xcdatamodeld", "rentzsch__mogenerator/test/test.xcdatamodel",
            "JohnEstropia__CoreStore/CoreStoreTests/Model.xcdatamodeld",
        ])
    func everyFixtureModel(_ modelPath: String) throws {
        let model = try ModelLoader.load(Fixtures.path(modelPath))
        for (index, version) in model.versions.enumerated() {
            let path = directory.path("\(index).sqlite")
            _ = try DataGenerator.generate(model: version, at: path, rows: 50, seed: 1)
            let reader = try ReadOnlyStore(path: path)
            let match = VersionMatch.find(
                in: model, metadata: try StoreMetadata.read(storeAt: path), signature: try LayoutSignature(connection: reader.connect()))
            switch match.verdict {
            case .compatible(let name, .appleHashes), .migrationNeeded(let name, _, .appleHashes):
                #expect(name == version.versionName)
            default:
                Issue.record("\(version.versionName): \(match.verdict)")
            }
            let integrity = try reader.connect().scalar("PRAGMA integrity_check")
            #expect(integrity == .text("ok"))
        }
    }
    @Test("an ordered list into an entity with subentities never holds one sort key twice")
    func orderKeysAcrossSubentities() throws {
        let root = directory.url.appendingPathComponent("shop")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "name: Shop\ncurrent: Shop 1\nversions: [v1.yaml]\n".write(to: root.appendingPathComponent("model.yaml"), atomically: true, encoding: .utf8)
        try """
        version: Shop 1
        entities:
          Shelf:
            attributes: { name: string }
            relationships: { items: { destination: Item, toMany: true, ordered: true, inverse: shelf } }
          Item:
            attributes: { title: string }
            relationships: { shelf: { destination: Shelf, inverse: items } }
          Book:
            parent: Item
            attributes: { pages: integer32 }
          DVD:
            parent: Item
            attributes: { minutes: integer32 }
        """.write(to: root.appendingPathComponent("v1.yaml"), atomically: true, encoding: .utf8)
        let model = try ModelLoader.load(root.path)
        let path = directory.path("shop.sqlite")
        _ = try DataGenerator.generate(model: model.versions[0], at: path, rows: 25, seed: 1)
        let connection = try Connection(path: path, configuration: .init(mode: .readOnly))
        #expect(
            try connection.scalar("SELECT count(*) FROM (SELECT ZSHELF, Z_FOK_SHELF FROM ZITEM WHERE ZSHELF IS NOT NULL GROUP BY 1, 2 HAVING count(*) > 1)")
                == .integer(0))
        #expect(try connection.scalar("SELECT count(*) FROM ZITEM WHERE ZSHELF IS NOT NULL") != .integer(0))
    }
}
