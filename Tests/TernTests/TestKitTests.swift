import Foundation
import Testing
import Tern
import TernExamples
import TernTesting

/// `TernTesting` as a user's test would use it: stores from literal objects, migrated with a
/// mapping given as text, read back by entity and attribute; a policy's hook called directly.
@Suite("The test kit: stores from literals, migrated and read back; policy hooks called directly")
struct TestKitTests {
    let bench: VersionedModel
    let library: VersionedModel

    init() throws {
        bench = try ModelLoader.load(Configs.path("bench"))
        library = try ModelLoader.load(Configs.path("library"))
    }

    @Test("a policy through a mapping given as YAML text: the split names, the category and the pages follow")
    func policyThroughMapping() async throws {
        let store = try TestStore(model: bench, version: "Bench 1") { store in
            let fiction = try store.insert("Category", ["name": "Fiction"])
            let dune = try store.insert("Book", ["title": "Dune", "author": "Frank Herbert", "price": 9.5], relating: ["category": fiction])
            try store.insert("Book", ["title": "Anonymous", "author": nil, "price": 1])
            for number in 1...3 { try store.insert("Page", ["number": .integer(Int64(number))], relating: ["book": dune]) }
        }
        var registry = PolicyRegistry()
        registry.register(BookStoreExample.AuthorSplitPolicy(), as: "AuthorSplitPolicy")
        let mapping = try String(contentsOfFile: Configs.path("bench") + "/policy/1-to-2.yaml", encoding: .utf8)
        let migrated = try await store.migrated(to: "Bench 2", mapping: mapping, registry: registry)

        let publications = try migrated.objects("Publication")
        #expect(publications.map { $0["title"] } == ["Dune", "Anonymous"])
        #expect(publications.map { $0["firstName"] } == ["Frank", nil])
        #expect(publications.map { $0["lastName"] } == ["Herbert", nil])
        let category = try #require(try migrated.objects("Category").first)
        #expect(publications[0]["category"] == .integer(category.key))
        #expect(publications[0].toMany["pages"]?.count == 3)
        #expect(try migrated.objects("Page").allSatisfy { $0["book"] == .integer(publications[0].key) })
    }

    @Test("ordered one-to-many, many-to-many and to-one links laid out as Core Data does: the migration verifies them, and they read back in order")
    func relationshipsLaidOut() async throws {
        var chapterTitles: [String] = []
        let store = try TestStore(model: library, version: "Library 1") { store in
            let author = try store.insert("Author", ["name": "Le Guin"])
            let tags = try ["sf", "classic"].map { try store.insert("Tag", ["label": .text($0)]) }
            let book = try store.insert("Book", ["title": "The Dispossessed", "year": 1974], relating: ["author": author])
            try store.relate(book, "tags", to: tags)
            // Inserted in one order, related in another: the relationship's order is the relating.
            let chapters = try (1...4).map { try store.insert("Chapter", ["title": .text("Chapter \($0)")]) }
            try store.relate(book, "chapters", to: chapters.reversed())
            chapterTitles = (1...4).reversed().map { "Chapter \($0)" }
            let other = try store.insert("Book", ["title": "Lathe of Heaven", "year": 1971])
            try store.relate(other, "tags", to: [tags[0]])
        }
        let read = try store.objects("Book")
        let chapters = try Dictionary(uniqueKeysWithValues: store.objects("Chapter").map { ($0.key, $0["title"]) })
        #expect(read[0].toMany["chapters"]?.map { chapters[$0] } == chapterTitles.map { .text($0) })
        #expect(read[0].toMany["tags"]?.count == 2 && read[1].toMany["tags"]?.count == 1)
        #expect(try store.objects("Tag")[0].toMany["books"]?.count == 2)

        let migrated = try await store.migrated(registry: .builtIn)
        #expect(migrated.version.versionName == library.currentVersionName)
        let book = try #require(try migrated.objects("Book").first { $0["title"] == "The Dispossessed" })
        let migratedChapters = try Dictionary(uniqueKeysWithValues: migrated.objects("Chapter").map { ($0.key, $0["title"]) })
        #expect(book.toMany["chapters"]?.map { migratedChapters[$0] } == chapterTitles.map { .text($0) })
    }

