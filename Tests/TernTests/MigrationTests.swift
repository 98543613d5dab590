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

/// Rows of a query, as text, for comparisons.
func rows(_ connection: Connection, _ sql: String) throws -> [String] {
    let statement = try connection.prepare(sql)
    var cursor = statement.rows()
    var result: [String] = []
    while let row = try cursor.next() { result.append(row.values.map(\.sqlLiteral).joined(separator: "|")) }
    return result
}

@Suite("The default migration process")
struct MigrationTests {
    static let bookStore = try! ModelLoader.load(Configs.path("bookstore"))
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    private func bookStoreV1(rows: Int = 500, name: String = "Books.sqlite") throws -> String {
        let path = directory.path(name)
        _ = try DataGenerator.generate(model: Self.bookStore.versions[0], at: path, rows: rows, seed: 11)
        return path
    }

    @Test(
        "BookStore 1 → 5: every object and link arrives as the mappings say; --out leaves the original byte for byte — by Core Data's route (1 → 3 inferred) and step by step",
        arguments: [RouteChoice.coreData, .stepByStep])
    func bookStoreChain(route: RouteChoice) throws {
        let composing = route == .coreData
        let source = try bookStoreV1()
        let before = try Data(contentsOf: URL(fileURLWithPath: source))
        let output = directory.path("Books5.sqlite")
        var options = MigrationOptions(batchSize: 77, registry: .builtIn)
        options.route = route
        let migration = StoreMigration(store: source, model: Self.bookStore, options: options)
        let plan = try migration.plan()
        #expect(plan.storeVersion == "BookStore 1")
        #expect(plan.steps.map(\.isInferred) == (composing ? [true, false, false] : [true, true, false, false]))
        let report = try migration.runBlocking(plan, output: output)
        if composing {
            #expect(report.steps[0].appliedInPlace.isEmpty)  // Book → Publication moves entity numbers: copied
        } else {
            // ZAUTHOR sorts before ZTITLE: Core Data's table has it there, so ZBOOK is rebuilt.
            #expect(
                report.steps[0].appliedInPlace.contains(
                    #"INSERT INTO "tern_rebuilt_ZBOOK" SELECT "Z_PK", "Z_ENT", "Z_OPT", "ZCATEGORY", "ZPRICE", NULL, "ZTITLE" FROM "ZBOOK""#))
            #expect(report.steps[0].appliedInPlace.last == #"ALTER TABLE "tern_rebuilt_ZBOOK" RENAME TO "ZBOOK""#)
            #expect(report.steps[1].appliedInPlace.isEmpty)  // Book → Publication moves entity numbers: copied
        }
        #expect(report.backup == nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: source)) == before)
        #expect(!FileManager.default.fileExists(atPath: StoreMigration.backupPath(for: source)))

        let old = try Connection(path: source, configuration: .init(mode: .readOnly))
        let new = try Connection(path: output, configuration: .init(mode: .readOnly))
        // Books became Publications with their keys, titles, prices and categories.
        #expect(
            try rows(old, "SELECT Z_PK, ZTITLE, ZPRICE, ZCATEGORY FROM ZBOOK ORDER BY Z_PK")
                == rows(new, "SELECT Z_PK, ZTITLE, ZPRICE, ZCATEGORY FROM ZPUBLICATION ORDER BY Z_PK"))
        // Pages keep their book; categories keep their name.
        #expect(try rows(old, "SELECT Z_PK, ZTEXT, ZBOOK FROM ZPAGE ORDER BY Z_PK") == rows(new, "SELECT Z_PK, ZTEXT, ZBOOK FROM ZPAGE ORDER BY Z_PK"))
        #expect(try rows(old, "SELECT Z_PK, ZNAME FROM ZCATEGORY ORDER BY Z_PK") == rows(new, "SELECT Z_PK, ZNAME FROM ZCATEGORY ORDER BY Z_PK"))
        // v2 added author (nil for old books), so v4's split gives nil names; v5's synopsis is the title.
        #expect(try new.scalar("SELECT count(*) FROM ZPUBLICATION WHERE ZSYNOPSIS IS NOT ZTITLE") == .integer(0))
        #expect(try new.scalar("SELECT count(*) FROM ZPUBLICATION WHERE ZFIRSTNAME IS NOT NULL OR ZLASTNAME IS NOT NULL") == .integer(0))
        #expect(try VersionMatch.find(in: Self.bookStore, storeAt: output).verdict == .compatible(version: "BookStore 5", evidence: .appleHashes))
        #expect(try new.scalar("SELECT count(*) FROM sqlite_master WHERE name LIKE 'TERN%'") == .integer(0))
        #expect(try new.scalar("PRAGMA integrity_check") == .text("ok"))
    }

