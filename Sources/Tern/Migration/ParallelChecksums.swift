import TernLoop
import TernSQLite

/// An order-independent checksum of a set of rows (`tern_checksum`), with their count.
struct RowChecksum: Equatable, Sendable {
    var count: Int64
    var sum: Int64
}

/// Both sides of a verification comparison at once, each on its own libuv worker thread with its
/// own read connection (the step's store, the source attached as `src`): on two cores a
/// comparison takes the time of its longer side, not of both.
enum ParallelChecksums {
    static func compute(_ queries: [SQLFragment], store: String, sourceAttachURI: String) throws -> [RowChecksum] {
        let loop = try EventLoop()
        let pool = try WorkerPool<ChecksumReader>(loop: loop, workers: queries.count, maxInFlight: queries.count) { _ in
            try ChecksumReader(store: store, sourceAttachURI: sourceAttachURI)
        }
        var results = [RowChecksum?](repeating: nil, count: queries.count)
        var failure: (any Error)?
        var pending = queries.count
        for (index, query) in queries.enumerated() {
            try pool.submit({ reader, _ in try reader.checksum(query) }) { result in
                switch result {
                case .success(let checksum): results[index] = checksum
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

/// One worker's read connection for checksums.
final class ChecksumReader {
    private let connection: Connection

    init(store: String, sourceAttachURI: String) throws {
        connection = try Connection(path: store, configuration: .init(mode: .readOnly))
        try SQLCompiler.prepare(connection)
        try connection.registerChecksum()
        try connection.execute("ATTACH DATABASE \(quoteLiteral(sourceAttachURI)) AS src")
    }

    /// Runs a query whose one row is `count(*), tern_checksum(…)`.
    func checksum(_ query: SQLFragment) throws -> RowChecksum {
        let statement = try connection.prepare(query.sql)
        try statement.bind(query.arguments)
        _ = try statement.step()
        return RowChecksum(count: statement.row.int64(at: 0), sum: statement.row.value(at: 1).int64 ?? 0)
    }
}
