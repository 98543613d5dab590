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

/// Verification proves a step by content: each kind of damage done between the last pass and
/// verification is caught and named, on the SQL path and on the Swift path, and nothing is
/// written where the user asked for the migrated store.
@Suite("Verification catches tampering, by content")
struct VerificationTests {
    static let library = try! ModelLoader.load(Configs.path("library"))
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// One kind of damage: the SQL that does it, and what the failure must say.
    struct Tampering: Sendable, CustomTestStringConvertible {
        var name: String
        var sql: String
        var expected: [String]
        var rows = 1
        var testDescription: String { name }
    }

    static let tamperings = [
        Tampering(
            name: "a deleted to-one link", sql: "UPDATE ZBOOK SET ZAUTHOR = NULL WHERE Z_PK = (SELECT min(Z_PK) FROM ZBOOK WHERE ZAUTHOR IS NOT NULL)",
            expected: ["BookToBook.author: the link differs from the source's over source Book"]),
        Tampering(
            name: "a changed transformed value (uppercase:)",
            sql: "UPDATE ZLABEL SET ZTEXT = lower(ZTEXT) WHERE Z_PK = (SELECT min(Z_PK) FROM ZLABEL WHERE ZTEXT IS NOT NULL)",
            expected: ["TagToLabel.text", "differs from its value expression"]),
        Tampering(
            name: "a changed transformed value (concat:)", sql: "UPDATE ZBOOK SET ZSUBTITLE = ZSUBTITLE || ' ' WHERE Z_PK = 3",
            expected: ["BookToBook.subtitle", "differs from its value expression"]),
        Tampering(
            name: "a dropped join row", sql: "DELETE FROM Z_2LABELS WHERE rowid = (SELECT min(rowid) FROM Z_2LABELS)",
            expected: ["BookToBook.labels", "is missing"]),
        Tampering(
            name: "an added join row",
            sql:
                "INSERT INTO Z_2LABELS (Z_2BOOKS, Z_4LABELS) SELECT b.Z_PK, l.Z_PK FROM ZBOOK b, ZLABEL l WHERE NOT EXISTS (SELECT 1 FROM Z_2LABELS j WHERE j.Z_2BOOKS = b.Z_PK AND j.Z_4LABELS = l.Z_PK) LIMIT 1",
            expected: ["BookToBook.labels", "which the source does not"]),
        // A book with two chapters: negated order keys swap them.
        Tampering(
            name: "two ordered positions swapped",
            sql:
                "UPDATE ZCHAPTER SET Z_FOK_BOOK = -Z_FOK_BOOK WHERE ZBOOK = (SELECT ZBOOK FROM ZCHAPTER GROUP BY ZBOOK HAVING count(*) = 2 ORDER BY ZBOOK LIMIT 1)",
            expected: ["ChapterToChapter.book", "among its target's"], rows: 2),
        Tampering(
            name: "a deleted object", sql: "DELETE FROM ZAUTHOR WHERE Z_PK = (SELECT max(Z_PK) FROM ZAUTHOR)",
            expected: ["AuthorToAuthor", "has no destination Author"]),
        Tampering(
            name: "a stray object",
            sql: "INSERT INTO ZLABEL (Z_PK, Z_ENT, Z_OPT, ZTEXT) VALUES (1000000, (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Label'), 1, 'STRAY')",
            expected: ["TagToLabel"]),
    ]

    @Test(
        "each tampering is caught and named; nothing is written to --out; the source is untouched",
        arguments: tamperings, [false, true])
    func tampering(_ tampering: Tampering, inSwift: Bool) throws {
        let source = directory.path("library.sqlite")
        _ = try DataGenerator.generate(model: Self.library.versions[0], at: source, rows: 300, seed: 21)
        let before = try Data(contentsOf: URL(fileURLWithPath: source))
        let output = directory.path("migrated.sqlite")
        var options = MigrationOptions(batchSize: 40, workers: 2, registry: .builtIn(inSwift: inSwift))
        // Values are compared range by range (ranges of 16 keys), as a large table's are.
        options.keysPerScan = 16
        let (sql, rows) = (tampering.sql, tampering.rows)
        options.beforeVerification = { connection in
            try connection.execute(sql)
            #expect(connection.changes == rows, "the tampering changed what it should")
        }
        let migration = StoreMigration(store: source, model: Self.library, options: options)
        try Self.expectCaught(tampering, running: migration, try migration.plan(), output: output)
        #expect(try Data(contentsOf: URL(fileURLWithPath: source)) == before)
    }

