import ArgumentParser
import Foundation
import Tern
import TernCommands
import TernLoop
import TernSQLite

/// What both baselines take: the Bench 1 store, the store to write, and the model.
struct BaselineArguments: ParsableArguments {
    @Argument(help: "The Bench 1 store to read.")
    var source: String

    @Argument(help: "The Bench 2 store to write; it must not exist.")
    var destination: String

    @Option(help: "The benchmark model directory (configs/bench).")
    var model: String

    @Option(help: "The version to write (default: the model's current one).")
    var version: String?

    /// The target version's layout, and a new store of it with no rows and no indexes yet.
    func createDestination() throws -> (StoreLayout, Connection) {
        let versioned = try ModelLoader.load(model)
        guard let target = version == nil ? versioned.current : versioned.version(named: version!) else {
            throw ValidationError("\(model) has no version \(version!)")
        }
        return (StoreLayout(model: target), try StoreFile.create(at: destination, model: target))
    }

    /// For the naive baselines: the destination with its indexes built before any row (as a
    /// program that inserts row by row keeps them), and the source opened read-only.
    func openRowByRow() throws -> (layout: StoreLayout, destination: Connection, source: Connection) {
        let (layout, connection) = try createDestination()
        for statement in layout.indexStatements { try connection.execute(statement) }
        return (layout, connection, try Connection(path: source, configuration: .init(mode: .readOnly)))
    }

    /// A hand-written SQL ceiling: the destination created and the source attached as `src`;
    /// in one transaction, `copy` (given the connection and each entity's number), then each of
    /// `tables`' Z_MAX set from its rows and the indexes built; then `after` (files, say); last,
    /// the run reported with the objects in `tables`.
    func runCeiling(tables: [String], _ copy: (Connection, (String) -> Int) throws -> Void, after: () throws -> Void = {}) throws {
        let started = ContinuousClock.now
        let (layout, connection) = try createDestination()
        try connection.execute("ATTACH DATABASE \(quoteLiteral(source)) AS src")
        try connection.transaction(.immediate) {
            try copy(connection) { layout.entities[$0]!.number }
            for table in tables {
                try connection.execute(
                    "UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT coalesce(max(Z_PK), 0) FROM \(table)) WHERE Z_SUPER = 0 AND Z_NAME = \(quoteLiteral(layout.rootEntities[table] ?? ""))"
                )
            }
            for statement in layout.indexStatements { try connection.execute(statement) }
        }
        try after()
        try finish(connection, counting: tables, since: started)
    }

    /// Closes the destination and reports the run with the objects now in `tables`.
    func finish(_ connection: Connection, counting tables: [String], since started: ContinuousClock.Instant) throws {
        let objects = try connection.scalar("SELECT " + tables.map { "(SELECT count(*) FROM \($0))" }.joined(separator: " + "))?.int64 ?? 0
        try finish(connection, objects: Int(objects), since: started)
    }

    /// Closes the destination as a finished store and reports the run to `tern bench`.
    func finish(_ connection: Connection, objects: Int, since started: ContinuousClock.Instant) throws {
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try connection.close()
        try BenchCommand.report(
            BaselineResult(seconds: (ContinuousClock.now - started).seconds, objects: objects, peakResidentMemory: ProcessStats.peakResidentMemory()))
    }
}

/// What the naive programs do for each table.
enum RowByRow {
    /// Copies one table row by row, committing every 100,000 rows; returns source → new key.
    static func copy(
        _ select: String, from input: Connection, into insert: String, of connection: Connection, counting objects: inout Int,
        transform: ([SQLiteValue]) -> [SQLiteValue]
    ) throws -> [Int64: Int64] {
        var keys: [Int64: Int64] = [:]
        let statement = try connection.prepare(insert)
        var rows = try input.prepare(select).rows()
        try connection.execute("BEGIN")
        while let row = try rows.next() {
            let values = row.values
            let key = Int64(keys.count + 1)
            keys[values[0].int64!] = key
            try statement.bind([.integer(key)] + transform(values))
            try statement.run()
            objects += 1
            if objects % 100_000 == 0 { try connection.execute("COMMIT"); try connection.execute("BEGIN") }
        }
        try connection.execute("COMMIT")
        return keys
    }
}

/// What a baseline run reports on its last line, read by `tern bench`.
struct BaselineResult: Codable {
    var seconds: Double
    var objects: Int
    var peakResidentMemory: Int
}

