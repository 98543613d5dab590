import Foundation
import Tern
import TernSQLite
import Testing

/// Stores the Tern of 2026-11-24 (commit 05719d0) wrote with its own layout rules, kept as SQL
/// dumps in `Tests/Fixtures/EarlierTern/stores`: a many-to-many whose join table it named after
/// the other side than Core Data does, and two to-manys with no inverse (one ordered) kept in join
/// tables, where Core Data keeps a hidden key in each destination's row.
@Suite("Stores an earlier Tern laid out")
struct EarlierTernLayoutTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/EarlierTern")

    static func model() throws -> VersionedModel { try ModelLoader.load(folder.path) }

    /// The dump of the store the earlier Tern generated for version `number`, loaded into a file.
    static func store(_ number: Int, in directory: TemporaryDirectory) throws -> String {
        let path = directory.path("v\(number).sqlite")
        let connection = try Connection(path: path)
        try connection.execute(try String(contentsOf: folder.appendingPathComponent("stores/v\(number).sql"), encoding: .utf8))
        try connection.close()
        return path
    }

    /// Every link of `relationship` of `entity` as (owner, target, order key or -1), read where
    /// `layout` keeps it.
    static func links(_ relationship: String, of entity: String, layout: StoreLayout, connection: Connection) throws -> Set<[Int64]> {
        let query: String
        switch try #require(layout.storage(ofRelationship: relationship, of: entity)) {
        case .foreignKey(let column):
            let own = try #require(layout.entities[entity])
            query = "SELECT Z_PK, \(quoteIdentifier(column)), -1 FROM \(quoteIdentifier(own.table)) WHERE \(quoteIdentifier(column)) IS NOT NULL"
        case .inverseForeignKey(let table, let column, let order), .hiddenKey(let table, let column, let order):
            query =
                "SELECT \(quoteIdentifier(column)), Z_PK, \(order.map(quoteIdentifier) ?? "-1") FROM \(quoteIdentifier(table)) WHERE \(quoteIdentifier(column)) IS NOT NULL"
        case .joinTable(let table, let own, let destination, let order):
            query = "SELECT \(quoteIdentifier(own)), \(quoteIdentifier(destination)), \(order.map(quoteIdentifier) ?? "-1") FROM \(quoteIdentifier(table))"
        }
        var found: Set<[Int64]> = []
        let statement = try connection.prepare(query)
        var rows = statement.rows()
        while let row = try rows.next() { found.insert([row.int64(at: 0), row.int64(at: 1), row.int64(at: 2)]) }
        return found
    }

    /// Every table, index and trigger of the store at `path`, as `sqlite_master` gives them.
    static func schema(of path: String) throws -> [String] {
        let connection = try Connection(path: path, configuration: .init(mode: .readOnly))
        let statement = try connection.prepare("SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_master ORDER BY name")
        var rows = statement.rows()
        var found: [String] = []
        while let row = try rows.next() { found.append(row.text(at: 0) ?? "") }
        return found
    }

    @Test("the earlier Tern's rules give the tables that release wrote, which are not Core Data's")
    func rules() throws {
        let directory = try TemporaryDirectory()
        let model = try Self.model()
        for number in [1, 2] {
            let version = try #require(model.version(named: "Shelves \(number)"))
            let connection = try Connection(path: try Self.store(number, in: directory), configuration: .init(mode: .readOnly))
            let signature = try LayoutSignature(connection: connection)
            #expect(signature == LayoutSignature(layout: StoreLayout(model: version, rules: .earlierTern)))
            #expect(signature != LayoutSignature(layout: StoreLayout(model: version)))
            #expect(signature.joinTables.keys.sorted() == ["Z_2NOTES", "Z_2RELATED", "Z_2WRITERS"])
        }
    }

    @Test("recognised as an earlier Tern's store of its version, which needs migrating even at the current version")
    func recognised() throws {
        let directory = try TemporaryDirectory()
        let model = try Self.model()
        for number in [1, 2] {
            let match = try VersionMatch.find(in: model, storeAt: try Self.store(number, in: directory))
            #expect(match.verdict == .migrationNeeded(from: "Shelves \(number)", to: "Shelves 2", evidence: .earlierTern))
        }
    }

    @Test("an earlier Tern's store that matches no version is compared with that release's layout: one extra table is named, not every join table")
    func extraTable() throws {
        let directory = try TemporaryDirectory()
        let store = try Self.store(1, in: directory)
        try Connection(path: store).execute("CREATE TABLE Z_9FOO (Z_2BOOK INTEGER, Z_9FOO INTEGER)")
        guard case .noMatch(let closest, let differences) = try VersionMatch.find(in: try Self.model(), storeAt: store).verdict else {
            Issue.record("a store with a join table no version has was taken for a version")
            return
        }
        #expect(closest == "Shelves 1")
        #expect(differences.contains { $0.hasPrefix("by the earlier Tern's rules: ") && $0.contains("Z_9FOO") }, "\(differences)")
        #expect(!differences.contains { $0.contains("Z2RELATED") }, "\(differences)")
    }

    @Test(
        "migrated into Core Data's layout with Core Data's hashes, in SQL and through Swift batches: every object and many-to-many link carried, a hidden key keeping each object's first owner, the other owners counted as dropped",
        arguments: [1, 2], [false, true])
    func migrated(number: Int, inSwift: Bool) throws {
        let directory = try TemporaryDirectory()
        let model = try Self.model()
        let source = try Self.store(number, in: directory)
        let before = try Data(contentsOf: URL(fileURLWithPath: source))
        // Both paths: inside SQLite, and every entity mapping through Swift batches.
        let registry = inSwift ? PolicyRegistry().sendingEveryMappingThroughSwift() : PolicyRegistry()
        let migration = StoreMigration(store: source, model: model, options: MigrationOptions(batchSize: 7, workers: 2, registry: registry))
        let plan = try migration.plan()
        #expect(plan.steps.count == 1)
        #expect(plan.steps[0].sourceRules == .earlierTern)
        let output = directory.path("out.sqlite")
        let report = try migration.runBlocking(plan, output: output)
        #expect(try Data(contentsOf: URL(fileURLWithPath: source)) == before, "the source was modified")

        // Core Data's layout and hashes: what a store generated for the version has.
        #expect(try VersionMatch.find(in: model, storeAt: output).verdict == .compatible(version: "Shelves 2", evidence: .appleHashes))
        let fresh = directory.path("fresh.sqlite")
        let connection = try StoreFile.create(at: fresh, model: model.current)
        try ObjectWriter(connection: connection, layout: StoreLayout(model: model.current)).finish()
        try connection.close()
        #expect(try Self.schema(of: fresh) == Self.schema(of: output))

        // Every object, every value (kept keys: the copy keeps them).
        let old = try Connection(path: source, configuration: .init(mode: .readOnly))
        let new = try Connection(path: output, configuration: .init(mode: .readOnly))
        try new.execute("ATTACH DATABASE ? AS old", source)
        for table in ["ZAUTHOR", "ZBOOK", "ZNOTE", "ZSHELF"] {
            let columns = try old.tableColumns().first { $0.table == table }!.columns.filter { $0 != "Z_OPT" }.map(quoteIdentifier).joined(separator: ", ")
            let missing = try new.scalar("SELECT count(*) FROM (SELECT \(columns) FROM old.\(table) EXCEPT SELECT \(columns) FROM main.\(table))")?.int64
            let extra = try new.scalar("SELECT count(*) FROM (SELECT \(columns) FROM main.\(table) EXCEPT SELECT \(columns) FROM old.\(table))")?.int64
            #expect(missing == 0 && extra == 0, "\(table)")
        }

        // Every link: the to-ones and many-to-manys as they were; a to-many with no inverse
        // keeps, for each object, its smallest owner with that owner's order key.
        let version = try #require(model.version(named: "Shelves \(number)"))
        let oldLayout = StoreLayout(model: version, rules: .earlierTern)
        let newLayout = StoreLayout(model: model.current)
        for (entity, relationship) in [("Author", "books"), ("Book", "writers"), ("Shelf", "books"), ("Book", "shelf")] {
            #expect(
                try Self.links(relationship, of: entity, layout: oldLayout, connection: old)
                    == Self.links(relationship, of: entity, layout: newLayout, connection: new), "\(entity).\(relationship)")
        }
        var dropped: [String: Int] = [:]
        for relationship in ["related", "notes"] {
            let all = try Self.links(relationship, of: "Book", layout: oldLayout, connection: old)
            let first = Dictionary(grouping: all, by: { $0[1] }).mapValues { $0.min { $0[0] < $1[0] }! }
            #expect(Set(first.values) == (try Self.links(relationship, of: "Book", layout: newLayout, connection: new)), "Book.\(relationship)")
            dropped["Book.\(relationship)"] = all.count - first.count
            #expect(all.count > first.count, "the fixture gives some objects several owners")
        }
        let counted = report.steps.flatMap(\.dropped).filter { $0.links == .beyondFirstOwner }
        #expect(Dictionary(uniqueKeysWithValues: counted.map { ("\($0.entity).\($0.property ?? "")", $0.values ?? 0) }) == dropped)
    }

    @Test("refusing data loss, the owners Core Data cannot keep stop the run before anything is written")
    func refusedDataLoss() throws {
        let directory = try TemporaryDirectory()
        let source = try Self.store(1, in: directory)
        var options = MigrationOptions()
        options.refuseDataLoss = true
        let migration = StoreMigration(store: source, model: try Self.model(), options: options)
        let output = directory.path("out.sqlite")
        let failure = try #require(throws: TernFailure.self) { try migration.runBlocking(try migration.plan(), output: output) }
        #expect(failure.description.contains("Book.related"), "\(failure.description)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test("in place, a store at the current version is copied into Core Data's layout and replaces the original, which is kept")
    func inPlace() throws {
        let directory = try TemporaryDirectory()
        let model = try Self.model()
        let source = try Self.store(2, in: directory)
        let before = try Data(contentsOf: URL(fileURLWithPath: source))
        let migration = StoreMigration(store: source, model: model)
        let report = try migration.runBlocking(try migration.plan())
        #expect(try VersionMatch.find(in: model, storeAt: source).verdict == .compatible(version: "Shelves 2", evidence: .appleHashes))
        let backup = try #require(report.backup)
        #expect(try Data(contentsOf: URL(fileURLWithPath: backup)) == before)
        // Nothing left to do: the store is Core Data's now.
        #expect(try StoreMigration(store: source, model: model).plan().steps.isEmpty)
    }
}