    /// Runs `plan` and expects verification to fail saying what `tampering` expects, with
    /// nothing written to `output`.
    private static func expectCaught(_ tampering: Tampering, running migration: StoreMigration, _ plan: StoreMigration.Plan, output: String) throws {
        let error = try requireUnderlying(MigrationFailure.self) { _ = try migration.runBlocking(plan, output: output) }
        guard case .verification(let message) = error else {
            Issue.record("expected a verification failure, got \(error)")
            return
        }
        for part in tampering.expected {
            #expect(message.contains(part), "\(message)")
        }
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    /// Damage to a policy's objects, whose values verification cannot re-derive: the
    /// associations must still point at objects written, each of its own entity.
    static let policyTamperings = [
        Tampering(
            name: "a deleted object", sql: "DELETE FROM ZPUBLICATION WHERE Z_PK = 1700",
            expected: ["BookToPublication: the association of source Book 1700 points at an object that was not written"]),
        Tampering(
            name: "an object given another entity", sql: "UPDATE ZPUBLICATION SET Z_ENT = Z_ENT + 1 WHERE Z_PK = 90",
            expected: ["BookToPublication: the association of source Book 90 points at an object that was not written"]),
        Tampering(
            name: "an association naming an entity the destination lacks", sql: "UPDATE TERN_ASSOC_2 SET entity = 999 WHERE source = 1999",
            expected: ["BookToPublication: the association of source Book 1999 points at an object that was not written"]),
    ]

    @Test(
        "a policy's objects deleted or given another entity are caught through the associations, range by range, naming the first",
        arguments: policyTamperings)
    func policyTampering(_ tampering: Tampering) throws {
        let bench = try BenchSource(books: 2000, seed: 5)
        var options = MigrationOptions(batchSize: 300, workers: 2, registry: .builtIn)
        // The associations are counted in ranges of 256 rows, as a large table's are.
        options.keysPerScan = 256
        let sql = tampering.sql
        options.beforeVerification = { connection in
            try connection.execute(sql)
            #expect(connection.changes == 1, "the tampering changed what it should")
        }
        let migration = StoreMigration(store: bench.path, model: bench.model, options: options)
        let plan = try migration.plan(to: "Bench 2", mappingFiles: [Configs.path("bench") + "/policy/1-to-2.yaml"])
        try Self.expectCaught(tampering, running: migration, plan, output: bench.directory.path("migrated.sqlite"))
    }

    @Test("a verification that fails on a source committed to since the run's start digest is reported as that change (exit 9), not as a fault (7)")
    func failedVerificationOverAChangedSource() throws {
        let source = try BenchSource(books: 20, seed: 7)
        let migration = StoreMigration(store: source.path, model: source.model)
        let recorded = try migration.digest(of: source.path)
        let failed = MigrationFailure.verification("BookToBook.title: the value differs")
        // Unchanged: the failure is the migration's own.
        #expect(migration.changeBehind(failed, store: source.path, recorded: recorded, commits: nil) == nil)
        // The app commits: the same failure is the change.
        let app = try Connection(path: source.path)
        try app.execute("UPDATE ZBOOK SET ZTITLE = 'changed by the app' WHERE Z_PK = 1")
        try app.close()
        let change = try #require(migration.changeBehind(failed, store: source.path, recorded: recorded, commits: nil))
        #expect(TernFailure(change).kind == .sourceChanged)
        #expect("\(change)".contains("the store changed while it was being migrated"), "\(change)")
        // Another failure over the changed source stays what it is.
        #expect(migration.changeBehind(MigrationFailure.validation([]), store: source.path, recorded: recorded, commits: nil) == nil)
    }

    @Test("untouched, the same migration passes and says what it proved per mapping", arguments: [false, true])
    func untouchedPasses(inSwift: Bool) throws {
        let source = directory.path("library.sqlite")
        _ = try DataGenerator.generate(model: Self.library.versions[0], at: source, rows: 300, seed: 21)
        let options = MigrationOptions(batchSize: 40, workers: 2, registry: .builtIn(inSwift: inSwift))
        let migration = StoreMigration(store: source, model: Self.library, options: options)
        let report = try migration.runBlocking(try migration.plan(), output: directory.path("migrated.sqlite"))
        let verified = Dictionary(uniqueKeysWithValues: report.steps[0].mappings.map { ($0.name, $0.verified) })
        #expect(verified["BookToBook"] == ["count", "values of 3 attributes", "relationships author, labels"])
        #expect(verified["ChapterToChapter"] == ["count", "values of 1 attribute", "relationships book"])
        #expect(verified["TagToLabel"] == ["count", "values of 1 attribute"])
    }

    /// What happens to verification's source side kept by a stopped run before it resumes.
    enum KeptScans: String, CaseIterable, CustomTestStringConvertible {
        case untouched, tampered, tamperedButSourceTouched
        var testDescription: String { rawValue }
    }

    @Test(
        "a run stopped at verification keeps the source's side it read beside the pass; the resume reuses it only on the very file it read (a kept result that is wrong then fails verification)",
        arguments: KeptScans.allCases)
    func keptSourceScans(_ kept: KeptScans) throws {
        let source = directory.path("library.sqlite")
        _ = try DataGenerator.generate(model: Self.library.versions[0], at: source, rows: 300, seed: 21)
        let output = directory.path("migrated.sqlite")
        var options = MigrationOptions(batchSize: 40, workers: 2, registry: .builtIn(inSwift: false))
        // A file the run can prove untouched later has been still for whole seconds first: by a
        // clock moved ahead, not by waiting.
        options.wallClock = .shifted(by: 10)
        options.keysPerScan = 16
        options.beforeVerification = { _ in throw MigrationInterrupted() }
        let stopped = StoreMigration(store: source, model: Self.library, options: options)
        _ = try requireUnderlying(MigrationInterrupted.self) { _ = try stopped.runBlocking(try stopped.plan(), output: output) }

        let stepStore = MigrationRun.stepFile(for: output, index: 1)
        // Kept beside the step's store, never in it.
        let inStore = try Connection(path: stepStore)
        #expect(try inStore.scalar("SELECT count(*) FROM sqlite_master WHERE name LIKE 'TERN_SOURCE_SCANS'") == .integer(0))
        try inStore.close()
        let cache = try Connection(path: SourceScanCache.path(forStepStore: stepStore))
        let keptCount = try cache.scalar("SELECT count(*) FROM TERN_SOURCE_SCANS WHERE value IS NOT NULL")?.int64 ?? 0
        #expect(keptCount > 0, "the stopped run kept no scan of the source")
        if kept != .untouched {
            try cache.execute("UPDATE TERN_SOURCE_SCANS SET value = value + 1 WHERE value IS NOT NULL")
        }
        try cache.close()
        if kept == .tamperedButSourceTouched {
            // Its times change, not its content: the resume goes on, but reads the source again.
            #expect(utime(source, nil) == 0)
        }

        options.beforeVerification = nil
        let resumed = StoreMigration(store: source, model: Self.library, options: options)
        guard kept == .tampered else {
            let report = try resumed.runBlocking(try resumed.plan(), output: output, resume: true)
            #expect(
                report.steps[0].mappings.first { $0.name == "BookToBook" }?.verified == ["count", "values of 3 attributes", "relationships author, labels"])
            return
        }
        let error = try requireUnderlying(MigrationFailure.self) { _ = try resumed.runBlocking(try resumed.plan(), output: output, resume: true) }
        guard case .verification = error else {
            Issue.record("expected a verification failure, got \(error)")
            return
        }
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test(
        "a list kept in its objects' foreign key with the source's order keys is compared in the objects' own scan: two places swapped, or a place lost, are caught",
        arguments: [
            "UPDATE ZPAGE SET Z_FOK_BOOK = -Z_FOK_BOOK WHERE ZBOOK = (SELECT ZBOOK FROM ZPAGE WHERE ZBOOK IS NOT NULL GROUP BY ZBOOK HAVING count(*) >= 2 ORDER BY ZBOOK LIMIT 1)",
            // The last page of a list of several loses its order key (a list's first page keeps its place without one).
            """
            UPDATE ZPAGE SET Z_FOK_BOOK = NULL WHERE Z_PK = (SELECT p.Z_PK FROM ZPAGE p WHERE p.ZBOOK IS NOT NULL
              AND p.Z_FOK_BOOK = (SELECT max(q.Z_FOK_BOOK) FROM ZPAGE q WHERE q.ZBOOK = p.ZBOOK) AND (SELECT count(*) FROM ZPAGE q WHERE q.ZBOOK = p.ZBOOK) >= 2
              ORDER BY p.Z_PK LIMIT 1)
            """,
        ], [false, true])
    func listOrderInTheObjectsScan(_ sql: String, inSwift: Bool) throws {
        let bench = try ModelLoader.load(Configs.path("bench"))
        let source = directory.path("bench.sqlite")
        _ = try DataGenerator.generate(model: bench.versions[0], at: source, rows: 200, counts: ["Page": 600, "Category": 10], seed: 5)
        var options = MigrationOptions(batchSize: 40, workers: 2, registry: .builtIn(inSwift: inSwift))
        options.keysPerScan = 64
        let untouched = StoreMigration(store: source, model: bench, options: options)
        let report = try untouched.runBlocking(try untouched.plan(), output: directory.path("untouched.sqlite"))
        // The pages' list compared with their values: no scan of its own.
        #expect(report.steps[0].mappings.first { $0.name == "PageToPage" }?.verified == ["count", "values of 2 attributes", "relationships book"])
        options.beforeVerification = { connection in
            try connection.execute(sql)
            #expect(connection.changes >= 1, "the tampering changed a page")
        }
        let migration = StoreMigration(store: source, model: bench, options: options)
        let error = try requireUnderlying(MigrationFailure.self) { _ = try migration.runBlocking(try migration.plan(), output: directory.path("out.sqlite")) }
        guard case .verification(let message) = error else {
            Issue.record("expected a verification failure, got \(error)")
            return
        }
        // Compared with the pages' values on the SQL path; as links where a policy wrote the pages.
        #expect(message.contains(inSwift ? "BookToPublication.pages" : "PageToPage.book"), "\(message)")
    }

    @Test(
        "lists Tern numbers anew are compared by the keys it numbered: two places swapped in an owner's list, or keys changed that keep the order, are caught",
        arguments: [
            // Two publications an author edited (their editor key holds the list) trade places.
            Tampering(
                name: "an edited list",
                sql: """
                    UPDATE ZPUBLICATION SET Z_FOK_EDITOR = -Z_FOK_EDITOR
                    WHERE ZEDITOR = (SELECT ZEDITOR FROM ZPUBLICATION WHERE ZEDITOR IS NOT NULL GROUP BY ZEDITOR HAVING count(*) = 2 ORDER BY ZEDITOR LIMIT 1)
                    """,
                expected: ["AuthorToAuthor.edited", "at position"], rows: 2),
            // Two authors of a publication trade places: the join table keeps their order.
            Tampering(
                name: "a publication's authors",
                sql: """
                    UPDATE Z_1BOOKS SET Z_FOK_1AUTHORS = -Z_FOK_1AUTHORS
                    WHERE Z_2BOOKS = (SELECT Z_2BOOKS FROM Z_1BOOKS GROUP BY Z_2BOOKS HAVING count(*) = 2 ORDER BY Z_2BOOKS LIMIT 1)
                    """,
                expected: ["BookToPublication.authors", "at position"], rows: 2),
            // The same order under other keys is not what was written.
            Tampering(
                name: "a publication's authors' keys doubled",
                sql: """
                    UPDATE Z_1BOOKS SET Z_FOK_1AUTHORS = 2 * Z_FOK_1AUTHORS
                    WHERE Z_2BOOKS = (SELECT Z_2BOOKS FROM Z_1BOOKS GROUP BY Z_2BOOKS HAVING count(*) = 2 ORDER BY Z_2BOOKS LIMIT 1)
                    """,
                expected: ["BookToPublication.authors", "at position"], rows: 2),
        ])
    func numberedListTampering(_ tampering: Tampering) throws {
        let chain = try ModelLoader.load(Configs.path("chain"))
        let source = directory.path("chain.sqlite")
        _ = try DataGenerator.generate(model: chain.versions[0], at: source, rows: 400, seed: 3)
        var options = MigrationOptions(batchSize: 50, workers: 2)
        let untouched = StoreMigration(store: source, model: chain, options: options)
        _ = try untouched.runBlocking(try untouched.plan(), output: directory.path("untouched.sqlite"))
        let (sql, rows) = (tampering.sql, tampering.rows)
        options.beforeVerification = { connection in
            try connection.execute(sql)
            #expect(connection.changes == rows, "the tampering changed what it should")
        }
        let migration = StoreMigration(store: source, model: chain, options: options)
        try Self.expectCaught(tampering, running: migration, try migration.plan(), output: directory.path("migrated.sqlite"))
    }
}