    @Test("a mapping model built in memory replaces the model's file for its step, and the run record names it by its content")
    func mappingInMemory() async throws {
        let bookstore = try ModelLoader.load(Configs.path("bookstore"))
        let store = try TestStore(model: bookstore, version: "BookStore 4") { store in
            try store.insert("Publication", ["title": "Dune", "price": 9.5, "firstName": "Frank", "lastName": "Herbert"])
        }
        var mapping = try MappingInference.infer(from: bookstore.version(named: "BookStore 4")!, to: bookstore.version(named: "BookStore 5")!)
        let publication = try #require(mapping.entityMappings.firstIndex { $0.destinationEntity == "Publication" })
        mapping.entityMappings[publication].attributeMappings.removeAll { $0.name == "synopsis" }
        mapping.entityMappings[publication].attributeMappings.append(PropertyMapping(name: "synopsis", valueExpression: "uppercase:($source.title)"))
        let migrated = try await store.migrated(models: [mapping])
        #expect(try migrated.objects("Publication").map { $0["synopsis"] } == ["DUNE"])

        // Named by a digest of its content: a resume with another mapping is refused as with a changed file.
        let migration = StoreMigration(store: store.path, model: bookstore)
        let origin = try migration.plan(mappings: [mapping]).steps.map(\.origins)
        #expect(origin.count == 1 && origin[0].count == 1 && origin[0][0].hasPrefix("mapping in memory BookStore 4 → BookStore 5 ("), "\(origin)")
        mapping.entityMappings[publication].attributeMappings.removeLast()
        #expect(try migration.plan(mappings: [mapping]).steps.map(\.origins) != origin)
    }

    @Test("mistakes in a built store are named: a relationship given as a value, a target of the wrong entity, an unknown version")
    func builderErrors() throws {
        _ = try requireUnderlying(TernError.self) {
            _ = try TestStore(model: library, version: "Library 1") { store in try store.insert("Book", ["title": "x", "author": 1]) }
        }
        let wrongEntity = try requireUnderlying(TernError.self) {
            _ = try TestStore(model: library, version: "Library 1") { store in
                let tag = try store.insert("Tag", ["label": "x"])
                try store.insert("Book", ["title": "x"], relating: ["author": tag])
            }
        }
        #expect(wrongEntity.message == "Book.author leads to Author, not to Tag")
        _ = try requireUnderlying(TernError.self) { _ = try TestStore(model: library, version: "Library 9") { _ in } }
    }

    @Test("a store of generated objects, valid for its version, migrates through a mapping file as a run does")
    func generatedStore() async throws {
        let store = try TestStore(model: library, version: "Library 1", generating: 12, seed: 4)
        #expect(try store.objects("Book").count == 12)
        let migrated = try await store.migrated(
            to: "Library 2", mappingFiles: ["1-authors-and-labels", "2-books-and-chapters"].map { Configs.path("library") + "/mappings/\($0).yaml" })
        #expect(migrated.version.versionName == "Library 2")
        #expect(try migrated.objects("Book").count == 12)
    }

    @Test("a policy's hook called directly: what it created and associated can be read")
    func hookDirectly() throws {
        let mapping = EntityMapping(
            name: "BookToPublication", type: .custom, sourceEntity: "Book", destinationEntity: "Publication", policy: "AuthorSplitPolicy")
        let context = InstanceCreationContext(mapping: mapping) { source in
            DestinationObject(entity: "Publication", values: ["title": try source["title"]])
        }
        let source = SourceObject(key: 7, entity: "Book", values: ["title": "Dune", "author": "Frank Herbert"])
        try BookStoreExample.AuthorSplitPolicy().createDestinationInstances(for: source, in: context)

        #expect(context.objects == [DestinationObject(entity: "Publication", values: ["title": "Dune", "firstName": "Frank", "lastName": "Herbert"])])
        #expect(context.associations.map(\.source.key) == [7])
        #expect(context.links.isEmpty)
    }

    @Test(
        "a policy reading a key its source object does not have (a misspelt `nmae`) throws naming the key, the object and the keys it has, as Core Data's value(forKey:) raises; the migration stops naming the policy"
    )
    func unknownSourceKey() async throws {
        let source = SourceObject(key: 7, entity: "Book", values: ["title": "Dune", "author": .null])
        #expect(try source["author"] == .null)
        let error = try #require(throws: TernError.self) { try source["nmae"] }
        #expect(error.message == "source object Book 7 has no attribute or to-one relationship nmae (it has: author, title)")

        struct Misspelt: EntityMigrationPolicy {
            func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
                var publication = try context.defaultDestination(for: source)
                publication["firstName"] = try source["auhtor"]
                context.associate(source, with: context.create(publication))
            }
        }
        let model = try ModelLoader.load(Configs.path("bookstore"))
        let store = try TestStore(model: model, version: "BookStore 3") { store in
            try store.insert("Publication", ["title": "Dune", "author": "Frank Herbert"])
        }
        var registry = PolicyRegistry()
        registry.register(Misspelt(), as: "PublicationToPublicationMigrationPolicy")
        await #expect(throws: (any Error).self) { _ = try await store.migrated(to: "BookStore 4", registry: registry) }
        do {
            _ = try await store.migrated(to: "BookStore 4", registry: registry)
        } catch {
            #expect(
                "\(error)".contains("PublicationToPublicationMigrationPolicy") && "\(error)".contains("no attribute or to-one relationship auhtor"), "\(error)")
        }
    }
}
