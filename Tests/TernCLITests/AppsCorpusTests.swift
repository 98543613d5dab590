import Foundation
import TernCommands
import TernSQLite
import Testing

/// Every store of every corpus in `../shared/fixtures` (`apps`, `corpus`, `coredata`), migrated
/// by the `tern` binary as its app migrates it — and the 28 cases of the apps' own expectations
/// (`apps/expect_real.py`), checked by that script. Expected values come from the stores and the
/// script, never from here.
@Suite("Real apps: every store migrates as its app migrates it")
struct AppsCorpusTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    static let apps = fixtures.appendingPathComponent("apps")

    /// One case of `expect_real.py`: a store, its model, the version to migrate to.
    struct Case: Decodable, CustomTestStringConvertible, Sendable {
        var id: String
        var repo: String
        var src: String
        var model: String
        var frm: String
        var to: String
        /// Whether the app migrates it through a mapping model of its own (which may name its
        /// policy classes).
        var mapped: Bool
        var testDescription: String { "\(id) \(frm) → \(to)" }
    }

    /// A store of a corpus and the model bundle its app ships.
    struct Store: CustomTestStringConvertible, Sendable {
        var store: String
        var bundle: String
        /// The version that wrote it.
        var version: String
        var testDescription: String { "\(URL(fileURLWithPath: store).lastPathComponent) [\(version)]" }
    }

    /// The cases and the apps' stores, as the script lists them (python3 is on every machine
    /// this runs on; the script is the apps' expectations, read where it lies).
    static let script: (cases: [Case], stores: [Store]) = {
        let program = """
            import json, sys
            sys.path.insert(0, sys.argv[1])
            import expect_real as E
            print(json.dumps({'cases': [dict({k: c.get(k) for k in ('id', 'repo', 'src', 'model', 'frm', 'to')},
                                             mapped=any(step[2] for step in c['steps'])) for c in E.CASES],
                              'stores': [[r, s, m, v] for r, s, m, v in E.VERSIONS]}))
            """
        guard let child = try? ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", program, apps.path]), child.status == 0,
            let json = try? JSONSerialization.jsonObject(with: child.standardOutput) as? [String: Any],
            let cases = try? JSONDecoder().decode([Case].self, from: JSONSerialization.data(withJSONObject: json["cases"] ?? []))
        else { return ([], []) }
        let stores = (json["stores"] as? [[String]] ?? []).map { row in
            Store(
                store: apps.appendingPathComponent(row[0]).appendingPathComponent(row[1]).path,
                bundle: apps.appendingPathComponent(row[0]).appendingPathComponent(row[2]).path,
                version: String(row[3].split(separator: " (")[0]))
        }
        return (cases, stores)
    }()

    /// The stores of `corpus` and `coredata`, from their `pairs.tsv` (a store several merged
    /// models wrote is listed once per model: those are left to `CoreDataCorpusTests`).
    static let corpusStores: [Store] = ["corpus", "coredata"].flatMap { name -> [Store] in
        let corpus = fixtures.appendingPathComponent(name)
        let text = (try? String(contentsOf: corpus.appendingPathComponent("pairs.tsv"), encoding: .utf8)) ?? ""
        let rows = text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }.filter { $0.count == 4 }
        let perStore = Dictionary(grouping: rows, by: { $0[0] + "/" + $0[1] })
        return rows.filter { perStore[$0[0] + "/" + $0[1]]!.count == 1 }.map { row in
            let repository = corpus.appendingPathComponent(row[0])
            return Store(
                store: repository.appendingPathComponent(row[1]).path,
                bundle: repository.appendingPathComponent(row[2]).deletingLastPathComponent().path, version: row[3])
        }
    }

    let scratch: ScratchFolder

    init() throws { scratch = try ScratchFolder("tern-apps") }

    /// Copies a store with its `-wal`/`-shm` (a fixture is never opened in place).
    private func copy(_ store: String, as name: String) throws -> String {
        let copy = scratch.path(name)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: store + suffix) {
            try FileManager.default.copyItem(atPath: store + suffix, toPath: copy + suffix)
        }
        return copy
    }

    /// A store's bytes, with its `-wal` and `-shm`.
    private static func digest(_ path: String) throws -> [Data?] {
        ["", "-wal", "-shm"].map { suffix in try? Data(contentsOf: URL(fileURLWithPath: path + suffix)) }
    }

    @Test("the apps' 28 cases are here")
    func casesAreHere() {
        #expect(Self.script.cases.count == 28)
        #expect(Self.script.stores.count >= 25)
        #expect(Self.corpusStores.count >= 15)
    }

    @Test("each case of the apps' own expectations migrates and passes expect_real.py, or is refused naming the app's policy class", arguments: script.cases)
    func appCase(_ testCase: Case) throws {
        let repository = Self.apps.appendingPathComponent(testCase.repo)
        let original = repository.appendingPathComponent(testCase.src).path
        let before = try Self.digest(original)
        let source = try copy(original, as: URL(fileURLWithPath: original).lastPathComponent)
        let output = scratch.path("out.sqlite")
        let model = repository.appendingPathComponent(testCase.model).path
        let run = try TernProcess.run(["migrate", source, "--model", model, "--to", testCase.to, "--out", output, "--progress", "none"])
        #expect(try Self.digest(original) == before, "the fixture itself changed")
        if run.status == 65, run.standardError.contains("names the migration policy"), run.standardError.contains("is not registered") {
            // The app's own NSEntityMigrationPolicy subclass: refused by name, before any work.
            #expect(testCase.mapped, "\(testCase.id) was refused for a policy no mapping model of its route names: \(run.standardError)")
            #expect(!FileManager.default.fileExists(atPath: output))
            return
        }
        try #require(run.status == 0, "\(testCase.id): exit \(run.status)\n\(run.standardError)")
        guard FileManager.default.fileExists(atPath: output) else {
            // At the target already: nothing to do, and nothing written.
            #expect(testCase.frm == testCase.to, "\(testCase.id): no store was written")
            #expect(run.standardOutput.contains("nothing to migrate"), "\(run.standardOutput)")
            return
        }
        let check = try ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", Self.apps.appendingPathComponent("expect_real.py").path, "check", testCase.id, output])
        #expect(check.status == 0, "\(testCase.id):\n\(String(decoding: check.standardOutput, as: UTF8.self))")
    }

    /// Every store older than its model's current version, migrated to it as its app would
    /// (`tern migrate` with the model and nothing else): exit 0 or a refusal naming the app's
    /// policy class; integrity; every entity of both versions keeps its objects; and where Core
    /// Data wrote a store at the current version, the same tables, columns, declared types,
    /// entity numbering and version hashes.
    @Test("every store of every corpus migrates to its model's current version as its app does", arguments: script.stores + corpusStores)
    func everyStoreToCurrent(_ store: Store) throws {
        let source = try copy(store.store, as: URL(fileURLWithPath: store.store).lastPathComponent)
        let output = scratch.path("current.sqlite")
        let run = try TernProcess.run(["migrate", source, "--model", store.bundle, "--out", output, "--progress", "none"])
        if run.status == 65, run.standardError.contains("names the migration policy"), run.standardError.contains("is not registered") { return }
        // What Core Data's inference refuses too: the app migrates it with code of its own.
        if run.status == 65, run.standardError.contains("cannot be inferred"),
            ["new non-optional attribute with no default value", "which cannot be inferred"].contains(where: run.standardError.contains)
        {
            return
        }
        try #require(run.status == 0, "exit \(run.status)\n\(run.standardError)")
        guard FileManager.default.fileExists(atPath: output) else {
            #expect(run.standardOutput.contains("nothing to migrate"), "\(run.standardOutput)")
            return
        }
        let migrated = try Connection(path: output, configuration: .init(mode: .readOnly))
        #expect(try migrated.scalar("PRAGMA integrity_check")?.text == "ok")
        let original = try Connection(path: "file:\(source)?immutable=1", configuration: .init(mode: .readOnly))
        let (before, after) = (try Self.objectCounts(original), try Self.objectCounts(migrated))
        for entity in Set(before.keys).intersection(after.keys).sorted() where !run.standardOutput.contains("mapping model") {
            #expect(before[entity] == after[entity], "\(entity): \(before[entity] ?? 0) objects before, \(after[entity] ?? 0) after")
        }
        // A store Core Data wrote at the current version, beside it in the same corpus.
        let references = (Self.script.stores + Self.corpusStores).filter { $0.bundle == store.bundle && $0.store != store.store }
        for reference in references {
            let written = try Connection(path: "file:\(reference.store)?immutable=1", configuration: .init(mode: .readOnly))
            guard try Self.versionHashes(written) == Self.versionHashes(migrated) else { continue }
            #expect(try Self.schema(migrated) == Self.schema(written), "schema differs from \(reference.testDescription)")
            #expect(try Self.entityNumbering(migrated) == Self.entityNumbering(written), "Z_PRIMARYKEY differs from \(reference.testDescription)")
        }
    }

    // MARK: What is compared

    /// Objects per entity (its own rows, not its subentities'), each in its root entity's table.
    private static func objectCounts(_ connection: Connection) throws -> [String: Int64] {
        let statement = try connection.prepare("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < 16000")
        var entities: [Int64: (name: String, parent: Int64)] = [:]
        while try statement.step() {
            entities[statement.row.int64(at: 0)] = (statement.row.text(at: 1) ?? "", statement.row.int64(at: 2))
        }
        let tables = Set(try connection.tableColumns().map(\.table))
        var counts: [String: Int64] = [:]
        for (number, entity) in entities {
            var root = entity
            while let parent = entities[root.parent] { root = parent }
            let table = "Z" + root.name.uppercased()
            guard tables.contains(table) else { continue }
            if case .integer(let count) = try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(table)) WHERE Z_ENT = \(number)") {
                counts[entity.name] = count
            }
        }
        return counts
    }

    private static func entityNumbering(_ connection: Connection) throws -> [String] {
        let statement = try connection.prepare("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < 16000 ORDER BY Z_ENT")
        var found: [String] = []
        while try statement.step() {
            found.append("\(statement.row.int64(at: 0)) \(statement.row.text(at: 1) ?? "") \(statement.row.int64(at: 2))")
        }
        return found
    }

    /// Every table of the store's entities and joins, with its columns and declared types.
    private static func schema(_ connection: Connection) throws -> Set<String> {
        let statement = try connection.prepare(
            """
            SELECT m.name, p.name, p.type FROM sqlite_master m, pragma_table_info(m.name) p
            WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE 'ACHANGE%' AND m.name NOT LIKE 'ATRANSACTION%'
              AND m.name NOT LIKE 'Z_MODELCACHE'
            """)
        var found: Set<String> = []
        while try statement.step() {
            found.insert("\(statement.row.text(at: 0) ?? "").\(statement.row.text(at: 1) ?? "") \(statement.row.text(at: 2) ?? "")")
        }
        return found
    }

    private static func versionHashes(_ connection: Connection) throws -> [String: Data] {
        let plist = Data(try connection.scalar("SELECT Z_PLIST FROM Z_METADATA")?.blob ?? [])
        let decoded = try PropertyListSerialization.propertyList(from: plist, format: nil) as? [String: Any]
        return decoded?["NSStoreModelVersionHashes"] as? [String: Data] ?? [:]
    }
}
