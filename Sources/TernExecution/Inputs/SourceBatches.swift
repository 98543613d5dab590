import TernSQLite
import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability

/// An entity mapping's selected source objects, in key order, cut into batches of key ranges:
/// what stage 1 works through, from just after the last key a checkpoint recorded. A batch holds
/// at most `size` objects and, when their values are weighed, at most `budget` bytes of them
/// (or the one object that alone weighs more).
package struct SourceBatches {
    /// The source objects an entity mapping selects, as a condition on source rows `s`: those of
    /// exactly its source entity, its filter applied. An entity alone in its table needs no
    /// `Z_ENT` test: a migration has refused a store with a row of an entity its table does not
    /// hold before it reads a batch (`StoreAnomalies`), so every row there is one of its objects,
    /// and counting them reads the table's smallest index instead of every row.
    package static func selection(of entity: StoreLayout.EntityLayout, filter: CompiledPredicate?, compiler: inout SQLCompiler) -> SQLFragment {
        let alone = compiler.layout.entities.values.filter { $0.table == entity.table }.count == 1
        var selection = SQLFragment(alone ? "1" : "s.\"Z_ENT\" = \(entity.number)")
        if let filter {
            selection = selection + SQLFragment(" AND ") + compiler.sql(filter, alias: "s")
        }
        return selection
    }

    let size: Int
    /// The last key of the last batch handed out.
    private(set) var last: Int64
    private let batchEnd: Statement
    private let count: Statement
    private let arguments: [SQLiteValue]
    private let budget: [SQLiteValue]
    /// The table's largest key, where batches are cut by key arithmetic (`byKeyRange`).
    private var largestKey: Int64?
    /// Whether each batch is simply the next `size` keys: where every row of the table is an
    /// object the mapping selects and the keys are dense (Core Data hands them out in order),
    /// so no batch holds more than `size` objects and few hold fewer. Finding the end of a
    /// batch by counting `size` keys reads its rows a second time (a table's keys live in its
    /// rows' pages): 0.28 s of a 1.85 s pass over 3,000,000 pages.
    private var byKeyRange = false

    /// - Parameters:
    ///   - table: the source table, in the attached schema `src`.
    ///   - weight: SQL over source rows `s` for the bytes an object's values take in memory,
    ///     and the most a batch may take; nil: batches are counted in objects only.
    init(connection: Connection, table: String, selection: SQLFragment, size: Int, weight: (sql: String, budget: Int)? = nil, after last: Int64) throws {
        let from = SQLFragment("FROM \"src\".\(quoteIdentifier(table)) s WHERE ") + selection
        let window =
            SQLFragment("SELECT s.\"Z_PK\" AS k\(weight.map { ", \($0.sql) AS w" } ?? "") ") + from
            + SQLFragment(" AND s.\"Z_PK\" > ? ORDER BY s.\"Z_PK\" LIMIT ?")
        if weight != nil {
            // The running total over the batch's objects only (the inner LIMIT comes first).
            batchEnd = try connection.prepare(
                "SELECT coalesce(max(CASE WHEN total <= ? THEN k END), min(k)) FROM (SELECT k, sum(w) OVER (ORDER BY k) AS total FROM (\(window.sql)))")
        } else {
            batchEnd = try connection.prepare("SELECT max(k) FROM (\(window.sql))")
        }
        count = try connection.prepare((SQLFragment("SELECT count(*) ") + from).sql)
        arguments = selection.arguments
        budget = weight.map { [.integer(Int64($0.budget))] } ?? []
        self.size = size
        self.last = last
        if weight == nil, selection.sql == "1", selection.arguments.isEmpty {
            let table = "\"src\".\(quoteIdentifier(table))"
            // Each alone: SQLite finds a rowid table's smallest and largest key in its b-tree's edges.
            let smallest = try connection.scalar("SELECT min(\"Z_PK\") FROM \(table)")?.int64
            largestKey = try connection.scalar("SELECT max(\"Z_PK\") FROM \(table)")?.int64
            if let smallest, let largestKey {
                // Sparse keys would make many empty batches, and keys Core Data never hands out
                // (zero, negative) no sense of range: then the keys are counted.
                let objects = Int64(try total())
                byKeyRange = smallest > 0 && largestKey - smallest - 2 * objects < Int64(size)
                if byKeyRange { self.last = max(last, smallest - 1) }
            } else {
                byKeyRange = true  // an empty table: no batch at all
            }
        }
    }

    /// The next batch's keys, `(after, through]`, or nil when every object was handed out; it
    /// holds at most `objects` objects (default: `size`).
    mutating func next(objects: Int? = nil) throws -> (after: Int64, through: Int64)? {
        if byKeyRange {
            guard let largestKey, last < largestKey else { return nil }
            let start = last
            last = start + min(Int64(objects ?? size), largestKey - start)
            return (start, last)
        }
        try batchEnd.bind(budget + arguments + [SQLiteValue.integer(last), .integer(Int64(objects ?? size))])
        defer { batchEnd.reset() }
        guard try batchEnd.step(), let end = batchEnd.row.value(at: 0).int64 else { return nil }
        defer { last = end }
        return (last, end)
    }

    /// How many objects the mapping selects in all.
    func total() throws -> Int {
        try count.bind(arguments)
        defer { count.reset() }
        _ = try count.step()
        return Int(count.row.int64(at: 0))
    }
}