    @Test("the author split matches the book's table: first word → firstName, the rest → lastName")
    func authorSplit() throws {
        let v3 = Self.bookStore.versions[2]
        let source = directory.path("v3.sqlite")
        let connection = try StoreFile.create(at: source, model: v3)
        let writer = try ObjectWriter(connection: connection, layout: StoreLayout(model: v3))
        let authors = ["John Doe", "Jane Doe", "Bill Smith", "Jack Brown", "Madonna", "Mary Ann Evans"]
        try connection.transaction {
            for (index, author) in authors.enumerated() {
                try writer.insert("Publication", ["title": .text("Book \(index)"), "price": .real(20 + Double(index)), "author": .text(author)])
            }
            try writer.finish()
        }
        try connection.close()
        let output = directory.path("v5.sqlite")
        let migration = StoreMigration(store: source, model: Self.bookStore, options: MigrationOptions(registry: .builtIn))
        _ = try migration.runBlocking(try migration.plan(), output: output)
        let migrated = try Connection(path: output, configuration: .init(mode: .readOnly))
        #expect(
            try rows(migrated, "SELECT ZFIRSTNAME, ZLASTNAME, ZSYNOPSIS FROM ZPUBLICATION ORDER BY Z_PK") == [
                "'John'|'Doe'|'Book 0'", "'Jane'|'Doe'|'Book 1'", "'Bill'|'Smith'|'Book 2'", "'Jack'|'Brown'|'Book 3'",
                "'Madonna'|''|'Book 4'", "'Mary'|'Ann Evans'|'Book 5'",
            ])
    }

    @Test("the book's policy and manager hook give the same store as the pure-SQL mappings")
    func policyAndSQLAgree() throws {
        let source = try bookStoreV1(rows: 400)
        let connection = try Connection(path: source)
        try connection.execute("UPDATE ZBOOK SET ZTITLE = ZTITLE || ' ' || Z_PK")  // distinct titles
        try connection.close()
        var dumps: [[String]] = []
        for (name, overriding) in [
            ("policy", [String]()), ("sql", [Configs.path("bookstore/sql/v3-to-v4.yaml"), Configs.path("bookstore/sql/v4-to-v5.yaml")]),
        ] {
            let output = directory.path("\(name).sqlite")
            let migration = StoreMigration(store: source, model: Self.bookStore, options: MigrationOptions(registry: .builtIn))
            let plan = try migration.plan(mappingFiles: overriding)
            let folders = plan.steps.map { $0.isInferred ? "inferred" : URL(fileURLWithPath: $0.origins[0]).deletingLastPathComponent().lastPathComponent }
            let explicit = name == "sql" ? "sql" : "mappings"
            #expect(folders == ["inferred", explicit, explicit])  // BookStore 1 → 2 → 3 composed
            _ = try migration.runBlocking(plan, output: output)
            let migrated = try Connection(path: output, configuration: .init(mode: .readOnly))
            dumps.append(
                try rows(migrated, "SELECT * FROM ZPUBLICATION ORDER BY Z_PK") + rows(migrated, "SELECT * FROM ZPAGE ORDER BY Z_PK")
                    + rows(migrated, "SELECT * FROM ZCATEGORY ORDER BY Z_PK") + rows(migrated, "SELECT * FROM Z_PRIMARYKEY"))
        }
        #expect(dumps[0].count == 1203)
        #expect(dumps[0] == dumps[1])
    }

    @Test("in place: the original is kept as NAME~.sqlite, byte for byte, and the migrated store takes its name")
    func inPlace() throws {
        let source = try bookStoreV1(rows: 100)
        let before = try Data(contentsOf: URL(fileURLWithPath: source))
        let migration = StoreMigration(store: source, model: Self.bookStore, options: MigrationOptions(registry: .builtIn))
        let report = try migration.runBlocking(try migration.plan())
        let backup = StoreMigration.backupPath(for: source)
        #expect(report.backup == backup)
        #expect(backup.hasSuffix("Books~.sqlite"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: backup)) == before)
        #expect(try VersionMatch.find(in: Self.bookStore, storeAt: source).verdict == .compatible(version: "BookStore 5", evidence: .appleHashes))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains("tern-step") }
        #expect(leftovers.isEmpty)
    }

    @Test(
        "the migrated store keeps the source's UUID (Z_UUID) and the metadata an app set, whether steps copy it or change it in place, so saved object URIs still name its objects"
    )
    func keepsStoreUUID() throws {
        let source = try bookStoreV1(rows: 30)
        let uuid = try #require(try StoreMetadata.read(storeAt: source).uuid)
        let editor = try Connection(path: source, configuration: .init(mode: .readWrite))
        try StoreFile.setMetadata("MyAppSyncToken", to: "abc123", in: editor, path: source)
        try editor.close()
        for steps in [RouteChoice.coreData, .stepByStep] {
            var options = MigrationOptions(registry: .builtIn)
            options.route = steps
            let migration = StoreMigration(store: source, model: Self.bookStore, options: options)
            let output = directory.path("uuid-\(steps).sqlite")
            _ = try migration.runBlocking(try migration.plan(), output: output)
            #expect(try StoreMetadata.read(storeAt: output).uuid == uuid)
            #expect(try StoreMetadata.read(storeAt: output).keys.contains("MyAppSyncToken"))
        }
    }

    @Test(
        "an app's metadata in an XML plist, as Core Data also reads it, is carried with its values (an unsigned above Int64.max stays itself); a value Tern cannot write back is refused when planning, before any work"
    )
    func carriesXMLMetadata() throws {
        let source = try bookStoreV1(rows: 30)
        let editor = try Connection(path: source, configuration: .init(mode: .readWrite))
        let binary = Data(try #require(try editor.scalar("SELECT Z_PLIST FROM Z_METADATA")?.blob))
        var plist = try #require(try PropertyListSerialization.propertyList(from: binary, format: nil) as? [String: Any])
        plist["MyAppSyncToken"] = UInt64.max
        plist["MyAppSchema"] = ["level": 3, "names": ["a", "b"]] as [String: Any]
        let xml = try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
        try editor.execute("UPDATE Z_METADATA SET Z_PLIST = ?", Array(xml))
        try editor.close()
        let migration = StoreMigration(store: source, model: Self.bookStore, options: MigrationOptions(registry: .builtIn))
        let output = directory.path("xml-metadata.sqlite")
        _ = try migration.runBlocking(try migration.plan(), output: output)
        let written = try Connection(path: output, configuration: .init(mode: .readOnly))
        let writtenPlist = try #require(try written.scalar("SELECT Z_PLIST FROM Z_METADATA")?.blob)
        let carried = try #require(try PropertyListSerialization.propertyList(from: Data(writtenPlist), format: nil) as? [String: Any])
        #expect((carried["MyAppSyncToken"] as? NSNumber)?.uint64Value == UInt64.max)
        #expect((carried["MyAppSchema"] as? NSDictionary) == (["level": 3, "names": ["a", "b"]] as NSDictionary))

        // A 128-bit integer beyond 64 bits: Core Foundation reads it, Tern could not write it back.
        let refused = try bookStoreV1(rows: 10, name: "Beyond.sqlite")
        let bytes = try #require(try Connection(path: refused, configuration: .init(mode: .readOnly)).scalar("SELECT Z_PLIST FROM Z_METADATA")?.blob)
        guard case .dictionary(var entries) = try BinaryPropertyList.decode(bytes) else { Issue.record("not a dictionary"); return }
        entries["MyAppHuge"] = .integer(0x7E)
        var encoded = BinaryPropertyList.encode(.dictionary(entries))
        // The one-byte integer 0x7E becomes a 16-byte one with a high half of 1.
        let marker = try #require(encoded.indices.first { encoded[$0] == 0x10 && encoded[$0 + 1] == 0x7E })
        encoded.replaceSubrange(marker...marker + 1, with: [0x14] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 1])
        encoded = BinaryPropertyListTests.reoffset(encoded, from: marker, by: 15)
        let changer = try Connection(path: refused, configuration: .init(mode: .readWrite))
        try changer.execute("UPDATE Z_METADATA SET Z_PLIST = ?", encoded)
        try changer.close()
        let error = #expect(throws: TernFailure.self) {
            try StoreMigration(store: refused, model: Self.bookStore, options: MigrationOptions(registry: .builtIn)).plan()
        }
        #expect(error?.kind == .badInput)
        #expect(
            "\(error.map { "\($0)" } ?? "")".contains(
                "Beyond.sqlite: Z_METADATA.Z_PLIST: the app's key MyAppHuge cannot be carried to the migrated store: an integer beyond 64 bits"))
        // Reading the store's metadata (tern inspect, recognition) is not refused: only carrying it.
        #expect(try StoreMetadata.read(storeAt: refused).keys.contains("MyAppHuge"))
    }

    @Test("a store at the current version needs nothing")
    func nothingToDo() throws {
        let path = directory.path("current.sqlite")
        _ = try DataGenerator.generate(model: Self.bookStore.current, at: path, rows: 10, seed: 1)
        #expect(try StoreMigration(store: path, model: Self.bookStore, options: MigrationOptions(registry: .builtIn)).plan().steps.isEmpty)
    }

    @Test("batch size and kept or new keys give the same destination rows")
    func deterministicAcrossBatchSizes() throws {
        let source = try bookStoreV1(rows: 300)
        var dumps: [[String]] = []
        for batch in [1, 7, 10_000] {
            let output = directory.path("out-\(batch).sqlite")
            let migration = StoreMigration(store: source, model: Self.bookStore, options: MigrationOptions(batchSize: batch, registry: .builtIn))
            _ = try migration.runBlocking(try migration.plan(), output: output)
            let connection = try Connection(path: output, configuration: .init(mode: .readOnly))
            dumps.append(
                try rows(connection, "SELECT * FROM ZPUBLICATION ORDER BY Z_PK") + rows(connection, "SELECT * FROM ZPAGE ORDER BY Z_PK")
                    + rows(connection, "SELECT * FROM Z_PRIMARYKEY"))
        }
        #expect(dumps[0] == dumps[1])
        #expect(dumps[1] == dumps[2])
    }
}

