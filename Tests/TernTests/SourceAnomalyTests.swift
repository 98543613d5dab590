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

/// Rows Core Data never writes are refused before anything is written, with the table, the
/// problem, the count and a key named — the same on the SQL path and the Swift path.
@Suite("Source anomalies are refused, never dropped in silence")
struct SourceAnomalyTests {
    static let library = try! ModelLoader.load(Configs.path("library"))

    struct Anomaly: Sendable, CustomTestStringConvertible {
        var name: String
        var sql: String
        var expected: String
        var testDescription: String { name }
    }

    static let anomalies = [
        Anomaly(name: "Z_PK 0", sql: "UPDATE ZAUTHOR SET Z_PK = 0 WHERE Z_PK = 5", expected: "ZAUTHOR: 1 row with a Z_PK of 0 or below (first: Z_PK 0)"),
        Anomaly(
            name: "a negative Z_PK", sql: "UPDATE ZAUTHOR SET Z_PK = -3 WHERE Z_PK = 6", expected: "ZAUTHOR: 1 row with a Z_PK of 0 or below (first: Z_PK -3)"),
        Anomaly(
            name: "Z_PK Int64.max", sql: "UPDATE ZAUTHOR SET Z_PK = 9223372036854775807 WHERE Z_PK = 7",
            expected: "ZAUTHOR: 1 row with a Z_PK above 4611686018427387904 (first: Z_PK 9223372036854775807)"),
        Anomaly(
            name: "Z_ENT NULL", sql: "UPDATE ZTAG SET Z_ENT = NULL WHERE Z_PK = 2",
            expected: "ZTAG: 1 row whose Z_ENT is not one of the table's entities (4) (first: Z_PK 2)"),
        Anomaly(
            name: "an unknown Z_ENT", sql: "UPDATE ZTAG SET Z_ENT = 99 WHERE Z_PK = 3",
            expected: "ZTAG: 1 row whose Z_ENT is not one of the table's entities (4) (first: Z_PK 3)"),
        Anomaly(
            name: "another entity's Z_ENT", sql: "UPDATE ZTAG SET Z_ENT = 1 WHERE Z_PK = 4",
            expected: "ZTAG: 1 row whose Z_ENT is not one of the table's entities (4) (first: Z_PK 4)"),
        Anomaly(
            name: "binary data in a string attribute", sql: "UPDATE ZTAG SET ZLABEL = x'00ff' WHERE Z_PK = 5",
            expected: "ZTAG: 1 row holding binary data in a string attribute (ZLABEL) (first: Z_PK 5)"),
        Anomaly(
            name: "a dangling foreign key", sql: "UPDATE ZCHAPTER SET ZBOOK = 999999 WHERE Z_PK = 3",
            expected: "ZCHAPTER.ZBOOK: 1 row referring to a Book that does not exist (first: Z_PK 3)"),
        Anomaly(
            name: "a join row with a NULL key", sql: "INSERT INTO Z_2TAGS (Z_2BOOKS, Z_4TAGS) VALUES (NULL, 3)",
            expected: "Z_2TAGS: 1 row with a NULL key (Z_2BOOKS or Z_4TAGS)"),
        Anomaly(
            name: "a repeated Z_PK",
            sql: """
                CREATE TABLE copy AS SELECT * FROM ZTAG; DROP TABLE ZTAG; ALTER TABLE copy RENAME TO ZTAG;
                INSERT INTO ZTAG SELECT * FROM ZTAG WHERE Z_PK = 1
                """, expected: "ZTAG: 2 rows sharing their Z_PK with another row (first: Z_PK 1)"),
    ]

