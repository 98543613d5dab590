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
import TernExamples
import TernSQLite

/// A policy's object takes its source object's key when it can, so foreign keys need no
/// translation; whatever shape a policy has, the store it gives is the one its associations
/// describe — checked by content against the source, never by counts.
@Suite("A policy's objects keep their source keys")
struct PolicyKeptKeysTests {
    let directory: TemporaryDirectory
    let model: VersionedModel
    let source: String

    init() throws {
        let bench = try BenchSource(books: 300, seed: 7)
        (directory, model, source) = (bench.directory, bench.model, bench.path)
        // Gaps in the keys: a deleted book's key must not come back as a policy's extra object.
        let connection = try Connection(path: source)
        try connection.execute("DELETE FROM ZPAGE WHERE ZBOOK IN (SELECT Z_PK FROM ZBOOK WHERE Z_PK % 50 = 0)")
        try connection.execute("DELETE FROM ZBOOK WHERE Z_PK % 50 = 0")
        try connection.close()
    }

    /// Bench 1 → 2 through `configs/bench/policy/1-to-2.yaml`, its `AuthorSplitPolicy` being `policy`.
    private func migrate(_ policy: some EntityMigrationPolicy, batchSize: Int) throws -> (output: Connection, report: StepReport) {
        var registry = PolicyRegistry()
        registry.register(policy, as: "AuthorSplitPolicy")
        let output = directory.path("out-\(UUID().uuidString).sqlite")
        let migration = StoreMigration(store: source, model: model, options: MigrationOptions(batchSize: batchSize, workers: 2, registry: registry))
        let report = try migration.runBlocking(try migration.plan(mappingFiles: [Configs.path("bench") + "/policy/1-to-2.yaml"]), output: output)
        return (try Connection(path: output, configuration: .init(mode: .readOnly)), report.steps[0])
    }

    private func rows(_ connection: Connection, _ sql: String) throws -> [String] {
        var result: [String] = []
        var rows = try connection.prepare(sql).rows()
        while let row = try rows.next() { result.append(row.values.map(\.sqlLiteral).joined(separator: "|")) }
        return result
    }

