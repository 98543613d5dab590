import Foundation
import Synchronization
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

/// Relationship mappings of an entity mapping that runs in Swift are recreated exactly as on the
/// SQL path — the bug where every `Book.author` link and `Book.labels` row vanished once
/// `BookToBook` named a manager hook.
@Suite("Relationships survive the Swift path")
struct SwiftPathRelationshipTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// configs/library, copied, with `userInfo: { manager: MyMigrationManager }` on BookToBook.
    private func libraryWithManagerHook() throws -> VersionedModel {
        let copy = directory.url.appendingPathComponent("lib")
        try FileManager.default.copyItem(at: URL(fileURLWithPath: Configs.path("library")), to: copy)
        let mapping = copy.appendingPathComponent("mappings/2-books-and-chapters.yaml")
        let text = try String(contentsOf: mapping, encoding: .utf8)
        let edited = text.replacingOccurrences(of: "    destination: Book\n", with: "    destination: Book\n    userInfo: { manager: MyMigrationManager }\n")
        #expect(edited != text)
        try edited.write(to: mapping, atomically: true, encoding: .utf8)
        return try ModelLoader.load(copy.path)
    }

    /// (book title, author name) and (book title, label text) pairs, sorted: relationships by
    /// content, not by keys.
    private func links(_ connection: Connection, tags: String) throws -> (authors: [String], labels: [String]) {
        let authors = try rows(connection, "SELECT b.ZTITLE, a.ZNAME FROM ZBOOK b JOIN ZAUTHOR a ON a.Z_PK = b.ZAUTHOR ORDER BY 1, 2")
        return (authors, try rows(connection, tags))
    }

    @Test("the reported case: BookToBook through MyMigrationManager keeps all 1,809 author links and 2,649 label rows")
    func managerHookKeepsLinks() throws {
        let model = try libraryWithManagerHook()
        let source = directory.path("l1.sqlite")
        _ = try DataGenerator.generate(model: model.version(named: "Library 1")!, at: source, rows: 2000, seed: 3)
        let output = directory.path("lo.sqlite")
        var registry = PolicyRegistry()
        registry.delegate = ObservingManager()
        let migration = StoreMigration(store: source, model: model, options: MigrationOptions(batchSize: 300, workers: 2, registry: registry))
        _ = try migration.runBlocking(try migration.plan(), output: output)

        let old = try Connection(path: source, configuration: .init(mode: .readOnly))
        let new = try Connection(path: output, configuration: .init(mode: .readOnly))
        let before = try links(
            old,
            tags:
                "SELECT b.ZTITLE, upper(t.ZLABEL) FROM ZBOOK b JOIN Z_2TAGS j ON j.Z_2BOOKS = b.Z_PK JOIN ZTAG t ON t.Z_PK = j.Z_4TAGS WHERE t.ZLABEL IS NOT NULL ORDER BY 1, 2"
        )
        let after = try links(
            new, tags: "SELECT b.ZTITLE, l.ZTEXT FROM ZBOOK b JOIN Z_2LABELS j ON j.Z_2BOOKS = b.Z_PK JOIN ZLABEL l ON l.Z_PK = j.Z_4LABELS ORDER BY 1, 2")
        #expect(before.authors.count == 1809)
        #expect(before.labels.count == 2649)
        #expect(after.authors.count == 1809)
        #expect(after.labels.count == 2649)
        #expect(after.authors == before.authors, "author links differ")
        #expect(after.labels == before.labels, "label links differ")
        #expect(try new.scalar("SELECT count(*) FROM ZBOOK") == .integer(2000))
        #expect(ObservingManager.associations.withLock { $0 } >= 2000)
    }

    /// A manager hook on the mappings whose user info names `MyMigrationManager`, as the book's
    /// is, which only counts what it sees: its mappings then run in Swift.
    struct ObservingManager: MigrationManagerDelegate {
        static let associations = Mutex(0)
        func observes(_ mapping: EntityMapping) -> Bool { mapping.userInfo["manager"] == "MyMigrationManager" }
        func associate(source: SourceObject, destination: inout DestinationObject, mapping: EntityMapping) {
            Self.associations.withLock { $0 += 1 }
        }
    }

    @Test("every mapping forced through Swift gives the same store as SQL", arguments: ["library", "bookstore", "recipes", "bench"])
    func forcedSwiftEqualsSQL(config: String) throws {
        let model = try ModelLoader.load(Configs.path(config))
        let source = directory.path("\(config).sqlite")
        _ = try DataGenerator.generate(model: model.versions[0], at: source, rows: 400, seed: 5)
        func migrate(_ registry: PolicyRegistry, _ name: String) throws -> [String: [String]] {
            let output = directory.path(name)
            let migration = StoreMigration(store: source, model: model, options: MigrationOptions(batchSize: 37, workers: 2, registry: registry))
            _ = try migration.runBlocking(try migration.plan(), output: output)
            return try StoreContent.dump(output, model: model.version(named: model.currentVersionName)!)
        }
        let sql = try migrate(.builtIn, "\(config)-sql.sqlite")
        let swift = try migrate(PolicyRegistry.builtIn.sendingEveryMappingThroughSwift(), "\(config)-swift.sqlite")
        #expect(sql.keys.sorted() == swift.keys.sorted())
        for table in sql.keys.sorted() {
            #expect(sql[table] == swift[table], "table \(table)")
        }
    }
}
