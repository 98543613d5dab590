import Testing
import TernLoop
import TernSQLite

@Suite("Streaming cursor")
struct CursorMemoryTests {
    @Test("a cursor over 1,000,000 rows runs in constant memory")
    func millionRows() throws {
        let directory = try TemporaryDirectory()
        let connection = try Connection(path: directory.path("big.sqlite"))
        try connection.execute(
            """
            CREATE TABLE t (id INTEGER PRIMARY KEY, title TEXT, price REAL, payload BLOB);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000)
            INSERT INTO t SELECT i, 'Book number ' || i, i * 0.25, randomblob(32) FROM n;
            """)

        let statement = try connection.prepare("SELECT id, title, price, payload FROM t ORDER BY id")
        var rows = statement.rows()
        var count = 0
        var titleBytes = 0
        var residentAfterWarmUp = 0
        var residentHighest = 0
        while let row = try rows.next() {
            count += 1
            titleBytes += row.withUnsafeText(at: 1) { $0?.count ?? 0 }
            _ = row.double(at: 2)
            _ = row.withUnsafeBlob(at: 3) { $0?.count }
            if count == 100_000 {
                residentAfterWarmUp = try ProcessStats.residentMemory()
            } else if count > 100_000, count % 100_000 == 0 {
                residentHighest = max(residentHighest, try ProcessStats.residentMemory())
            }
        }
        #expect(count == 1_000_000)
        #expect(titleBytes > 12_000_000)
        let growth = residentHighest - residentAfterWarmUp
        // Reading 900,000 more rows (~60 MB of data) may not grow the process by more than SQLite's
        // cache and what tests running beside this one in the same process allocate meanwhile
        // (measured up to 8.6 MiB on a loaded machine); holding the rows would grow it by 60 MB.
        #expect(growth < 16 * 1024 * 1024, "resident memory grew by \(growth) bytes over 900,000 rows")
    }
}
