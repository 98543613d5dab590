import Foundation
import TernModel
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
    /// One table's row count and content checksum.
    public struct Table: Codable, Sendable, Equatable {
        /// How many rows the table holds.
        public var rows: Int64
        /// The order-independent sum of its rows' hashes (`tern_checksum`); 0 for an empty table.
        public var checksum: Int64
    }

    /// Table name → what it holds, for every table of the store but SQLite's own (`sqlite_…`).
    public var tables: [String: Table]
    /// The hash its checksums were taken with (`Connection.checksumScheme`); nil in a record an
    /// earlier Tern wrote, whose hash was the first.
    public var scheme: Int?

    /// A digest of `tables`, taken with this Tern's hash.
    public init(tables: [String: Table]) {
        self.tables = tables
        scheme = Connection.checksumScheme
    }

    /// Whether its checksums were taken with this Tern's hash, and so compare with a digest read now.
    public var takenWithCurrentHash: Bool { scheme == Connection.checksumScheme }

    /// No table: the place of a digest not read yet.
    public static let unread = StoreDigest(tables: [:])

    /// Reads every table of the store at `path` (a path or a `file:` URI), a few scans at a time.
    /// A large table is read in ranges of its rowids, summed afterwards (counts and checksums
    /// add up), so the workers share it rather than one of them reading it alone.
    public static func read(storeAt path: String, workers: Int = 2, shouldStop: @escaping @Sendable () -> Bool = { false }) throws -> StoreDigest {
        try read(storeAt: path, workers: workers, rowidsPerScan: RowidRanges.rowidsPerScan, countingRowsWhere: [:], shouldStop: shouldStop).digest
    }

    /// Reads the digest, and counts on the way the rows of each table in `conditions` (table →
    /// SQL condition on a row) that meet its condition: returns the tables where some did, named
    /// as in `conditions`. The
    /// start checks' scan for rows Core Data never writes (`StoreAnomalies.rowConditions`)
    /// reads every row as the digest does, so it is counted here rather than read again.
    public static func read(
        storeAt path: String, workers: Int = 2, countingRowsWhere conditions: [String: String], shouldStop: @escaping @Sendable () -> Bool = { false }
    ) throws -> (digest: StoreDigest, flagged: Set<String>) {
        try read(storeAt: path, workers: workers, rowidsPerScan: RowidRanges.rowidsPerScan, countingRowsWhere: conditions, shouldStop: shouldStop)
    }

    static func read(
        storeAt path: String, workers: Int, rowidsPerScan: Int64, countingRowsWhere conditions: [String: String] = [:],
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) throws -> (digest: StoreDigest, flagged: Set<String>) {
        let connection = try Connection(path: path, configuration: .init(mode: .readOnly))
        var scans: [(table: String, query: SQLFragment)] = []
        let tables = try connection.tableColumns()
        // SQLite finds a table whatever the case of its name; so does this.
        let conditionsByName = Dictionary(conditions.map { ($0.key.uppercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        let namesByCase = Dictionary(conditions.keys.map { ($0.uppercased(), $0) }, uniquingKeysWith: { first, _ in first })
        for (table, columns) in tables {
            let arguments = ChecksumArguments.of(affinities: String(repeating: "B", count: columns.count), values: columns.map(quoteIdentifier))
            let counted = conditionsByName[table.uppercased()].map { ", count(*) FILTER (WHERE \($0))" } ?? ""
            let whole = "SELECT count(*), tern_checksum(\(arguments))\(counted) FROM \(quoteIdentifier(table))"
            for range in try RowidRanges.conditions(of: table, columns: columns, in: connection, rowidsPerScan: rowidsPerScan) {
                scans.append((table, SQLFragment(whole + " WHERE " + range)))
            }
        }
        try connection.close()
        let results = try ParallelScans.run(scans.map(\.query), store: path, workers: workers, shouldStop: shouldStop)
        var digest = StoreDigest(tables: Dictionary(uniqueKeysWithValues: tables.map { ($0.table, Table(rows: 0, checksum: 0)) }))
        var flagged: Set<String> = []
        for ((table, _), result) in zip(scans, results) {
            digest.tables[table]!.rows += result.count
            digest.tables[table]!.checksum &+= result.value ?? 0
            if result.counts.contains(where: { $0 > 0 }) { flagged.insert(namesByCase[table.uppercased()] ?? table) }
        }
        return (digest, flagged)
    }

    /// Why this digest cannot be compared with `earlier`, or nil when it can: taken with
    /// different hashes, equal content has different checksums.
    public func incomparability(with earlier: StoreDigest) -> String? {
        (earlier.scheme ?? 1) == (scheme ?? 1)
            ? nil
            : "the source's digest was read by a Tern that hashes content differently (scheme \(earlier.scheme ?? 1), now \(scheme ?? 1)), so whether the source changed is not known"
    }

    /// How the store changed since `earlier` was read, one line per table, in words (or why
    /// the two cannot tell, `incomparability`).
    public func changes(since earlier: StoreDigest) -> [String] {
        if let reason = incomparability(with: earlier) { return [reason] }
        return Set(tables.keys).union(earlier.tables.keys).sorted().compactMap { table in
            switch (earlier.tables[table], tables[table]) {
            case (nil, _?): return "table \(table) was added"
            case (_?, nil): return "table \(table) was removed"
            case (let before?, let now?) where before != now:
                return before.rows == now.rows
                    ? "\(table): values changed (\(now.rows) row\(now.rows == 1 ? "" : "s"))" : "\(table): \(before.rows) rows then, \(now.rows) now"
            default: return nil
            }
        }
    }
}
