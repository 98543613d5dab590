import Benchmark
import Foundation
import TernSQLite

/// The SQLite layer's hot paths: reading a 10,000-row batch (integer, real, text, blob) through
/// a cursor, and binding and inserting a 10,000-row batch in one transaction. Both should allocate nothing per row beyond what SQLite itself does.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident],
        scalingFactor: .one,
        maxDuration: .seconds(2),
        maxIterations: 200,
        // Tolerances for `thresholds check`, which compares each run's p90 with Thresholds/.
        // The machine is shared and has 2 cores: time gets a wide margin, malloc counts a narrow one.
        thresholds: [
            .mallocCountTotal: .init(relative: [.p90: 5], absolute: [.p90: 50]),
            .wallClock: .init(relative: [.p90: 25]),
            .peakMemoryResident: .init(relative: [.p90: 10]),
        ]
    )

    let batch = 10_000

    // Names stay shell-safe: the threshold files are named after them.
    Benchmark("CursorRead10000Rows") { benchmark, connection in
        for _ in benchmark.scaledIterations {
            let statement = try connection.cachedStatement("SELECT Z_PK, ZPRICE, ZTITLE, ZCOVER FROM ZBOOK WHERE Z_PK > ? ORDER BY Z_PK LIMIT ?")
            try statement.bind(Int64(0), at: 1)
            try statement.bind(Int64(batch), at: 2)
            var rows = statement.rows()
            var checksum = 0.0
            while let row = try rows.next() {
                checksum += Double(row.int64(at: 0)) + row.double(at: 1)
                checksum += Double(row.withUnsafeText(at: 2) { $0?.count ?? 0 })
                checksum += Double(row.withUnsafeBlob(at: 3) { $0?.count ?? 0 })
            }
            blackHole(checksum)
        }
    } setup: {
        try makeSourceStore(rows: batch)
    }

    Benchmark("BindInsert10000Rows") { benchmark, connection in
        for _ in benchmark.scaledIterations {
            try connection.execute("DELETE FROM ZBOOK")
            try connection.transaction(.immediate) {
                let insert = try connection.cachedStatement("INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZPRICE, ZTITLE, ZCOVER) VALUES (?, 1, 1, ?, ?, ?)")
                let cover = [UInt8](repeating: 7, count: 32)
                try cover.withUnsafeBytes { coverBytes in
                    for key in 1...batch {
                        try insert.bind(Int64(key), at: 1)
                        try insert.bind(Double(key) * 1.04, at: 2)
                        try insert.bind("Book title", at: 3)
                        try insert.bindBlob(coverBytes, at: 4)
                        try insert.run()
                    }
                }
            }
        }
    } setup: {
        try makeSourceStore(rows: 0)
    }
}

/// A fresh on-disk store with `rows` books, in the temporary directory.
func makeSourceStore(rows: Int) throws -> Connection {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tern-bench-\(UUID().uuidString).sqlite").path
    let connection = try Connection(path: path)
    try connection.setJournalMode(.wal)
    try connection.execute("""
        CREATE TABLE ZBOOK (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZPRICE FLOAT, ZTITLE VARCHAR, ZCOVER BLOB);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
        INSERT INTO ZBOOK SELECT i, 1, 1, i * 0.25, 'Book number ' || i, randomblob(32) FROM n WHERE \(rows) > 0;
        """)
    return connection
}