/// The benchmark's ceiling: the Bench 1 → 2 migration as a hand-written SQL script run through
/// the sqlite3 library — ATTACH, one INSERT … SELECT per table with the transform in SQL, keys
/// kept so foreign keys copy as they are, indexes afterwards. Nothing checkpointed or verified.
struct SQLCeilingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sql-ceiling", abstract: "Run the hand-written SQL baseline (used by tern bench).", shouldDisplay: false)

    @OptionGroup var arguments: BaselineArguments

    func run() throws {
        try arguments.runCeiling(tables: ["ZCATEGORY", "ZPUBLICATION", "ZPAGE"]) { connection, number in
            try connection.execute("INSERT INTO ZCATEGORY (Z_PK, Z_ENT, Z_OPT, ZNAME) SELECT Z_PK, \(number("Category")), 1, ZNAME FROM src.ZCATEGORY")
            try connection.execute(
                """
                INSERT INTO ZPUBLICATION (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZFIRSTNAME, ZLASTNAME, ZPRICE, ZPUBLISHED, ZCATEGORY)
                SELECT Z_PK, \(number("Publication")), 1, ZTITLE,
                       CASE WHEN instr(ZAUTHOR, ' ') > 0 THEN substr(ZAUTHOR, 1, instr(ZAUTHOR, ' ') - 1) ELSE ZAUTHOR END,
                       CASE WHEN instr(ZAUTHOR, ' ') > 0 THEN substr(ZAUTHOR, instr(ZAUTHOR, ' ') + 1) ELSE '' END,
                       ZPRICE * 1.04, ZPUBLISHED, ZCATEGORY FROM src.ZBOOK
                """)
            // A book's pages are an ordered list: their order keys are carried as they are.
            try connection.execute(
                "INSERT INTO ZPAGE (Z_PK, Z_ENT, Z_OPT, ZNUMBER, ZTEXT, ZBOOK, Z_FOK_BOOK) SELECT Z_PK, \(number("Page")), 1, ZNUMBER, ZTEXT, ZBOOK, Z_FOK_BOOK FROM src.ZPAGE"
            )
        }
    }
}

/// The benchmark's naive baseline, the kind of loop people write by hand: read every source row,
/// keep an in-memory dictionary of source key → new key, insert row by row in large
/// transactions, look foreign keys up in the dictionaries.
struct NaiveBaselineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "naive", abstract: "Run the naive row-by-row baseline (used by tern bench).", shouldDisplay: false)

    @OptionGroup var arguments: BaselineArguments

    func run() throws {
        let started = ContinuousClock.now
        let (layout, connection, input) = try arguments.openRowByRow()
        var objects = 0
        func copy(_ select: String, into insert: String, transform: ([SQLiteValue]) -> [SQLiteValue]) throws -> [Int64: Int64] {
            try RowByRow.copy(select, from: input, into: insert, of: connection, counting: &objects, transform: transform)
        }

        let categories = try copy(
            "SELECT Z_PK, ZNAME FROM ZCATEGORY",
            into: "INSERT INTO ZCATEGORY (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, \(layout.entities["Category"]!.number), 1, ?)"
        ) { [$0[1]] }
        let books = try copy(
            "SELECT Z_PK, ZTITLE, ZAUTHOR, ZPRICE, ZPUBLISHED, ZCATEGORY FROM ZBOOK",
            into:
                "INSERT INTO ZPUBLICATION (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZFIRSTNAME, ZLASTNAME, ZPRICE, ZPUBLISHED, ZCATEGORY) VALUES (?, \(layout.entities["Publication"]!.number), 1, ?, ?, ?, ?, ?, ?)"
        ) { values in
            let parts = (values[2].text ?? "").split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            let price = values[3].double.map { SQLiteValue.real($0 * 1.04) } ?? .null
            return [
                values[1], .text(String(parts.first ?? "")), .text(parts.count > 1 ? String(parts[1]) : ""), price, values[4],
                values[5].int64.flatMap { categories[$0] }.map(SQLiteValue.integer) ?? .null,
            ]
        }
        _ = try copy(
            "SELECT Z_PK, ZNUMBER, ZTEXT, ZBOOK, Z_FOK_BOOK FROM ZPAGE",
            into: "INSERT INTO ZPAGE (Z_PK, Z_ENT, Z_OPT, ZNUMBER, ZTEXT, ZBOOK, Z_FOK_BOOK) VALUES (?, \(layout.entities["Page"]!.number), 1, ?, ?, ?, ?)"
        ) { values in
            [values[1], values[2], values[3].int64.flatMap { books[$0] }.map(SQLiteValue.integer) ?? .null, values[4]]
        }
        try arguments.finish(connection, objects: objects, since: started)
    }
}
