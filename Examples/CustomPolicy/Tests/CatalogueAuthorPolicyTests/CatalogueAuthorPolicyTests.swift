import Foundation
import Testing
import Tern
import TernTesting
import CatalogueAuthorPolicy

/// The policy tested as Tern's test kit lets you: a BookStore 3 store from two literal objects,
/// migrated to BookStore 4 with the mapping the model names, read back.
@Test func catalogueNamesSplitAtTheComma() async throws {
    let bookstore = URL(fileURLWithPath: #filePath).appendingPathComponent("../../../../../configs/bookstore").standardized.path
    let store = try TestStore(model: try ModelLoader.load(bookstore), version: "BookStore 3") { store in
        try store.insert("Publication", ["title": "Orlando", "author": "Woolf, Virginia"])
        try store.insert("Publication", ["title": "Dune", "author": "Frank Herbert"])
    }
    var registry = PolicyRegistry()
    registry.register(CatalogueAuthorPolicy(), as: "PublicationToPublicationMigrationPolicy")
    let migrated = try await store.migrated(to: "BookStore 4", registry: registry)
    let names = try migrated.objects("Publication").map { [$0["firstName"], $0["lastName"]] }
    #expect(names == [["Virginia", "Woolf"], ["Frank", "Herbert"]])
}
