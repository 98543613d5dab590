import Tern

/// Two stores compared row for row, streaming: a million-object store in a few rows' memory.
enum StoreComparison {
    /// The first difference between the stores at `path` and `other`, or nil when they hold the
    /// same schema, the same rows in every table, and the same metadata but for what names the
    /// run that wrote each (`StoreFile.migratedFromKey`: the fingerprint of its inputs).
    static func firstDifference(_ path: String, _ other: String) throws -> String? {
        let one = try Connection(path: path, configuration: .init(mode: .readOnly))
        defer { try? one.close() }
        let two = try Connection(path: other, configuration: .init(mode: .readOnly))
        defer { try? two.close() }
        let schema = "SELECT type, name, sql FROM sqlite_master ORDER BY type, name"
        if let difference = try firstDifference(schema, one, two, what: "the schema") { return difference }
        let tables = try one.prepare("SELECT name, (SELECT count(*) FROM pragma_table_info(name)) FROM sqlite_master WHERE type = 'table' ORDER BY name")
        var names = tables.rows()
        while let row = try names.next() {
            let table = row.text(at: 0)!
            if table == "Z_METADATA" {
                if let difference = try metadataDifference(one, two) { return difference }
                continue
            }
            // Every column in the order: a total order, whatever the table's keys.
            let order = (1...max(1, Int(row.int64(at: 1)))).map(String.init).joined(separator: ", ")
            if let difference = try firstDifference("SELECT * FROM \(quoteIdentifier(table)) ORDER BY \(order)", one, two, what: table) {
                return difference
            }
        }
        return nil
    }

    private static func metadataDifference(_ one: Connection, _ two: Connection) throws -> String? {
        let select = "SELECT Z_VERSION, Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION"
        var left = try one.prepare(select).rows()
        var right = try two.prepare(select).rows()
        func entries(_ row: Row?) throws -> [SQLiteValue]? {
            guard let row else { return nil }
            guard let bytes = row.blob(at: 2), case .dictionary(var plist) = try BinaryPropertyList.decode(bytes) else { return row.values }
            plist[StoreFile.migratedFromKey] = nil
            return [row.value(at: 0), row.value(at: 1), .blob(BinaryPropertyList.encode(.dictionary(plist)))]
        }
        while true {
            let (a, b) = (try entries(try left.next()), try entries(try right.next()))
            if a == nil && b == nil { return nil }
            if a != b { return "Z_METADATA: the version, UUID or metadata differ" }
        }
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
