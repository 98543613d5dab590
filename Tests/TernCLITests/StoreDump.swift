import TernSQLite

/// A store as lines of text, to compare two stores row for row.
enum StoreDump {
    /// The schema (tables and indexes), then every row of every table but the metadata (whose
    /// UUID differs per store), in key order.
    static func lines(_ path: String) throws -> [String] {
        let connection = try Connection(path: path, configuration: .init(mode: .readOnly))
        let schema = try connection.prepare("SELECT type, name FROM sqlite_master WHERE name <> 'Z_METADATA' ORDER BY type, name")
        var lines: [String] = []
        var tables: [String] = []
        var rows = schema.rows()
        while let row = try rows.next() {
            lines.append("\(row.text(at: 0)!) \(row.text(at: 1)!)")
            if row.text(at: 0) == "table" { tables.append(row.text(at: 1)!) }
        }
        for name in tables {
            let select = try connection.prepare("SELECT * FROM \(quoteIdentifier(name)) ORDER BY 1, 2")
            var cursor = select.rows()
            while let row = try cursor.next() { lines.append(name + ":" + row.values.map(\.sqlLiteral).joined(separator: "|")) }
        }
        return lines
    }
}
