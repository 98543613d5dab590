import TernSQLite
import TernModel

/// A large table read by several workers at once: cut into ranges of its rowids, each scanned on
/// its own, the results added up (counts and `tern_checksum`s add). Without it, the largest
/// table is read by one worker while the others wait.
package enum RowidRanges {
    /// Rowids per scan of a table read in ranges, and the most ranges one table is cut into
    /// (keys far apart make wide, sparse ranges, not millions of scans).
    package static let rowidsPerScan: Int64 = 1 << 18, mostRanges: Int64 = 64

    /// The conditions that cut `table` into ranges of about `rowidsPerScan` rowids, the first
    /// and the last open-ended so that no row is left out whatever the bounds; one condition,
    /// `1`, for a small table, a table without rowids, or one whose column hides the rowid.
    static func conditions(of table: String, columns: [String], in connection: Connection, rowidsPerScan: Int64 = rowidsPerScan) throws -> [String] {
        guard !columns.contains(where: { ["rowid", "_rowid_", "oid"].contains($0.lowercased()) }) else { return ["1"] }
        return try conditions(on: "rowid", of: quoteIdentifier(table), in: connection, rowidsPerScan: rowidsPerScan)
    }

    /// The same cut of `table` (quoted, with its schema if any) by its rowid, as conditions on
    /// `key`, an expression that names the rowid in the query they go into (`s."Z_PK"`).
    package static func conditions(on key: String, of table: String, in connection: Connection, rowidsPerScan: Int64 = rowidsPerScan) throws -> [String] {
        // Two subqueries: SQLite finds a lone min() or max() at one end of the b-tree, but scans
        // the whole table for both in one query.
        guard let bounds = try? connection.prepare("SELECT (SELECT min(rowid) FROM \(table)), (SELECT max(rowid) FROM \(table))") else { return ["1"] }
        guard try bounds.step(), let low = bounds.row.value(at: 0).int64, let high = bounds.row.value(at: 1).int64,
            case (let span, false) = high.subtractingReportingOverflow(low), case let ranges = min(mostRanges, span / rowidsPerScan), ranges >= 2
        else { return ["1"] }
        let cuts = (1..<ranges).map { low + span / ranges * $0 }
        return ["\(key) < \(cuts[0])"]
            + zip(cuts, cuts.dropFirst()).map { "\(key) >= \($0) AND \(key) < \($1)" }
            + ["\(key) >= \(cuts[cuts.count - 1])"]
    }
}
