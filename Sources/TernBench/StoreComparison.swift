import TernSQLite

/// Two stores compared row for row, streaming: a million-object store in a few rows' memory.
enum StoreComparison {
    /// The first difference between the stores at `path` and `other`, or nil when they hold the
    /// same schema and the same rows in every table but the metadata (whose UUID is each store's
    /// own).
    static func firstDifference(_ path: String, _ other: String) throws -> String? {
        let one = try Connection(path: path, configuration: .init(mode: .readOnly))
        defer { try? one.close() }
        let two = try Connection(path: other, configuration: .init(mode: .readOnly))
        defer { try? two.close() }
        let schema = "SELECT type, name, sql FROM sqlite_master WHERE name <> 'Z_METADATA' ORDER BY type, name"
        if let difference = try firstDifference(schema, one, two, what: "the schema") { return difference }
        let tables = try one.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'Z_METADATA' ORDER BY name")
        var names = tables.rows()
        while let row = try names.next() {
            let table = row.text(at: 0)!
            if let difference = try firstDifference("SELECT * FROM \(quoteIdentifier(table)) ORDER BY 1, 2", one, two, what: table) {
                return difference
            }
        }
        return nil
    }

    private static func firstDifference(_ sql: String, _ one: Connection, _ two: Connection, what: String) throws -> String? {
        var left = try one.prepare(sql).rows()
        var right = try two.prepare(sql).rows()
        var index = 0
        while true {
            let a = try left.next()?.values
            let b = try right.next()?.values
            if a == nil && b == nil { return nil }
            guard a == b else {
                func shown(_ row: [SQLiteValue]?) -> String { row.map { $0.map(\.sqlLiteral).joined(separator: "|") } ?? "no row" }
                return "\(what), row \(index + 1): \(shown(a)) ≠ \(shown(b))"
            }
            index += 1
        }
    }
}
