import Foundation
import TernSQLite

/// What a store holds, table by table: each table's row count and an order-independent checksum
/// of every value of every row (`tern_checksum`). A migration records it when it starts and
/// compares it before a resume and before the migrated store replaces (or is delivered beside)
/// the source, so a committed write by anyone in between is seen whatever the journal mode.
///
/// It reads content, not files: a checkpoint, a `VACUUM` or a copy of the store leave it as it
/// is. It cannot see a change that was undone before the next comparison, and as a 64-bit sum of
/// row hashes it is made to catch accidents, not an adversary crafting a collision.
public struct StoreDigest: Codable, Sendable, Equatable {
    /// Table name → "rows:checksum".
    public var tables: [String: String]

    /// Reads every table of the store at `path` (a path or a `file:` URI), a few at a time.
    public static func read(storeAt path: String, workers: Int = 2, shouldStop: @escaping @Sendable () -> Bool = { false }) throws -> StoreDigest {
        let tables = try tableColumns(storeAt: path)
        let queries = tables.map { table, columns in
            let values = columns.map(quoteIdentifier).joined(separator: ", ")
            let affinities = String(repeating: "B", count: columns.count)
            return SQLFragment("SELECT count(*), tern_checksum('\(affinities)', \(values)) FROM \(quoteIdentifier(table))")
        }
        let results = try ParallelScans.run(queries, store: path, workers: workers, shouldStop: shouldStop)
        var digest = StoreDigest(tables: [:])
        for ((table, _), result) in zip(tables, results) {
            digest.tables[table] = "\(result.count):\(result.value ?? 0)"
        }
        return digest
    }

    /// How the store changed since `earlier` was read, one line per table, in words.
    public func changes(since earlier: StoreDigest) -> [String] {
        Set(tables.keys).union(earlier.tables.keys).sorted().compactMap { table in
            switch (earlier.tables[table], tables[table]) {
            case (nil, _?): return "table \(table) was added"
            case (_?, nil): return "table \(table) was removed"
            case (let before?, let now?) where before != now:
                let (rowsBefore, rowsNow) = (before.prefix { $0 != ":" }, now.prefix { $0 != ":" })
                return rowsBefore == rowsNow ? "\(table): values changed (\(rowsNow) row\(rowsNow == "1" ? "" : "s"))" : "\(table): \(rowsBefore) rows then, \(rowsNow) now"
            default: return nil
            }
        }
    }

    /// Every table SQLite itself does not keep, with its columns.
    private static func tableColumns(storeAt path: String) throws -> [(String, [String])] {
        let connection = try Connection(path: path, configuration: .init(mode: .readOnly))
        defer { try? connection.close() }
        let statement = try connection.prepare("""
            SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p
            WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY m.name, p.cid
            """)
        var tables: [(String, [String])] = []
        var rows = statement.rows()
        while let row = try rows.next() {
            let (table, column) = (row.text(at: 0) ?? "", row.text(at: 1) ?? "")
            if tables.last?.0 == table { tables[tables.count - 1].1.append(column) } else { tables.append((table, [column])) }
        }
        return tables
    }
}
