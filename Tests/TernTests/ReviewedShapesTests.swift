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
import Synchronization

/// Shapes a hostile review found losing links or failing: each migrates by content, on the SQL
/// and the Swift path.
@Suite("Shapes found by review")
struct ReviewedShapesTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Writes a model directory: versions (YAML text) and mapping files.
    private func model(_ name: String, _ v1: String, _ v2: String, mappings: [String: String]) throws -> VersionedModel {
        let root = directory.url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: root.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try "name: \(name)\ncurrent: \(name) 2\nversions: [v1.yaml, v2.yaml]\n".write(
            to: root.appendingPathComponent("model.yaml"), atomically: true, encoding: .utf8)
        try "version: \(name) 1\n\(v1)".write(to: root.appendingPathComponent("v1.yaml"), atomically: true, encoding: .utf8)
        try "version: \(name) 2\n\(v2)".write(to: root.appendingPathComponent("v2.yaml"), atomically: true, encoding: .utf8)
        for (file, text) in mappings {
            try "source: \(name) 1\ndestination: \(name) 2\n\(text)".write(
                to: root.appendingPathComponent("mappings/\(file)"), atomically: true, encoding: .utf8)
        }
        return try ModelLoader.load(root.path)
    }

    /// Generates a store of `version` (default: the first), applies `edit`, migrates it to `target`.
    private func migrate(
        _ model: VersionedModel, version: String? = nil, rows: Int, edit: String? = nil, inSwift: Bool,
        to target: String? = nil, mappingFiles: [String] = []
    ) throws -> (source: Connection, migrated: Connection) {
        let source = directory.path("\(model.name)-\(inSwift).sqlite")
        _ = try DataGenerator.generate(model: version.flatMap(model.version(named:)) ?? model.versions[0], at: source, rows: rows, seed: 3)
        if let edit { try Connection(path: source, configuration: .init(mode: .readWrite)).execute(edit) }
        let output = directory.path("\(model.name)-\(inSwift)-out.sqlite")
        let migration = StoreMigration(store: source, model: model, options: MigrationOptions(batchSize: 7, workers: 2, registry: .builtIn(inSwift: inSwift)))
        _ = try migration.runBlocking(try migration.plan(to: target, mappingFiles: mappingFiles), output: output)
        return (try Connection(path: source, configuration: .init(mode: .readOnly)), try Connection(path: output, configuration: .init(mode: .readOnly)))
    }

    @Test("$source.rel links only to objects the relationship can hold, not to another mapping's of the same source entity", arguments: [false, true])
    func targetsOfTheRightEntity(inSwift: Bool) throws {
        let v1 = """
            entities:
              Person:
                attributes: { name: string, age: integer32 }
                relationships: { team: { destination: Team, inverse: members } }
              Team:
                attributes: { title: string }
                relationships: { members: { destination: Person, toMany: true, inverse: team } }

            """
        let model = try model(
            "COV", v1, v1 + "  PersonLog:\n    attributes: { name: string }\n",
            mappings: [
                "m.yaml": """
                entityMappings:
                  - { name: PersonToLog, type: transform, source: Person, destination: PersonLog, filter: 'team != nil', attributes: { name: $source.name } }
                  - { name: PersonToPerson, type: copy, source: Person, destination: Person, attributes: { name: $source.name, age: $source.age } }
                  - { name: TeamToTeam, type: copy, source: Team, destination: Team, attributes: { title: $source.title }, relationships: { members: $source.members } }
                """
            ])
        let (source, migrated) = try migrate(model, rows: 30, inSwift: inSwift)
        let query = "SELECT p.ZNAME, p.ZAGE, t.ZTITLE FROM ZPERSON p LEFT JOIN ZTEAM t ON t.Z_PK = p.ZTEAM ORDER BY 1, 2, 3"
        #expect(try rows(source, query) == rows(migrated, query))
        #expect(try rows(source, query).contains { !$0.hasSuffix("|NULL") })
    }

    @Test("a plan cutting the library's mappings into passes by predicate keeps every chapter's book", arguments: [false, true])
    func planSplitKeepsLinksAcrossPasses(inSwift: Bool) throws {
        let copy = directory.url.appendingPathComponent("lib")
        try FileManager.default.copyItem(at: URL(fileURLWithPath: Configs.path("library")), to: copy)
        try FileManager.default.createDirectory(at: copy.appendingPathComponent("plans"), withIntermediateDirectories: true)
        let plan = copy.appendingPathComponent("plans/split.yaml").path
        try """
        source: Library 1
        destination: Library 2
        passes:
          - mapping: ../mappings/1-authors-and-labels.yaml
          - mapping: ../mappings/2-books-and-chapters.yaml
            filter: title BEGINSWITH "A" OR title BEGINSWITH "E" OR title BEGINSWITH "G"
          - mapping: ../mappings/2-books-and-chapters.yaml
            filter: NOT (title BEGINSWITH "A" OR title BEGINSWITH "E" OR title BEGINSWITH "G") OR title == nil
        """.write(toFile: plan, atomically: true, encoding: .utf8)
        let model = try ModelLoader.load(copy.path)
        let (source, migrated) = try migrate(model, rows: 200, inSwift: inSwift, mappingFiles: [plan])
        let chapters = "SELECT c.ZTITLE, b.ZTITLE, c.Z_FOK_BOOK FROM ZCHAPTER c LEFT JOIN ZBOOK b ON b.Z_PK = c.ZBOOK ORDER BY 1, 2, 3"
        let before = try rows(source, chapters)
        let after = try rows(migrated, chapters)
        #expect(before.count == after.count)
        #expect(
            Set(before.map { $0.split(separator: "|").prefix(2).joined(separator: "|") })
                == Set(after.map { $0.split(separator: "|").prefix(2).joined(separator: "|") }))
        #expect(try migrated.scalar("SELECT count(ZBOOK) FROM ZCHAPTER") == source.scalar("SELECT count(ZBOOK) FROM ZCHAPTER"))
    }

    @Test("a one-to-one mapped from one side has both foreign keys", arguments: [false, true])
    func oneToOneMirrored(inSwift: Bool) throws {
        let entities = """
            entities:
              Person:
                attributes: { name: string }
                relationships: { passport: { destination: Passport, inverse: owner } }
              Passport:
                attributes: { number: string }
                relationships: { owner: { destination: Person, inverse: passport } }
            """
        let model = try model(
            "OTO", entities, entities.replacingOccurrences(of: "attributes: { name: string }", with: "attributes: { name: string, nick: string }"),
            mappings: [
                "m.yaml": """
                entityMappings:
                  - { name: PassportToPassport, type: copy, source: Passport, destination: Passport, attributes: { number: $source.number } }
                  - { name: PersonToPerson, type: transform, source: Person, destination: Person, attributes: { name: $source.name, nick: 'uppercase:($source.name)' }, relationships: { passport: $source.passport } }
                """
            ])
        let (source, migrated) = try migrate(model, rows: 20, inSwift: inSwift)
        let owners = "SELECT p.ZNUMBER, o.ZNAME FROM ZPASSPORT p JOIN ZPERSON o ON o.Z_PK = p.ZOWNER ORDER BY 1, 2"
        let passports = "SELECT o.ZNAME, p.ZNUMBER FROM ZPERSON o JOIN ZPASSPORT p ON p.Z_PK = o.ZPASSPORT ORDER BY 1, 2"
        #expect(try rows(source, owners) == rows(migrated, owners))
        #expect(try rows(source, passports) == rows(migrated, passports))
        #expect(try !rows(migrated, owners).isEmpty)
    }

    @Test("one source entity into two sibling subentities of one table", arguments: [false, true])
    func oneSourceTwoSiblings(inSwift: Bool) throws {
        let model = try model(
            "SPLIT",
            """
            entities:
              Person:
                attributes: { name: string, age: integer32 }
            """,
            """
            entities:
              Party:
                abstract: true
                attributes: { name: string }
              Employee:
                parent: Party
                attributes: { age: integer32 }
              Contact:
                parent: Party
                attributes: { label: string }
            """,
            mappings: [
                "m.yaml": """
                entityMappings:
                  - { name: PersonToEmployee, type: transform, source: Person, destination: Employee, attributes: { name: $source.name, age: $source.age } }
                  - { name: PersonToContact, type: transform, source: Person, destination: Contact, attributes: { name: $source.name, label: 'concat:("c-", $source.name)' } }
                """
            ])
        let (source, migrated) = try migrate(model, rows: 20, inSwift: inSwift)
        #expect(
            try rows(source, "SELECT ZNAME, ZAGE FROM ZPERSON ORDER BY 1, 2")
                == rows(migrated, "SELECT ZNAME, ZAGE FROM ZPARTY WHERE Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Employee') ORDER BY 1, 2"))
        #expect(
            try rows(source, "SELECT 'c-' || ZNAME FROM ZPERSON ORDER BY 1")
                == rows(migrated, "SELECT ZLABEL FROM ZPARTY WHERE Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Contact') ORDER BY 1"))
    }

    @Test("binary data in a string attribute is refused on both paths, never a crash", arguments: [false, true])
    func blobInAStringAttribute(inSwift: Bool) throws {
        let model = try ModelLoader.load(Configs.path("library"))
        let error = try requireUnderlying(MigrationError.self) {
            _ = try migrate(model, rows: 20, edit: "UPDATE ZTAG SET ZLABEL = x'c3' WHERE Z_PK = 2", inSwift: inSwift)
        }
        #expect("\(error)".contains("ZTAG: 1 row holding binary data in a string attribute (ZLABEL) (first: Z_PK 2)"), "\(error)")
    }

    /// Books and their chapters, a to-many with a to-one inverse; and the same with the to-many
    /// made an ordered list (kept in the chapters' rows).
    static let chapters = """
        entities:
          Book:
            attributes: { title: string }
            relationships: { chapters: { destination: Chapter, toMany: true, inverse: book } }
          Chapter:
            attributes: { title: string }
            relationships: { book: { destination: Book, inverse: chapters } }
        """
    static let orderedChapters = chapters.replacingOccurrences(of: "toMany: true, inverse: book", with: "toMany: true, ordered: true, inverse: book")

    @Test("an ordered to-many filled only from its to-one side gets order keys, in key order", arguments: [false, true])
    func orderedListFromItsToOneSide(inSwift: Bool) throws {
        let model = try model(
            "ORD", Self.chapters, Self.orderedChapters,
            mappings: [
                "m.yaml": """
                entityMappings:
                  - { name: BookToBook, type: copy, source: Book, destination: Book, attributes: { title: $source.title } }
                  - { name: ChapterToChapter, type: copy, source: Chapter, destination: Chapter, attributes: { title: $source.title }, relationships: { book: $source.book } }
                """
            ])
        let (source, migrated) = try migrate(model, rows: 30, inSwift: inSwift)
        #expect(try migrated.scalar("SELECT count(*) FROM ZCHAPTER WHERE ZBOOK IS NOT NULL AND Z_FOK_BOOK IS NULL") == .integer(0))
        #expect(try migrated.scalar("SELECT count(ZBOOK) FROM ZCHAPTER") == source.scalar("SELECT count(ZBOOK) FROM ZCHAPTER"))
        #expect(
            try rows(migrated, "SELECT ZBOOK, Z_PK FROM ZCHAPTER WHERE ZBOOK IS NOT NULL ORDER BY ZBOOK, Z_FOK_BOOK")
                == rows(migrated, "SELECT ZBOOK, Z_PK FROM ZCHAPTER WHERE ZBOOK IS NOT NULL ORDER BY ZBOOK, Z_PK"))
    }

    @Test(
        "an ordered list made from an unordered one with both sides mapped: numbered ahead on the SQL path, each object takes its place as it is written, as stage 2 numbers it on the Swift path"
    )
    func orderedListNumberedAhead() throws {
        let model = try model(
            "AHEAD", Self.chapters, Self.orderedChapters,
            mappings: [
                "m.yaml": """
                entityMappings:
                  - { name: BookToBook, type: copy, source: Book, destination: Book, attributes: { title: $source.title }, relationships: { chapters: $source.chapters } }
                  - { name: ChapterToChapter, type: copy, source: Chapter, destination: Chapter, attributes: { title: $source.title }, relationships: { book: $source.book } }
                """
            ])
        // Gaps in the keys, and chapters of no book.
        let edit = "DELETE FROM ZCHAPTER WHERE Z_PK % 7 = 0; UPDATE ZCHAPTER SET ZBOOK = NULL WHERE Z_PK % 5 = 0"
        let (source, sql) = try migrate(model, rows: 60, edit: edit, inSwift: false)
        let (_, swift) = try migrate(model, rows: 60, edit: edit, inSwift: true)
        let places = "SELECT Z_PK, ZBOOK, Z_FOK_BOOK FROM ZCHAPTER ORDER BY Z_PK"
        #expect(try rows(sql, places) == rows(swift, places))
        #expect(
            try rows(sql, places)
                == rows(
                    source,
                    "SELECT Z_PK, ZBOOK, CASE WHEN ZBOOK IS NOT NULL THEN 1024 * (row_number() OVER (PARTITION BY ZBOOK ORDER BY Z_PK) + 1) END FROM ZCHAPTER ORDER BY Z_PK"
                ))
        #expect(try sql.scalar("SELECT count(*) FROM ZCHAPTER WHERE ZBOOK IS NOT NULL") != .integer(0))

        // Stopped after three batches of chapters and resumed: numbered ahead again, the same places.
        let interrupted = directory.path("AHEAD-resumed.sqlite")
        let chapterBatches = Mutex(0)
        var options = MigrationOptions(batchSize: 7, workers: 2, registry: .builtIn)
        options.progress = { event in
            if case .batchCommitted(let mapping, _, _, _, _) = event, mapping == "ChapterToChapter" { chapterBatches.withLock { $0 += 1 } }
        }
        options.shouldStop = { chapterBatches.withLock { $0 >= 3 } }
        let stopping = StoreMigration(store: directory.path("AHEAD-false.sqlite"), model: model, options: options)
        #expect(throws: (any Error).self) { _ = try stopping.runBlocking(try stopping.plan(), output: interrupted) }
        #expect(!FileManager.default.fileExists(atPath: interrupted))
        options.shouldStop = { false }
        let resuming = StoreMigration(store: directory.path("AHEAD-false.sqlite"), model: model, options: options)
        _ = try resuming.runBlocking(try resuming.plan(), output: interrupted, resume: true)
        #expect(try rows(Connection(path: interrupted, configuration: .init(mode: .readOnly)), places) == rows(sql, places))

        // With no index on the chapters' book key, the pairs come in no owner order: ranking them
        // as they come (`RunningRank`) is refused, and the window ranks them — the same places.
        let unindexed = directory.path("AHEAD-unindexed.sqlite")
        try FileManager.default.copyItem(atPath: directory.path("AHEAD-false.sqlite"), toPath: unindexed)
        let editing = try Connection(path: unindexed, configuration: .init(mode: .readWrite))
        let indexes = try rows(editing, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ZCHAPTER' AND sql IS NOT NULL")
        #expect(!indexes.isEmpty)
        for index in indexes { try editing.execute("DROP INDEX \(index)") }  // rows renders each name as an SQL literal
        try editing.close()
        let plain = StoreMigration(store: unindexed, model: model, options: MigrationOptions(batchSize: 7, workers: 2, registry: .builtIn))
        let unindexedOutput = directory.path("AHEAD-unindexed-out.sqlite")
        _ = try plain.runBlocking(try plain.plan(), output: unindexedOutput)
        #expect(try rows(Connection(path: unindexedOutput, configuration: .init(mode: .readOnly)), places) == rows(sql, places))
    }

    @Test("every book copied by two mappings keeps its category, with categories' books mapped too", arguments: [false, true])
    func twoCopiesKeepTheirLinks(inSwift: Bool) throws {
        let model = try ModelLoader.load(Configs.path("bookstore"))
        let mapping = directory.path("twice.yaml")
        try """
        source: BookStore 3
        destination: BookStore 4
        entityMappings:
          - { name: CategoryToCategory, type: copy, source: Category, destination: Category, attributes: { name: $source.name }, relationships: { books: $source.books } }
          - { name: Cheap, type: transform, source: Publication, destination: Publication, attributes: { title: $source.title, price: $source.price, lastName: '"cheap"' }, relationships: { category: $source.category } }
          - { name: Dear, type: transform, source: Publication, destination: Publication, attributes: { title: $source.title, price: $source.price, lastName: '"dear"' }, relationships: { category: $source.category } }
          - { name: PageToPage, type: copy, source: Page, destination: Page, attributes: { text: $source.text }, relationships: { book: $source.book } }
        """.write(toFile: mapping, atomically: true, encoding: .utf8)
        let (old, new) = try migrate(model, version: "BookStore 3", rows: 40, inSwift: inSwift, to: "BookStore 4", mappingFiles: [mapping])
        let before = try rows(old, "SELECT p.ZTITLE, c.ZNAME FROM ZPUBLICATION p LEFT JOIN ZCATEGORY c ON c.Z_PK = p.ZCATEGORY ORDER BY 1, 2")
        for copy in ["cheap", "dear"] {
            #expect(
                try rows(
                    new,
                    "SELECT p.ZTITLE, c.ZNAME FROM ZPUBLICATION p LEFT JOIN ZCATEGORY c ON c.Z_PK = p.ZCATEGORY WHERE p.ZLASTNAME = '\(copy)' ORDER BY 1, 2")
                    == before, "\(copy)")
        }
    }

    @Test("a policy given a date no calendar can print fails with a message naming the object, never a crash")
    func eventsPolicyHugeDate() throws {
        let model = try ModelLoader.load(Configs.path("events"))
        let source = directory.path("events.sqlite")
        _ = try DataGenerator.generate(model: model.versions[0], at: source, rows: 20, seed: 3)
        try Connection(path: source, configuration: .init(mode: .readWrite)).execute("UPDATE ZEVENT SET ZTIMESTAMP = 1e19 WHERE Z_PK = 4")
        let migration = StoreMigration(store: source, model: model, options: MigrationOptions(registry: .builtIn))
        let error = try requireUnderlying(TernError.self) { _ = try migration.runBlocking(try migration.plan(), output: directory.path("events-out.sqlite")) }
        #expect("\(error)".contains("Event 4 has a timeStamp of 1e+19 seconds, which is no calendar date"), "\(error)")
    }
}