@Suite("Migration faults leave the original untouched")
struct MigrationFaultTests {
    static let bookStore = MigrationTests.bookStore
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    private func source() throws -> (String, Data) {
        let path = directory.path("Books.sqlite")
        _ = try DataGenerator.generate(model: Self.bookStore.versions[0], at: path, rows: 50, seed: 3)
        return (path, try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test("a validation failure lists entity, key and rule, and replaces nothing")
    func validationFailure() throws {
        let (path, before) = try source()
        let connection = try Connection(path: path)
        try connection.execute("UPDATE ZBOOK SET ZTITLE = '' WHERE Z_PK IN (3, 5)")  // v1 requires minLength 1
        try connection.close()
        let changed = try Data(contentsOf: URL(fileURLWithPath: path))
        _ = before
        let migration = StoreMigration(store: path, model: Self.bookStore, options: MigrationOptions(registry: .builtIn))
        let error = try requireUnderlying(MigrationFailure.self) { _ = try migration.runBlocking(try migration.plan()) }
        guard case .validation(let violations) = error else { Issue.record("\(error)"); return }
        // Step 1 (add author) is applied in place without reading rows; step 2 copies and validates.
        #expect(
            violations.prefix(2) == [
                ValidationViolation(entity: "Publication", key: 3, rule: "title is shorter than 1"),
                ValidationViolation(entity: "Publication", key: 5, rule: "title is shorter than 1"),
            ])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == changed)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == ["Books.sqlite"])
    }

    @Test("objects breaking rules in several key ranges are all found, lowest keys first, up to the limit", arguments: [false, true])
    func validationAcrossRanges(inSwift: Bool) throws {
        let (path, _) = try source()
        let connection = try Connection(path: path)
        try connection.execute("UPDATE ZBOOK SET ZTITLE = '' WHERE Z_PK IN (47, 38, 29)")  // none among the first 8 keys
        try connection.close()
        var options = MigrationOptions(violationLimit: 2, registry: .builtIn(inSwift: inSwift))
        options.keysPerScan = 8
        let migration = StoreMigration(store: path, model: Self.bookStore, options: options)
        let error = try requireUnderlying(MigrationFailure.self) { _ = try migration.runBlocking(try migration.plan()) }
        guard case .validation(let violations) = error else { Issue.record("\(error)"); return }
        #expect(
            violations == [
                ValidationViolation(entity: "Publication", key: 29, rule: "title is shorter than 1"),
                ValidationViolation(entity: "Publication", key: 38, rule: "title is shorter than 1"),
            ])
    }

    @Test(
        "the last pass's rules, counted in verification's scan of its objects, fail the run as validation, each object and rule named, on one worker or two, in SQL or Swift",
        arguments: [(1, false), (2, false), (2, true)])
    func lastPassRulesCountedAlong(workers: Int, inSwift: Bool) throws {
        let bench = try BenchSource(books: 300, seed: 5)
        let connection = try Connection(path: bench.path)
        try connection.execute("UPDATE ZBOOK SET ZTITLE = '' WHERE Z_PK = 9")
        try connection.execute("UPDATE ZBOOK SET ZPRICE = -5 WHERE Z_PK = 7")
        try connection.close()
        let migration = StoreMigration(
            store: bench.path, model: bench.model, options: MigrationOptions(workers: workers, registry: .builtIn(inSwift: inSwift)))
        let output = bench.directory.path("out.sqlite")
        let error = try requireUnderlying(MigrationFailure.self) { _ = try migration.runBlocking(try migration.plan(), output: output) }
        guard case .validation(let violations) = error else { Issue.record("\(error)"); return }
        #expect(
            violations == [
                ValidationViolation(entity: "Publication", key: 7, rule: "price is below its minimum 0.0"),
                ValidationViolation(entity: "Publication", key: 9, rule: "title is shorter than 1"),
            ], "\(violations)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test("a rule broken in the last pass is reported as validation's, even where verification would fail too")
    func brokenRuleBeforeAFailedComparison() throws {
        let bench = try BenchSource(books: 300, seed: 5)
        let connection = try Connection(path: bench.path)
        try connection.execute("UPDATE ZBOOK SET ZTITLE = '' WHERE Z_PK = 9")
        try connection.close()
        var options = MigrationOptions(workers: 2, registry: .builtIn)
        // A value no expression gives: verification's comparison of Publication fails as well.
        options.beforeVerification = { connection in try connection.execute("UPDATE ZPUBLICATION SET ZPRICE = ZPRICE + 1 WHERE Z_PK = 11") }
        let migration = StoreMigration(store: bench.path, model: bench.model, options: options)
        let error = try requireUnderlying(MigrationFailure.self) {
            _ = try migration.runBlocking(try migration.plan(), output: bench.directory.path("out.sqlite"))
        }
        guard case .validation(let violations) = error else { Issue.record("\(error)"); return }
        #expect(violations == [ValidationViolation(entity: "Publication", key: 9, rule: "title is shorter than 1")])
    }

    @Test("an existing destination or backup is refused before anything is written")
    func destinationExists() throws {
        let (path, before) = try source()
        let output = directory.path("taken.sqlite")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: output))
        let migration = StoreMigration(store: path, model: Self.bookStore, options: MigrationOptions(registry: .builtIn))
        _ = try requireUnderlying(MigrationError.self) { _ = try migration.runBlocking(try migration.plan(), output: output) }
        try Data("old backup".utf8).write(to: URL(fileURLWithPath: StoreMigration.backupPath(for: path)))
        _ = try requireUnderlying(MigrationError.self) { _ = try migration.runBlocking(try migration.plan()) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data("mine".utf8))
    }

    @Test("a store no version wrote, and a step with no mapping that cannot be inferred, are refused")
    func noPath() throws {
        let (path, _) = try source()
        let other = try ModelLoader.load(Fixtures.path(FixtureStore.bookMigration))
        _ = try requireUnderlying(MigrationError.self) {
            _ = try StoreMigration(store: path, model: other, options: MigrationOptions(registry: .builtIn)).plan()
        }
        // A version 2 whose price became text cannot be inferred and has no mapping file.
        var v2 = Self.bookStore.versions[1]
        var entities = v2.entities
        let index = entities.firstIndex { $0.name == "Book" }!
        entities[index].attributes = entities[index].attributes.map { $0.name == "price" ? Attribute(name: "price", type: .string) : $0 }
        v2 = ObjectModel(versionName: v2.versionName, versionIdentifiers: v2.versionIdentifiers, entities: entities)
        let broken = VersionedModel(name: "B", versions: [Self.bookStore.versions[0], v2], currentVersionName: v2.versionName, path: "broken")
        let error = try requireUnderlying(TernError.self) {
            _ = try StoreMigration(store: path, model: broken, options: MigrationOptions(registry: .builtIn)).plan()
        }
        #expect(error.message.contains("no mapping model from BookStore 1 to BookStore 2, and it cannot be inferred"))
        #expect(error.message.contains("entity Book, attribute price: type changed from Float to String"))
    }

    @Test("a full disk fails the step cleanly: no partial store is left and the original is untouched")
    func fullDisk() throws {
        let path = directory.path("Big.sqlite")
        _ = try DataGenerator.generate(model: Self.bookStore.versions[0], at: path, rows: 3_000, seed: 3)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        // SQLite's max_page_count makes the destination "full" after a few pages, like a full disk.
        let model = Self.bookStore
        let step = try MigrationPlanner.chain(in: model, from: "BookStore 1", to: "BookStore 2", mappingFiles: []).steps[0]
        let destination = directory.path("full.sqlite")
        let error = try #require(throws: (any Error).self) {
            var options = MigrationOptions(batchSize: 500, registry: .builtIn)
            options.extraPages = 10
            _ = try StepRunner.run(step.planned(with: options.registry), from: path, to: destination, options: options)
        }
        #expect("\(error)".contains("full"))
        #expect(!FileManager.default.fileExists(atPath: destination))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("a mapping that names a policy nobody registered is refused naming the mapping, the policy and the registered ones; nothing is left")
    func unknownPolicy() throws {
        let (path, before) = try source()
        var registry = PolicyRegistry()
        registry.register(DefaultMigrationPolicy(), as: "SomethingElse")
        let migration = StoreMigration(store: path, model: Self.bookStore, options: MigrationOptions(registry: registry))
        let error = try requireUnderlying(TernError.self) { _ = try migration.runBlocking(try migration.plan()) }
        #expect(
            error.message.contains(
                "entity mapping PublicationToPublication names the migration policy PublicationToPublicationMigrationPolicy, which is not registered (registered: SomethingElse)"
            ))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == ["Books.sqlite"])
    }

    @Test("verification names the entity mapping and attribute whose copied values differ from the source")
    func verificationFailure() throws {
        let (path, before) = try source()
        let step = try MigrationPlanner.chain(in: Self.bookStore, from: "BookStore 1", to: "BookStore 3", mappingFiles: [], choice: .stepByStep).steps[1]
        let middle = directory.path("v2.sqlite")
        _ = try StepRunner.run(
            try MigrationPlanner.chain(in: Self.bookStore, from: "BookStore 1", to: "BookStore 2", mappingFiles: []).steps[0].planned(with: .builtIn),
            from: path, to: middle, options: MigrationOptions(registry: .builtIn))
        let destination = directory.path("v3.sqlite")
        // Between the last pass and verification, something changes a copied value behind the migration's back.
        let options = MigrationOptions(
            registry: .builtIn,
            progress: { event in
                guard case .passFinished = event else { return }
                try? Connection(path: destination).execute("UPDATE ZPUBLICATION SET ZTITLE = 'tampered' WHERE Z_PK = 7")
            })
        let error = try #require(throws: MigrationFailure.self) {
            try StepRunner.run(step.planned(with: options.registry), from: middle, to: destination, options: options)
        }
        guard case .verification(let message) = error else { Issue.record("\(error)"); return }
        #expect(message == "BookToPublication.title: the destination value differs from its value expression over source Book 7")
        #expect(!FileManager.default.fileExists(atPath: destination))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }
}
