import Foundation
import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore
import TernSQLite

@Suite("Stores created for a model")
struct StoreRoundTripTests {
    let directory: TemporaryDirectory
    let bookStore: VersionedModel

    init() throws {
        directory = try TemporaryDirectory()
        bookStore = try ModelLoader.load(Configs.path("bookstore"))
    }

    @Test("model → store → metadata → compatible with its own version, migration needed for older stores")
    func roundTrip() throws {
        for (index, version) in bookStore.versions.enumerated() {
            let path = directory.path("v\(index + 1).sqlite")
            try StoreFile.create(at: path, model: version).close()
            let metadata = try StoreMetadata.read(storeAt: path)
            #expect(metadata.versionName == version.versionName)
            #expect(metadata.versionIdentifiers == version.versionIdentifiers)
            #expect(metadata.versionHashes == version.versionHashes.mapValues(VersionHash.hex))
            #expect(metadata.checksum == version.versionChecksum)
            #expect(metadata.entities.map(\.name) == version.entitiesInStoreOrder.map(\.name))

            let reader = try ReadOnlyStore(path: path)
            let match = VersionMatch.find(in: bookStore, metadata: metadata, signature: try LayoutSignature(connection: reader.connect()))
            if version.versionName == bookStore.currentVersionName {
                #expect(match.verdict == .compatible(version: "BookStore 5", evidence: .appleHashes))
            } else {
                #expect(match.verdict == .migrationNeeded(from: version.versionName, to: "BookStore 5", evidence: .appleHashes))
            }
        }
    }

    @Test("objects written through the model read back, with keys, defaults, to-one and to-many")
    func objects() throws {
        let v1 = bookStore.versions[0]
        let path = directory.path("objects.sqlite")
        let connection = try StoreFile.create(at: path, model: v1)
        let layout = StoreLayout(model: v1)
        let writer = try ObjectWriter(connection: connection, layout: layout)
        try connection.transaction(.immediate) {
            let fiction = try writer.insert("Category", ["name": .text("Fiction")])
            let book = try writer.insert("Book", ["title": .text("Dune"), "category": .integer(fiction)])
            try writer.insert("Page", ["text": .text("One"), "book": .integer(book)])
            try writer.insert("Page", ["text": .text("Two"), "book": .integer(book)])
            try writer.finish()
        }
        let reader = ObjectReader(connection: connection, layout: layout)
        let books = try reader.objects(of: "Book")
        #expect(books == [StoredObject(key: 1, entity: "Book", values: ["title": .text("Dune"), "price": .real(10), "category": .integer(1)])])
        #expect(try reader.destinations("Book", "pages", owner: 1) == [1, 2])
        #expect(try reader.destinations("Category", "books", owner: 1) == [1])
        #expect(try StoreMetadata.read(storeAt: path).entities.map(\.maxPrimaryKey) == [1, 1, 2])
        #expect(throws: TernError.self) { try writer.insert("Book", ["isbn": .text("x")]) }
    }

    @Test("a many-to-many with an ordered side stores order in the join table")
    func manyToMany() throws {
        let model = try ModelLoader.load(Fixtures.path(FixtureStore.bookmarks)).version(named: "BookmarksModel 4")!
        let connection = try StoreFile.create(at: directory.path("bookmarks.sqlite"), model: model)
        let layout = StoreLayout(model: model)
        let writer = try ObjectWriter(connection: connection, layout: layout)
        try connection.transaction {
            let folder = try writer.insert("BookmarkEntity", ["uuid": .text("F"), "isFolder": .integer(1)])
            for (position, name) in ["c", "a", "b"].enumerated() {
                let bookmark = try writer.insert("BookmarkEntity", ["uuid": .text(name), "isFolder": .integer(0)])
                try writer.link("BookmarkEntity", "favorites", owner: folder, destination: bookmark, order: Int64(2048 + 1024 * position))
            }
            try writer.finish()
        }
        let reader = ObjectReader(connection: connection, layout: layout)
        #expect(try reader.destinations("BookmarkEntity", "favorites", owner: 1) == [2, 3, 4])
        #expect(try reader.destinations("BookmarkEntity", "favoriteFolders", owner: 3) == [1])
    }
}

@Suite("Which version wrote a store")
struct VersionRecognitionTests {
    @Test(
        "every fixture store is recognised as the version that created it: by Core Data's hashes, and by schema alone without them", arguments: FixtureStore.all
    )
    func bySchema(_ fixture: FixtureStore) throws {
        let model = try ModelLoader.load(Fixtures.path(fixture.model))
        let reader = try ReadOnlyStore(path: Fixtures.path(fixture.store))
        var metadata = try StoreMetadata.read(storeAt: Fixtures.path(fixture.store))
        let signature = try LayoutSignature(connection: reader.connect())
        func expected(_ evidence: VersionMatch.Evidence) -> VersionMatch.Verdict {
            fixture.version == model.currentVersionName
                ? .compatible(version: fixture.version, evidence: evidence)
                : .migrationNeeded(from: fixture.version, to: model.currentVersionName, evidence: evidence)
        }
        #expect(VersionMatch.find(in: model, metadata: metadata, signature: signature).verdict == expected(.appleHashes))
        metadata.versionHashes = [:]
        #expect(VersionMatch.find(in: model, metadata: metadata, signature: signature).verdict == expected(.schema))
    }

    @Test(
        "with VersionInfo.plist, Core Data's stores are recognised by Apple's own hashes",
        arguments: [
            ("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite", "SampleModel"),
            ("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite", "SampleModel2"),
        ])
    func byAppleHashes(store: String, version: String) throws {
        let model = try ModelLoader.load(Fixtures.path(FixtureStore.sampleModel))
        let apple = try VersionMatch.appleHashes(
            versionInfoAt: Fixtures.path("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd/VersionInfo.plist"))
        let match = try VersionMatch.find(in: model, storeAt: Fixtures.path(store), appleHashes: apple)
        switch match.verdict {
        case .compatible(let name, let evidence), .migrationNeeded(let name, _, let evidence):
            #expect(name == version)
            #expect(evidence == .appleHashes)
        case .noMatch:
            Issue.record("not recognised")
        }
    }

    @Test("a store of another model matches nothing and names the closest version's differences")
    func noMatch() throws {
        let model = try ModelLoader.load(Fixtures.path(FixtureStore.bookMigration))
        let store = Fixtures.path("alemar11__CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite")
        let reader = try ReadOnlyStore(path: store)
        let match = VersionMatch.find(in: model, metadata: try StoreMetadata.read(storeAt: store), signature: try LayoutSignature(connection: reader.connect()))
        guard case .noMatch(let closest, let differences) = match.verdict else {
            Issue.record("matched \(match.verdict)")
            return
        }
        #expect(closest != nil)
        #expect(differences.contains { $0.contains("ZUSER") || $0.contains("ZBOOK") })
    }
}
