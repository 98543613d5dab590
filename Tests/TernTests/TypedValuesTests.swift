import Foundation
import Testing
import Tern
import TernSQLite
import TernTesting

/// A policy reads and sets values by Swift type, as Core Data stores them, with the strictness
/// of `object["name"]`: NULL is nil, a value of another kind throws naming it.
@Suite("Typed values in policies")
struct TypedValuesTests {
    @Test("reads: text, integers, numbers, Booleans, dates and bytes; NULL is nil; another kind or a missing name throws, naming it")
    func reads() throws {
        let when = Date(timeIntervalSinceReferenceDate: 712_345_678.5)
        let source = SourceObject(
            key: 7, entity: "Note",
            values: [
                "title": .text("Dune"), "pages": .integer(412), "price": .real(9.5), "done": .integer(1), "written": .real(712_345_678.5),
                "cover": .blob([1, 2]), "subtitle": .null,
            ])
        #expect(try source.string("title") == "Dune")
        #expect(try source.integer("pages") == 412)
        #expect(try source.double("pages") == 412)
        #expect(try source.double("price") == 9.5)
        #expect(try source.bool("done") == true)
        #expect(try source.date("written") == when)
        #expect(try source.data("cover") == Data([1, 2]))
        #expect(try source.string("subtitle") == nil)
        #expect(try source.value("pages", as: Int.self) == 412)
        let wrongKind = #expect(throws: TernError.self) { try source.integer("title") }
        #expect(wrongKind?.message == "source object Note 7: title holds 'Dune', not an integer")
        #expect(throws: TernError.self) { try source.bool("pages") }  // 412 is no Boolean
        #expect(throws: TernError.self) { try source.string("titel") }  // a misspelt name
    }

    @Test("writes: each type stored as Core Data stores it, nil as NULL")
    func writes() throws {
        var object = DestinationObject(entity: "Note")
        object.set("title", "Emma")
        object.set("pages", Int64(300))
        object.set("done", false)
        object.set("written", Date(timeIntervalSinceReferenceDate: 10))
        object.set("subtitle", String?.none)
        #expect(object["title"] == .text("Emma") && object["pages"] == .integer(300) && object["done"] == .integer(0))
        #expect(object["written"] == .real(10) && object["subtitle"] == .null)
        #expect(try object.value("written", as: Date.self) == Date(timeIntervalSinceReferenceDate: 10))
    }

    /// Splits `name` into first and last with typed reads and writes.
    struct SplitPolicy: EntityMigrationPolicy {
        func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            var person = try context.defaultDestination(for: source)
            let parts = try source.string("name")?.split(separator: " ").map(String.init)
            person.set("first", parts?.first)
            person.set("last", parts.flatMap { $0.count > 1 ? $0.last : nil })
            person.set("adult", (try source.integer("age") ?? 0) >= 18)
            context.associate(source, with: context.create(person))
        }
    }

    @Test("through a migration: a policy written with typed values migrates and verifies")
    func throughAMigration() async throws {
        let folder = try TemporaryDirectory()
        let model = try folder.model([
            "model.yaml": "name: T\ncurrent: T 2\nversions: [v1.yaml, v2.yaml]\n",
            "v1.yaml": "version: T 1\nentities:\n  Person:\n    attributes: { name: string, age: integer32 }\n",
            "v2.yaml": "version: T 2\nentities:\n  Person:\n    attributes: { first: string, last: string, adult: boolean, age: integer32 }\n",
        ])
        let store = try TestStore(model: model, version: "T 1") { store in
            try store.insert("Person", ["name": "Frank Herbert", "age": .integer(65)])
            try store.insert("Person", ["name": "Cher", "age": .integer(12)])
            try store.insert("Person", ["name": nil, "age": nil])
        }
        var registry = PolicyRegistry()
        registry.register(SplitPolicy(), as: "SplitPolicy")
        let mapping = """
            source: T 1
            destination: T 2
            entityMappings:
              - name: PersonToPerson
                type: custom
                source: Person
                destination: Person
                policy: SplitPolicy
                attributes:
                  age: $source.age

            """
        let migrated = try await store.migrated(to: "T 2", mapping: mapping, registry: registry)
        let people = try migrated.objects("Person").map { [$0["first"], $0["last"], $0["adult"]] }
        #expect(people == [[.text("Frank"), .text("Herbert"), .integer(1)], [.text("Cher"), .null, .integer(0)], [.null, .null, .integer(0)]])
    }
}
