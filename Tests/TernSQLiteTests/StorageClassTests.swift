import Testing
import TernSQLite

@Suite("Every storage class round-trips")
struct StorageClassTests {
    let connection: Connection

    init() throws {
        connection = try Connection(path: ":memory:")
        try connection.execute("CREATE TABLE t (v)")
    }

    /// Writes one value through binding and reads it back through every reading path.
    private func roundTrip(_ value: SQLiteValue) throws -> SQLiteValue {
        try connection.execute("DELETE FROM t")
        try connection.execute("INSERT INTO t (v) VALUES (?)", value)
        let statement = try connection.prepare("SELECT v, typeof(v) FROM t")
        var rows = statement.rows()
        let row = try #require(try rows.next())
        let read = row.value(at: 0)
        #expect(row.storageClass(at: 0) == value.storageClass)
        #expect(
            row.text(at: 1)
                == ["null", "integer", "real", "text", "blob"][[StorageClass.null, .integer, .real, .text, .blob].firstIndex(of: value.storageClass)!])
        #expect(try rows.next() == nil)
        return read
    }

    @Test("NULL stays NULL")
    func null() throws {
        #expect(try roundTrip(.null) == .null)
    }

    @Test("integers keep every bit", arguments: [Int64.min, Int64.min + 1, -1, 0, 1, Int64(Int32.max) + 1, Int64.max])
    func integers(_ value: Int64) throws {
        #expect(try roundTrip(.integer(value)) == .integer(value))
    }

    @Test(
        "reals keep every bit",
        arguments: [0.0, -0.0, 1.5, -1e-308, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude, .infinity, -.infinity, 0.1 + 0.2])
    func reals(_ value: Double) throws {
        let read = try roundTrip(.real(value))
        #expect(read.double?.bitPattern == value.bitPattern)
    }

    @Test("NaN is rejected: SQLite would store NULL")
    func nanIsRejected() throws {
        let error = try #require(throws: SQLiteError.self) {
            try connection.execute("INSERT INTO t (v) VALUES (?)", Double.nan)
        }
        #expect(error.code == .SQLITE_MISMATCH)
        #expect(error.sql == "INSERT INTO t (v) VALUES (?)")
        #expect(try connection.scalar("SELECT count(*) FROM t") == .integer(0))
    }

    @Test("text: empty, Unicode, embedded NUL, 100 kB", arguments: ["", "plain", "Zoë 👩‍🔬 中文", "a\u{0}b", "100 kB"])
    func text(_ sample: String) throws {
        let value = sample == "100 kB" ? String(repeating: "x", count: 100_000) : sample
        #expect(try roundTrip(.text(value)) == .text(value))
    }

    @Test("blobs: empty is not NULL; sizes 0, 1, 4 and 70,000 bytes", arguments: [0, 1, 4, 70_000])
    func blobs(_ size: Int) throws {
        let value = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 255) }
        #expect(try roundTrip(.blob(value)) == .blob(value))
    }

    @Test("typed binds and reads agree with values")
    func typedAccess() throws {
        let insert = try connection.prepare("INSERT INTO t (v) VALUES (?)")
        try insert.bind(Int64(42), at: 1); try insert.run()
        try insert.bind("forty-two", at: 1); try insert.run()
        try [UInt8]([4, 2]).withUnsafeBytes { try insert.bindBlob($0, at: 1) }; try insert.run()
        try insert.bindNull(at: 1); try insert.run()
        try Optional<Int>.none.bind(to: insert, at: 1); try insert.run()
        try true.bind(to: insert, at: 1); try insert.run()

        let select = try connection.prepare("SELECT v FROM t ORDER BY rowid")
        var rows = select.rows()
        var seen: [SQLiteValue] = []
        while let row = try rows.next() { seen.append(row.value(at: 0)) }
        #expect(seen == [.integer(42), .text("forty-two"), .blob([4, 2]), .null, .null, .integer(1)])
    }

    @Test("text is lent without a copy, NULL as nil")
    func unsafeText() throws {
        try connection.execute("INSERT INTO t (v) VALUES ('hello'), (NULL), ('')")
        let statement = try connection.prepare("SELECT v FROM t ORDER BY rowid")
        var counts: [Int?] = []
        var rows = statement.rows()
        while let row = try rows.next() {
            counts.append(row.withUnsafeText(at: 0) { $0?.count })
        }
        #expect(counts == [5, nil, 0])
    }
}