    @Test("each anomaly is refused with its table, problem, count and key; nothing is written", arguments: anomalies, [false, true])
    func refused(_ anomaly: Anomaly, inSwift: Bool) throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("library.sqlite")
        _ = try DataGenerator.generate(model: Self.library.versions[0], at: source, rows: 50, seed: 2)
        let editor = try Connection(path: source, configuration: .init(mode: .readWrite))
        for statement in anomaly.sql.split(separator: ";") { try editor.execute(String(statement)) }
        try editor.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: source))
        let registry = PolicyRegistry.builtIn(inSwift: inSwift)
        let migration = StoreMigration(store: source, model: Self.library, options: MigrationOptions(batchSize: 7, workers: 2, registry: registry))
        let output = directory.path("out.sqlite")
        let error = try requireUnderlying(MigrationError.self) { _ = try migration.runBlocking(try migration.plan(), output: output) }
        guard case .sourceAnomalies(let found, _) = error else {
            Issue.record("expected the anomalies to be refused, got \(error)")
            return
        }
        #expect(found.map(\.description).contains(anomaly.expected), "\(found)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == ["library.sqlite"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: source)) == before)
    }

    /// What Core Data reads past: a join row naming no object links nothing (Core Data never
    /// sees it), text where bytes belong is read as it is.
    static let readPast = [
        Anomaly(
            name: "a dangling join row", sql: "INSERT INTO Z_2TAGS (Z_2BOOKS, Z_4TAGS) VALUES (1, 999999)",
            expected: "Z_2TAGS.Z_4TAGS: 1 row referring to a Tag that does not exist (first: Z_PK 999999)"),
        Anomaly(
            name: "text in a binary attribute", sql: "UPDATE ZDOCUMENT SET ZTHUMBNAIL = 'text' WHERE Z_PK = 2",
            expected: "ZDOCUMENT: 1 row holding text in a binary attribute (ZATTACHMENT, ZTHUMBNAIL) (first: Z_PK 2)"),
    ]

    @Test(
        "what Core Data reads past migrates as Core Data reads it and is reported; --strict refuses it before anything is written",
        arguments: readPast, [false, true])
    func tolerated(_ anomaly: Anomaly, inSwift: Bool) throws {
        let model = anomaly.sql.contains("ZDOCUMENT") ? try ModelLoader.load(Configs.path("attachments")) : Self.library
        let directory = try TemporaryDirectory()
        let source = directory.path("source.sqlite")
        _ = try DataGenerator.generate(model: model.versions[0], at: source, rows: 50, seed: 2)
        let editor = try Connection(path: source, configuration: .init(mode: .readWrite))
        try editor.execute(anomaly.sql)
        try editor.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: source))
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        var options = MigrationOptions(batchSize: 7, workers: 2, registry: PolicyRegistry.builtIn(inSwift: inSwift))
        options.refuseDataLoss = true
        let strict = StoreMigration(store: source, model: model, options: options)
        let error = try requireUnderlying(MigrationError.self) { _ = try strict.runBlocking(try strict.plan(), output: directory.path("strict.sqlite")) }
        guard case .sourceAnomalies(let found, _) = error else {
            Issue.record("expected --strict to refuse, got \(error)")
            return
        }
        #expect(found.map(\.description) == [anomaly.expected])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == files)
        options.refuseDataLoss = false
        let migration = StoreMigration(store: source, model: model, options: options)
        let output = directory.path("out.sqlite")
        let report = try migration.runBlocking(try migration.plan(), output: output)
        #expect(report.tolerated == [anomaly.expected])
        #expect(try Data(contentsOf: URL(fileURLWithPath: source)) == before)
        let migrated = try Connection(path: output, configuration: .init(mode: .readOnly))
        // Verification proved the rest by content: every link but the one to nothing arrived.
        #expect(try migrated.scalar("PRAGMA integrity_check") == .text("ok"))
        if anomaly.sql.contains("ZDOCUMENT") {
            // Its bytes, as Core Data reads them, behind the inline marker of Attachments 3's
            // thumbnails (which may live outside the store).
            #expect(try migrated.scalar("SELECT ZTHUMBNAIL FROM ZDOCUMENT WHERE Z_PK = 2") == .blob([1] + Array("text".utf8)))
        }
    }

    @Test("the checks of every row find their rows whichever rowid range of a table holds them, and only those", arguments: [1, 2, 3, 1_000])
    func rowChecksInRanges(rowidsPerScan: Int) throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("library.sqlite")
        _ = try DataGenerator.generate(model: Self.library.versions[0], at: source, rows: 50, seed: 2)
        let editor = try Connection(path: source, configuration: .init(mode: .readWrite))
        try editor.execute("UPDATE ZTAG SET Z_ENT = NULL WHERE Z_PK IN (2, 49)")
        try editor.execute("UPDATE ZBOOK SET ZTITLE = x'00' WHERE Z_PK = 50")
        try editor.close()
        let found = try StoreAnomalies.find(in: source, model: Self.library.versions[0], workers: 2, rowidsPerScan: Int64(rowidsPerScan))
        let lines = found.map(\.description)
        #expect(lines.contains("ZBOOK: 1 row holding binary data in a string attribute (ZTITLE) (first: Z_PK 50)"), "\(lines)")
        #expect(lines.contains("ZTAG: 2 rows whose Z_ENT is not one of the table's entities (4) (first: Z_PK 2)"), "\(lines)")
        // The tags without an entity are no longer tags: the join rows naming them refer to nothing.
        #expect(lines.count == 3 && lines[0].hasPrefix("Z_2TAGS.Z_4TAGS: "), "\(lines)")
    }

    @Test("a clean store has none")
    func clean() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("library.sqlite")
        _ = try DataGenerator.generate(model: Self.library.versions[0], at: source, rows: 50, seed: 2)
        #expect(try StoreAnomalies.find(in: source, model: Self.library.versions[0]).isEmpty)
    }
}
