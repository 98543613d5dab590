import TernLoop
import TernModel
import TernSQLite

/// What a scan returns: a count, and one more integer (a checksum, a smallest key).
package struct ScanResult: Equatable, Sendable {
    package var count: Int64
    package var value: Int64?
    /// Counts a query adds after its two columns (verification's links per to-one, counted in
    /// the scan that compares them).
    package var counts: [Int64] = []

    package init(count: Int64, value: Int64?, counts: [Int64] = []) {
        self.count = count
        self.value = value
        self.counts = counts
    }
}

/// Read-only queries over whole tables, run side by side on libuv worker threads, each worker
/// with its own connection: verification computes both sides of a comparison at once, and the
/// anomaly scan checks tables at once, so on two cores they take the time of the longest query
/// rather than of all of them.
package enum ParallelScans {
    /// Runs queries whose one row is `count, integer` (then any further counts) against the store at `store` (a path or an
    /// SQLite URI), with `attach` attached as `src` when given (before `preparing` runs).
    /// `shouldStop` interrupts the running queries (`Connection.interrupt(when:)`); values stored
    /// outside the stores are read from `externalData`'s folders. `preparing` readies each
    /// worker's connection first (the functions value expressions use: `SQLCompiler.prepare`).
    /// With `yieldingCores`, the workers run on what other threads leave
    /// (`OSThread.yieldCoresToOthers`): reads beside a write the run waits for anyway.
    package static func run(
        _ queries: [SQLFragment], store: String, attach: String? = nil, workers: Int = 2, externalData: ExternalDataFolders = ExternalDataFolders(),
        yieldingCores: Bool = false, preparing: @escaping @Sendable (Connection, ExternalDataFolders) throws -> Void = { _, _ in },
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) throws -> [ScanResult] {
        guard !queries.isEmpty else { return [] }
        let loop = try EventLoop()
        let threads = max(1, min(workers, queries.count))
        let pool = try WorkerPool<ScanReader>(loop: loop, workers: threads, maxInFlight: threads) { _ in
            if yieldingCores { OSThread.yieldCoresToOthers() }
            return try ScanReader(store: store, attach: attach, externalData: externalData, preparing: preparing, shouldStop: shouldStop)
        }
        var results = [ScanResult?](repeating: nil, count: queries.count)
        var failure: (any Error)?
        var pending = queries.count
        for (index, query) in queries.enumerated() {
            try pool.submit({ reader, _ in try reader.scan(query) }) { result in
                switch result {
                case .success(let scan): results[index] = scan
                case .failure(let error): failure = failure ?? error
                case .cancelled: break
                }
                pending -= 1
                if pending == 0 { pool.shutdown() }
            }
        }
        loop.run()
        try loop.close()
        if let failure { throw failure }
        return results.map { $0! }
    }
}

/// One worker's read connection, with the checksum function and what `preparing` adds.
final class ScanReader {
    private let connection: Connection

    init(
        store: String, attach: String?, externalData: ExternalDataFolders, preparing: (Connection, ExternalDataFolders) throws -> Void,
        shouldStop: @escaping @Sendable () -> Bool
    ) throws {
        connection = try Connection(path: store, configuration: .init(mode: .readOnly))
        // A scan reads each page once: a small cache holds the b-trees' upper levels that key
        // look-ups walk, and keeps a scan beside a pass (`StartChecks`) from adding megabytes.
        try connection.execute("PRAGMA cache_size = -1024")
        try connection.interrupt(when: shouldStop)
        if let attach {
            try connection.execute("ATTACH DATABASE \(quoteLiteral(attach)) AS src")
        }
        try preparing(connection, externalData)
        try connection.registerChecksum()
    }

    func scan(_ query: SQLFragment) throws -> ScanResult {
        let statement = try connection.prepare(query.sql)
        try statement.bind(query.arguments)
        _ = try statement.step()
        return ScanResult(
            count: statement.row.int64(at: 0), value: statement.row.value(at: 1).int64,
            counts: (2..<max(2, statement.columnCount)).map { statement.row.int64(at: $0) })
    }
}
