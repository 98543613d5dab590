import Foundation
import TernStore
import TernSQLite

/// Verification's source side as read early (`EarlyExpectations`), kept for a resume in a small
/// SQLite file beside the step's store (`path(forStepStore:)`), by query: a resume goes on only
/// on a source proved unchanged, so what an earlier run read of it still holds.
///
/// Beside the store, not in it: only a run with a second worker reads early, and rows it wrote
/// into the step's store would take pages there that a single worker's run never takes, so the
/// two runs' stores could not be the same file. A cache lost costs a read of the source, nothing
/// more: the file commits on its own, and one that cannot be read is read again from the source.
package struct SourceScanCache: Sendable {
    private let path: String

    /// The cache of the step store at `store`.
    package init(stepStore store: String) {
        path = Self.path(forStepStore: store)
    }

    /// Where the cache of the step store at `store` is kept.
    package static func path(forStepStore store: String) -> String { store + "-tern-scans" }

    private static let table = "TERN_SOURCE_SCANS"

    /// Changed whenever what a kept scan's result means changes (a function's values; the hash
    /// has its own number): a resume by another Tern then reads the source again.
    private static let format = "tern-source-scan-1-hash\(Connection.checksumScheme)"

    /// What this step's runs read of `queries` and kept; nothing when no cache can be read.
    package func scans(of queries: [SQLFragment]) -> [SQLFragment: ScanResult] {
        guard FileManager.default.fileExists(atPath: path),
            let connection = try? Connection(path: path, configuration: .init(mode: .readOnly)),
            let read = try? connection.prepare("SELECT count, value, counts FROM \(Self.table) WHERE query = ?")
        else { return [:] }
        defer { try? connection.close() }
        var found: [SQLFragment: ScanResult] = [:]
        for query in queries {
            guard (try? read.bind([SQLiteValue.text(Self.identity(of: query))])) != nil else { return [:] }
            defer { read.reset() }
            guard (try? read.step()) == true else { continue }
            let row = read.row
            let counts = (row.text(at: 2) ?? "").split(separator: ",").map { Int64($0) }
            // A count Tern never writes: the file is not its own; the source is read again.
            guard !counts.contains(nil) else { return [:] }
            found[query] = ScanResult(count: row.int64(at: 0), value: row.isNull(at: 1) ? nil : row.int64(at: 1), counts: counts.compactMap { $0 })
        }
        return found
    }

    /// Keeps `scans` for a resume. Not those that read values from files: neither the digest nor
    /// the store file's state says whether a file changed since.
    package func keep(_ scans: [SQLFragment: ScanResult]) throws {
        let kept = scans.filter { !$0.key.sql.contains("tern_external") }
        guard !kept.isEmpty else { return }
        let connection = try Connection(path: path)
        defer { try? connection.close() }
        // Never synced: a cache is not a checkpoint, and a write it may lose must not be one whose
        // failed fsync the run then carries on past. A file a power cut tore reads as no cache.
        try connection.execute("PRAGMA synchronous = OFF")
        try connection.transaction(.immediate) {
            try connection.execute(
                "CREATE TABLE IF NOT EXISTS \(Self.table) (query TEXT PRIMARY KEY, count INTEGER NOT NULL, value INTEGER, counts TEXT NOT NULL) WITHOUT ROWID"
            )
            let insert = try connection.prepare("INSERT OR REPLACE INTO \(Self.table) (query, count, value, counts) VALUES (?, ?, ?, ?)")
            for (query, result) in kept {
                try insert.bind([
                    SQLiteValue.text(Self.identity(of: query)), .integer(result.count), result.value.map(SQLiteValue.integer) ?? .null,
                    .text(result.counts.map(String.init).joined(separator: ",")),
                ])
                try insert.run()
            }
        }
    }

    /// Removes the cache: its step finished, or starts anew.
    package func remove() {
        StoreFiles.remove(path)
    }

    /// A query's text and arguments as one string: the same for the same query only, and for
    /// the same meaning of Tern's SQL functions (`format`).
    private static func identity(of query: SQLFragment) -> String {
        "\(format)\n" + query.sql + "\n-- " + query.arguments.map(\.sqlLiteral).joined(separator: ", ")
    }
}
