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

@Suite("Store metadata without a model")
struct StoreMetadataTests {
    struct Expected: Sendable, CustomStringConvertible {
        let files: [String]
        let identifiers: [String]
        let framework: Int
        /// Entity name → rows, in Z_ENT order.
        let rows: [(String, Int64)]
        /// One entity's Apple-computed hash prefix (STORE-LAYOUT.md §5.3).
        let hash: (String, String)
        var description: String { files[0].split(separator: "/").last.map(String.init) ?? files[0] }
    }

    static let stores: [Expected] = [
        Expected(
            files: ["wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_1.sqlite"],
            identifiers: [""], framework: 866, rows: [("Post", 10)], hash: ("Post", "5a24f7b65f47c33c")),
        Expected(
            files: ["wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_3.sqlite"],
            identifiers: [""], framework: 866, rows: [("Post", 12), ("Section", 14)], hash: ("Section", "007e65c75946655c")),
        Expected(
            files: ["alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite"],
            identifiers: ["1"], framework: 1044,
            rows: [("Car", 115), ("SportCar", 5), ("ExpensiveSportCar", 5), ("Person", 20)], hash: ("Car", "9e55552907215822")),
        Expected(
            files: ["alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite"],
            identifiers: [], framework: 1344,
            rows: [
                ("Book", 2), ("GraphicNovel", 1), ("Feedback", 3), ("Page", 119), ("Writer", 0), ("Author", 1), ("CHANGE", 126), ("TRANSACTION", 1),
                ("TRANSACTIONSTRING", 2),
            ],
            hash: ("Writer", "d54efab5d39cb3f5")),
        Expected(
            files: [
                "duckduckgo__BrowserServicesKit/Tests/BookmarksTests/Resources/Bookmarks_V4.sqlite",
                "duckduckgo__BrowserServicesKit/Tests/BookmarksTests/Resources/Bookmarks_V4.sqlite-wal",
            ],
            identifiers: [""], framework: 1333, rows: [("BookmarkEntity", 10)], hash: ("BookmarkEntity", "6a086c9544c0adc6")),
        Expected(
            files: ["hwaxxer__BookMigration/BookMigration/Model1.sqlite"],
            identifiers: [""], framework: 419, rows: [("Book", 4), ("User", 3)], hash: ("User", "fa27e5eecb39eedc")),
    ]

    @Test("each fixture store reads as what Core Data wrote, and nothing is created beside it", arguments: stores)
    func fixtureStore(_ expected: Expected) throws {
        let directory = try TemporaryDirectory()
        let path = try Fixtures.copy(expected.files, into: directory.url)
        let before = try directory.snapshot()

        let metadata = try StoreMetadata.read(storeAt: path)

        #expect(try directory.snapshot() == before, "reading must not create, change or remove files")
        #expect(metadata.storeType == "SQLite")
        #expect(metadata.frameworkVersion == expected.framework)
        #expect(metadata.versionHashesVersion == 3)
        #expect(metadata.versionIdentifiers == expected.identifiers)
        #expect(metadata.uuid?.count == 36)
        #expect(metadata.entities.map(\.name) == expected.rows.map(\.0))
        #expect(metadata.entities.map(\.rowCount) == expected.rows.map { Optional($0.1) })
        #expect(metadata.versionHashes[expected.hash.0]?.hasPrefix(expected.hash.1) == true)
        #expect(metadata.versionHashes.values.allSatisfy { $0.count == 64 })
    }

    @Test("subentities share their root's table and Z_MAX lives on the root")
    func inheritance() throws {
        let metadata = try StoreMetadata.read(storeAt: Fixtures.path("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite"))
        let byName = Dictionary(uniqueKeysWithValues: metadata.entities.map { ($0.name, $0) })
        #expect(byName["ExpensiveSportCar"]?.table == "ZCAR")
        #expect(byName["ExpensiveSportCar"]?.parentNumber == byName["SportCar"]?.number)
        #expect(byName["Car"]?.maxPrimaryKey == 125)
        #expect(byName["Person"]?.table == "ZPERSON")
    }

    @Test("a WAL store whose rows live only in the -wal is read from a snapshot; without the -wal it is empty")
    func walOnlyRows() throws {
        let directory = try TemporaryDirectory()
        let base = "duckduckgo__BrowserServicesKit/Tests/BookmarksTests/Resources/Bookmarks_V3.sqlite"
        let path = try Fixtures.copy([base, base + "-wal"], into: directory.url)
        let store = try ReadOnlyStore(path: path)
        #expect(store.access == .snapshot)
        #expect(try StoreMetadata.read(from: store.connect(), path: path).entities.first?.rowCount == 10)

        let alone = try TemporaryDirectory()
        let mainOnly = try Fixtures.copy([base], into: alone.url)
        #expect(try ReadOnlyStore(path: mainOnly).access == .immutable)
        #expect(try StoreMetadata.read(storeAt: mainOnly).entities.first?.rowCount == 0)
        #expect(try alone.snapshot().keys.sorted() == ["Bookmarks_V3.sqlite"])
    }

    @Test("a generated store reads back: entities, row counts and key counters")
    func generatedStore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("BookStore.sqlite")
        let model = try ModelLoader.load(Configs.path("bookstore")).versions[0]
        _ = try DataGenerator.generate(model: model, at: path, rows: 50, seed: 1)
        let metadata = try StoreMetadata.read(storeAt: path)
        #expect(metadata.entities.map(\.name) == ["Book", "Category", "Page"])
        #expect(metadata.entities.map(\.rowCount) == [50, 50, 50])
        #expect(metadata.entities.map(\.maxPrimaryKey) == [50, 50, 50])
        #expect(metadata.versionName == "BookStore 1")
    }
}

@Suite("Bad stores give clear errors")
struct BadStoreTests {
    @Test("a missing file is missingInput and names the path")
    func missing() throws {
        let error = try #require(throws: TernError.self) { try StoreMetadata.read(storeAt: "/nonexistent/store.sqlite") }
        #expect(error.kind == .missingInput)
        #expect(error.description.hasPrefix("/nonexistent/store.sqlite: "))
    }

    @Test("a file that is not SQLite is badInput")
    func notSQLite() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        try Data(String(repeating: "plain text, not a database\n", count: 200).utf8).write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: TernError.self) { try StoreMetadata.read(storeAt: path) }
        #expect(error.kind == .badInput)
        #expect(error.message.contains("not an SQLite database"))
    }

    @Test("an SQLite file without Z_METADATA is badInput naming the table")
    func noMetadataTable() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("plain.sqlite")
        try Connection(path: path).execute("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        let error = try #require(throws: TernError.self) { try StoreMetadata.read(storeAt: path) }
        #expect(error.kind == .badInput)
        #expect(error.message.contains("Z_METADATA"))
    }

    @Test("a truncated store is badInput, never a crash")
    func truncated() throws {
        let directory = try TemporaryDirectory()
        let full = directory.path("full.sqlite")
        _ = try DataGenerator.generate(model: try ModelLoader.load(Configs.path("bookstore")).versions[0], at: full, rows: 3000, seed: 1)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
        let path = directory.path("truncated.sqlite")
        try bytes.prefix(bytes.count / 3).write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: TernError.self) { try StoreMetadata.read(storeAt: path) }
        #expect(error.kind == .badInput)
    }
}
