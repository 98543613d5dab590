import TernSQLite

/// An entity mapping's selected source objects, in key order, cut into batches of key ranges:
/// what stage 1 works through, from just after the last key a checkpoint recorded.
struct SourceBatches {
    /// The source objects an entity mapping selects, as a condition on source rows `s`: those of
    /// exactly its source entity, its filter applied.
    static func selection(of entity: StoreLayout.EntityLayout, filter: CompiledPredicate?, compiler: inout SQLCompiler) -> SQLFragment {
        var selection = SQLFragment("s.\"Z_ENT\" = \(entity.number)")
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

    /// - Parameter table: the source table, in the attached schema `src`.
    init(connection: Connection, table: String, selection: SQLFragment, size: Int, after last: Int64) throws {
        let from = SQLFragment("FROM \"src\".\(quoteIdentifier(table)) s WHERE ") + selection
        batchEnd = try connection.prepare((SQLFragment("SELECT max(k) FROM (SELECT s.\"Z_PK\" AS k ") + from + SQLFragment(" AND s.\"Z_PK\" > ? ORDER BY s.\"Z_PK\" LIMIT ?)")).sql)
        count = try connection.prepare((SQLFragment("SELECT count(*) ") + from).sql)
        arguments = selection.arguments
        self.size = size
        self.last = last
    }

    /// The next batch's keys, `(after, through]`, or nil when every object was handed out.
    mutating func next() throws -> (after: Int64, through: Int64)? {
        try batchEnd.bind(arguments + [SQLiteValue.integer(last), .integer(Int64(size))])
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
