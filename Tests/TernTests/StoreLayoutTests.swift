import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore
import TernSQLite
import TernTesting

/// A fixture store and the model version that wrote it (SOURCES.md).
struct FixtureStore: Sendable, CustomStringConvertible {
    let store: String
    let model: String
    let version: String
    var description: String { String(store.split(separator: "/").last!) }

    static let wibosco = "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"
    static let sampleModel = "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld"
    static let sampleModel3 = "alemar11__CoreDataPlus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld"
    static let bookmarks = "duckduckgo__BrowserServicesKit/Sources/Bookmarks/BookmarksModel.xcdatamodeld"
    static let bookMigration = "hwaxxer__BookMigration/BookMigration/Model.xcdatamodeld"

    static let all: [FixtureStore] = [
        FixtureStore(
            store: "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_1.sqlite",
            model: wibosco, version: "CoreDataMigration_Example"),
        FixtureStore(
            store: "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_2.sqlite",
            model: wibosco, version: "CoreDataMigration_Example 2"),
        FixtureStore(
            store: "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_3.sqlite",
            model: wibosco, version: "CoreDataMigration_Example 3"),
        FixtureStore(store: "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite", model: sampleModel, version: "SampleModel"),
        FixtureStore(store: "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite", model: sampleModel, version: "SampleModel2"),
        FixtureStore(
            store: "alemar11__CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite", model: sampleModel3, version: "SampleModel3"),
        FixtureStore(store: "duckduckgo__BrowserServicesKit/Tests/BookmarksTests/Resources/Bookmarks_V3.sqlite", model: bookmarks, version: "BookmarksModel 3"),
        FixtureStore(store: "duckduckgo__BrowserServicesKit/Tests/BookmarksTests/Resources/Bookmarks_V4.sqlite", model: bookmarks, version: "BookmarksModel 4"),
        FixtureStore(store: "hwaxxer__BookMigration/BookMigration/Model1.sqlite", model: bookMigration, version: "Model1"),
    ]
}

@Suite("Store layout follows Core Data's")
struct StoreLayoutTests {
    @Test("the layout Tern derives from a version equals the schema Core Data wrote for it, and no other version's", arguments: FixtureStore.all)
    func matchesCoreData(_ fixture: FixtureStore) throws {
        let model = try ModelLoader.load(Fixtures.path(fixture.model))
        let reader = try ReadOnlyStore(path: Fixtures.path(fixture.store))
        let actual = try LayoutSignature(connection: reader.connect())
        let expected = LayoutSignature(layout: StoreLayout(model: try #require(model.version(named: fixture.version))))
        #expect(expected == actual, "\(expected.differences(from: actual))")
        let others = model.versions.filter { $0.versionName != fixture.version && LayoutSignature(layout: StoreLayout(model: $0)) == actual }
        #expect(others.isEmpty, "also matches \(others.map(\.versionName))")
    }

    @Test("Bookmarks 4: the many-to-many gets Core Data's join table, columns, ordering column and index")
    func bookmarksJoinTable() throws {
        let model = try ModelLoader.load(Fixtures.path(FixtureStore.bookmarks))
        let layout = StoreLayout(model: try #require(model.version(named: "BookmarksModel 4")))
        let join = try #require(layout.joinTables.first)
        #expect(layout.joinTables.count == 1)
        #expect(join.table == "Z_1FAVORITES")
        #expect(join.ownerColumn == "Z_1FAVORITEFOLDERS")
        #expect(join.destinationColumn == "Z_1FAVORITES")
        #expect(join.orderColumn == "Z_FOK_1FAVORITES")
        #expect(layout.indexStatements.contains(#"CREATE INDEX "Z_1FAVORITES_Z_1FAVORITES_INDEX" ON "Z_1FAVORITES" ("Z_1FAVORITES", "Z_1FAVORITEFOLDERS")"#))
        let entity = try #require(layout.entities["BookmarkEntity"])
        #expect(entity.orderColumns == ["parent": "Z_FOK_PARENT"])
    }

    @Test("inheritance: subentities share the root table; a to-one to a tree gets a Z<n>_ entity column")
    func inheritance() throws {
        let model = ObjectModel(
            versionName: "v",
            entities: [
                Entity(name: "Book", attributes: [Attribute(name: "title", type: .string)]),
                Entity(name: "GraphicNovel", parent: "Book", attributes: [Attribute(name: "artist", type: .string), Attribute(name: "title2", type: .string)]),
                Entity(name: "Page", relationships: [Relationship(name: "book", destination: "Book")]),
            ])
        let layout = StoreLayout(model: model)
        #expect(layout.entities["GraphicNovel"]?.table == "ZBOOK")
        #expect(layout.entities["GraphicNovel"]?.attributeColumns == ["title": "ZTITLE", "artist": "ZARTIST", "title2": "ZTITLE2"])
        #expect(layout.entities["Page"]?.entityColumns == ["book": "Z1_BOOK"])
        #expect(layout.indexStatements.contains(#"CREATE INDEX "ZBOOK_Z_ENT_INDEX" ON "ZBOOK" ("Z_ENT")"#))
        #expect(layout.tables.map(\.name) == ["ZBOOK", "ZPAGE"])
    }
}

/// A store's own join-table names are read, never derived: which side names a reflexive
/// many-to-many's table is Core Data's choice per model, and real stores show both.
@Suite("Join tables read under the store's own names")
struct StoreJoinTableNamesTests {
    @Test("a reflexive many-to-many whose table the store names from the other side migrates with every link, and the plan says so")
    func reflexiveNamedFromTheOtherSide() async throws {
        let folder = try TemporaryDirectory()
        let person =
            "  Person:\n    attributes: { name: string%@ }\n    relationships:\n"
            + "      friends: { destination: Person, toMany: true, inverse: friendOf }\n      friendOf: { destination: Person, toMany: true, inverse: friends }\n"
        let model = try folder.model([
            "model.yaml": "name: F\ncurrent: F 2\nversions: [v1.yaml, v2.yaml]\n",
            "v1.yaml": "version: F 1\nentities:\n" + person.replacingOccurrences(of: "%@", with: ""),
            "v2.yaml": "version: F 2\nentities:\n" + person.replacingOccurrences(of: "%@", with: ", age: integer32"),
        ])
        let store = try TestStore(model: model, version: "F 1") { store in
            let people = try (1...6).map { try store.insert("Person", ["name": .text("p\($0)")]) }
            try store.relate(people[0], "friends", to: [people[1], people[2]])
            try store.relate(people[3], "friends", to: [people[0]])
        }
        let derived = StoreLayout(model: model.versions[0]).joinTables.map(\.table)
        #expect(derived == ["Z_1FRIENDS"])
        let editor = try Connection(path: store.path, configuration: .init(mode: .readWrite))
        try editor.execute("ALTER TABLE Z_1FRIENDS RENAME TO Z_1FRIENDOF")
        try editor.close()
        let migration = StoreMigration(store: store.path, model: model)
        let plan = try migration.plan()
        #expect(plan.notes.contains { $0.contains("Person.friends from the other side") }, "\(plan.notes)")
        let output = folder.path("out.sqlite")
        _ = try await migration.run(plan, output: output)
        let migrated = try Connection(path: output, configuration: .init(mode: .readOnly))
        #expect(
            try migrated.scalar("SELECT group_concat(Z_1FRIENDOF || '>' || Z_1FRIENDS) FROM (SELECT * FROM Z_1FRIENDS ORDER BY 1, 2)") == .text("1>2,1>3,4>1"))
    }
}