    @Test("one object per source object: every key kept, the same store as all in SQL", arguments: [7, 1000])
    func oneToOne(batchSize: Int) throws {
        let (output, report) = try migrate(BookStoreExample.AuthorSplitPolicy(), batchSize: batchSize)
        #expect(report.mappings.first { $0.name == "BookToPublication" }?.keptKeys == true)
        let original = try Connection(path: source, configuration: .init(mode: .readOnly))
        #expect(try rows(output, "SELECT Z_PK, ZTITLE FROM ZPUBLICATION ORDER BY 1") == rows(original, "SELECT Z_PK, ZTITLE FROM ZBOOK ORDER BY 1"))
        #expect(
            try rows(output, "SELECT g.ZTEXT, p.ZTITLE FROM ZPAGE g LEFT JOIN ZPUBLICATION p ON p.Z_PK = g.ZBOOK ORDER BY 1, 2")
                == rows(original, "SELECT g.ZTEXT, b.ZTITLE FROM ZPAGE g LEFT JOIN ZBOOK b ON b.Z_PK = g.ZBOOK ORDER BY 1, 2"))
        #expect(
            try rows(output, "SELECT c.ZNAME, p.ZTITLE FROM ZPUBLICATION p JOIN ZCATEGORY c ON c.Z_PK = p.ZCATEGORY ORDER BY 1, 2")
                == rows(original, "SELECT c.ZNAME, b.ZTITLE FROM ZBOOK b JOIN ZCATEGORY c ON c.Z_PK = b.ZCATEGORY ORDER BY 1, 2"))
    }

    /// Makes nothing for books with an odd key.
    struct SkipsOddBooks: EntityMigrationPolicy {
        func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            guard source.key % 2 == 0 else { return }
            context.associate(source, with: context.create(try context.defaultDestination(for: source)))
        }
    }

    @Test("objects skipped: no key taken for granted; the pages of a skipped book lose their book, the others keep theirs")
    func skipped() throws {
        let (output, report) = try migrate(SkipsOddBooks(), batchSize: 13)
        #expect(report.mappings.first { $0.name == "BookToPublication" }?.keptKeys == false)
        let original = try Connection(path: source, configuration: .init(mode: .readOnly))
        #expect(try rows(output, "SELECT ZTITLE FROM ZPUBLICATION ORDER BY 1") == rows(original, "SELECT ZTITLE FROM ZBOOK WHERE Z_PK % 2 = 0 ORDER BY 1"))
        #expect(
            try rows(output, "SELECT g.ZTEXT, p.ZTITLE FROM ZPAGE g LEFT JOIN ZPUBLICATION p ON p.Z_PK = g.ZBOOK ORDER BY 1, 2")
                == rows(original, "SELECT g.ZTEXT, b.ZTITLE FROM ZPAGE g LEFT JOIN ZBOOK b ON b.Z_PK = g.ZBOOK AND b.Z_PK % 2 = 0 ORDER BY 1, 2"))
        #expect(
            try rows(output, "SELECT c.ZNAME, p.ZTITLE FROM ZPUBLICATION p JOIN ZCATEGORY c ON c.Z_PK = p.ZCATEGORY ORDER BY 1, 2")
                == rows(original, "SELECT c.ZNAME, b.ZTITLE FROM ZBOOK b JOIN ZCATEGORY c ON c.Z_PK = b.ZCATEGORY WHERE b.Z_PK % 2 = 0 ORDER BY 1, 2"))
    }

    /// Associates each odd book's publication with it twice, and an even book's with nothing:
    /// as many associations as books, each the identity, yet half the books have none.
    struct AssociatesOddBooksTwice: EntityMigrationPolicy {
        func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            let publication = context.create(try context.defaultDestination(for: source))
            guard source.key % 2 == 1 else { return }
            context.associate(source, with: publication)
            context.associate(source, with: publication)
        }
    }

    @Test("as many identity associations as books, one book's twice and another's none: no key taken for granted", arguments: [13, 1000])
    func associatedTwice(batchSize: Int) throws {
        // As many odd books as even ones (the even multiples of 50 are gone): 144 of each.
        let editor = try Connection(path: source)
        try editor.execute("DELETE FROM ZPAGE WHERE ZBOOK IN (1, 3, 5, 7, 9, 11)")
        try editor.execute("DELETE FROM ZBOOK WHERE Z_PK IN (1, 3, 5, 7, 9, 11)")
        try editor.close()
        let (output, report) = try migrate(AssociatesOddBooksTwice(), batchSize: batchSize)
        #expect(report.mappings.first { $0.name == "BookToPublication" }?.keptKeys == false)
        let original = try Connection(path: source, configuration: .init(mode: .readOnly))
        #expect(try rows(original, "SELECT count(*) FROM ZBOOK GROUP BY Z_PK % 2 ORDER BY 1") == ["144", "144"])
        #expect(try rows(output, "SELECT count(*) FROM ZPUBLICATION") == ["288"])
        // An even book's pages lose their book (its publication took a new key); an odd one's keep it.
        #expect(
            try rows(output, "SELECT g.ZTEXT, p.ZTITLE FROM ZPAGE g LEFT JOIN ZPUBLICATION p ON p.Z_PK = g.ZBOOK ORDER BY 1, 2")
                == rows(original, "SELECT g.ZTEXT, b.ZTITLE FROM ZPAGE g LEFT JOIN ZBOOK b ON b.Z_PK = g.ZBOOK AND b.Z_PK % 2 = 1 ORDER BY 1, 2"))
    }

    /// Also makes, without associating them, a second publication and a category per book:
    /// extra objects in the policy's own table and in a table whose keys the SQL mapping keeps.
    struct MakesExtras: EntityMigrationPolicy {
        func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            var copy = try context.defaultDestination(for: source)
            copy["title"] = .text("copy of \(try source["title"].text ?? "")")
            _ = context.create(copy)
            _ = context.create(DestinationObject(entity: "Category", values: ["name": .text("made for \(try source["title"].text ?? "")")]))
            context.associate(source, with: context.create(try context.defaultDestination(for: source)))
        }
    }

    @Test("extra objects get keys above every source key, in the policy's table and in one the SQL mapping copies with its keys", arguments: [11, 1000])
    func extras(batchSize: Int) throws {
        let (output, report) = try migrate(MakesExtras(), batchSize: batchSize)
        #expect(report.mappings.first { $0.name == "BookToPublication" }?.keptKeys == true)
        let original = try Connection(path: source, configuration: .init(mode: .readOnly))
        let highestBook = try original.scalar("SELECT max(Z_MAX) FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book'")!.int64!
        let highestCategory = try original.scalar("SELECT max(Z_PK) FROM ZCATEGORY")!.int64!
        #expect(
            try rows(output, "SELECT Z_PK, ZTITLE FROM ZPUBLICATION WHERE ZTITLE NOT LIKE 'copy of %' ORDER BY 1")
                == rows(original, "SELECT Z_PK, ZTITLE FROM ZBOOK ORDER BY 1"))
        #expect(
            try rows(output, "SELECT ZTITLE FROM ZPUBLICATION WHERE ZTITLE LIKE 'copy of %' AND Z_PK > \(highestBook) ORDER BY 1")
                == rows(original, "SELECT 'copy of ' || ZTITLE FROM ZBOOK ORDER BY 1"))
        #expect(
            try rows(output, "SELECT Z_PK, ZNAME FROM ZCATEGORY WHERE Z_PK <= \(highestCategory) ORDER BY 1")
                == rows(original, "SELECT Z_PK, ZNAME FROM ZCATEGORY ORDER BY 1"))
        #expect(
            try rows(output, "SELECT ZNAME FROM ZCATEGORY WHERE Z_PK > \(highestCategory) ORDER BY 1")
                == rows(original, "SELECT 'made for ' || ZTITLE FROM ZBOOK ORDER BY 1"))
        #expect(
            try rows(output, "SELECT g.ZTEXT, p.ZTITLE FROM ZPAGE g LEFT JOIN ZPUBLICATION p ON p.Z_PK = g.ZBOOK ORDER BY 1, 2")
                == rows(original, "SELECT g.ZTEXT, b.ZTITLE FROM ZPAGE g LEFT JOIN ZBOOK b ON b.Z_PK = g.ZBOOK ORDER BY 1, 2"))
        #expect(
            try rows(output, "SELECT c.ZNAME, p.ZTITLE FROM ZPUBLICATION p JOIN ZCATEGORY c ON c.Z_PK = p.ZCATEGORY ORDER BY 1, 2")
                == rows(original, "SELECT c.ZNAME, b.ZTITLE FROM ZBOOK b JOIN ZCATEGORY c ON c.Z_PK = b.ZCATEGORY ORDER BY 1, 2"))
        // Core Data hands out keys above Z_MAX: it must cover every key the store holds.
        #expect(try output.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Publication'") == output.scalar("SELECT max(Z_PK) FROM ZPUBLICATION"))
        #expect(try output.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Category'") == output.scalar("SELECT max(Z_PK) FROM ZCATEGORY"))
    }

    /// Associates each even book with a new category first, then with its publication: the
    /// association table holds keys of two tables, and the category's key is often the lower.
    struct AssociatesTwoTables: EntityMigrationPolicy {
        func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            guard source.key % 2 == 0 else { return }
            context.associate(
                source, with: context.create(DestinationObject(entity: "Category", values: ["name": .text("made for \(try source["title"].text ?? "")")])))
            context.associate(source, with: context.create(try context.defaultDestination(for: source)))
        }
    }

    @Test("a source object associated with objects of two tables: relationships to it hold the one of the mapping's entity")
    func associatedWithTwoTables() throws {
        let (output, report) = try migrate(AssociatesTwoTables(), batchSize: 17)
        #expect(report.mappings.first { $0.name == "BookToPublication" }?.keptKeys == false)
        let original = try Connection(path: source, configuration: .init(mode: .readOnly))
        #expect(
            try rows(output, "SELECT g.ZTEXT, p.ZTITLE FROM ZPAGE g LEFT JOIN ZPUBLICATION p ON p.Z_PK = g.ZBOOK ORDER BY 1, 2")
                == rows(original, "SELECT g.ZTEXT, b.ZTITLE FROM ZPAGE g LEFT JOIN ZBOOK b ON b.Z_PK = g.ZBOOK AND b.Z_PK % 2 = 0 ORDER BY 1, 2"))
        #expect(
            try rows(output, "SELECT ZNAME FROM ZCATEGORY WHERE ZNAME LIKE 'made for %' ORDER BY 1")
                == rows(original, "SELECT 'made for ' || ZTITLE FROM ZBOOK WHERE Z_PK % 2 = 0 ORDER BY 1"))
    }

    /// Associates each book's publication with the next book (by key) instead: Core Data lets a
    /// policy associate any source object.
    struct AssociatesNextBook: EntityMigrationPolicy {
        func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            let next = SourceObject(key: source.key + 1, entity: source.entity, values: [:])
            context.associate(next, with: context.create(try context.defaultDestination(for: source)))
        }
    }

    @Test("an object associated with another source object than its own takes that object's to-ones", arguments: [9, 1000])
    func associatedWithAnotherSource(batchSize: Int) throws {
        let (output, _) = try migrate(AssociatesNextBook(), batchSize: batchSize)
        let original = try Connection(path: source, configuration: .init(mode: .readOnly))
        #expect(
            try rows(output, "SELECT p.ZTITLE, c.ZNAME FROM ZPUBLICATION p LEFT JOIN ZCATEGORY c ON c.Z_PK = p.ZCATEGORY ORDER BY 1, 2")
                == rows(
                    original,
                    "SELECT b.ZTITLE, c.ZNAME FROM ZBOOK b LEFT JOIN ZBOOK n ON n.Z_PK = b.Z_PK + 1 LEFT JOIN ZCATEGORY c ON c.Z_PK = n.ZCATEGORY ORDER BY 1, 2"
                ))
    }
}
