import Testing
import TernSQLite

@Suite("tern_checksum: order-independent row checksums, as columns store the values")
struct ChecksumTests {
    let connection: Connection

    init() throws {
        connection = try Connection(path: ":memory:")
        try connection.registerChecksum()
    }

    /// Awkward values: numbers at the edges, numeric-looking text, text that is not a number,
    /// blobs, NULL.
    static let values: [SQLiteValue] = [
        .null, .integer(0), .integer(-1), .integer(1), .integer(Int64.max), .integer(Int64.min), .integer(9_007_199_254_740_993),
        .real(0), .real(-0.0), .real(3), .real(3.5), .real(-2.25), .real(1e20), .real(1e300), .real(-1e-300), .real(9.2233720368547758e18), .real(.infinity),
        .text(""), .text("12"), .text(" 12 "), .text("12abc"), .text("1e3"), .text("3.0"), .text("0x10"), .text("abc"), .text("Ünïcødé"),
        .text("-0"), .text("9223372036854775808"), .blob([]), .blob([0, 255, 7]), .blob(Array("12".utf8)),
    ]

    /// Core Data's declared column types, and SQLite's other affinities.
    static let declaredTypes = ["INTEGER", "VARCHAR", "FLOAT", "TIMESTAMP", "DECIMAL", "BLOB", ""]

    @Test("the checksum of values about to be stored equals the checksum of the stored column, for every affinity", arguments: declaredTypes)
    func storedValuesMatch(declaredType: String) throws {
        let affinity = String(ColumnAffinity(declaredType: declaredType).rawValue)
        try connection.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, c \(declaredType))")
        for (index, value) in Self.values.enumerated() {
            try connection.execute("INSERT INTO t (k, c) VALUES (?, ?)", Int64(index), value)
            let direct = try connection.scalar("SELECT tern_checksum(?, ?)", "\(affinity)", value)
            let stored = try connection.scalar("SELECT tern_checksum(?, c) FROM t WHERE k = ?", "\(affinity)", Int64(index))
            #expect(direct == stored, "value \(value.sqlLiteral) in a \(declaredType) column")
        }
    }

    @Test("rows in any order give the same checksum; one changed, missing or duplicated value changes it")
    func orderAndChanges() throws {
        try connection.execute("CREATE TABLE a (x, y)")
        try connection.execute("CREATE TABLE b (x, y)")
        for index in 0..<1000 {
            try connection.execute("INSERT INTO a VALUES (?, ?)", Int64(index), "row \(index)")
            try connection.execute("INSERT INTO b VALUES (?, ?)", Int64(999 - index), "row \(999 - index)")
        }
        func checksum(_ table: String) throws -> SQLiteValue? {
            try connection.scalar("SELECT tern_checksum('NT', x, y) FROM \(table)")
        }
        #expect(try checksum("a") == checksum("b"))
        try connection.execute("UPDATE b SET y = 'row 5 ' WHERE x = 5")
        #expect(try checksum("a") != checksum("b"))
        try connection.execute("UPDATE b SET y = 'row 5' WHERE x = 5")
        try connection.execute("INSERT INTO b SELECT x, y FROM b WHERE x = 7")
        #expect(try checksum("a") != checksum("b"))
        try connection.execute("DELETE FROM b WHERE rowid = (SELECT max(rowid) FROM b)")
        #expect(try checksum("a") == checksum("b"))
        // Values swapped between two rows: same multiset of values, different rows.
        try connection.execute("UPDATE b SET y = CASE x WHEN 1 THEN 'row 2' WHEN 2 THEN 'row 1' END WHERE x IN (1, 2)")
        #expect(try checksum("a") != checksum("b"))
        // Values swapped between two columns of one row.
        #expect(try connection.scalar("SELECT tern_checksum('BB', 1, 2)") != connection.scalar("SELECT tern_checksum('BB', 2, 1)"))
    }

    @Test("no rows give 0; NULL differs from 0, '' and an empty blob")
    func emptyAndNull() throws {
        try connection.execute("CREATE TABLE e (x)")
        #expect(try connection.scalar("SELECT tern_checksum('B', x) FROM e") == .integer(0))
        let null = try connection.scalar("SELECT tern_checksum('B', NULL)")
        for other in ["0", "''", "x''"] {
            #expect(try connection.scalar("SELECT tern_checksum('B', \(other))") != null)
        }
    }

    @Test("declared types map to SQLite's affinities")
    func affinities() {
        #expect(ColumnAffinity(declaredType: "INTEGER") == .numeric)
        #expect(ColumnAffinity(declaredType: "VARCHAR(255)") == .text)
        #expect(ColumnAffinity(declaredType: "FLOAT") == .real)
        #expect(ColumnAffinity(declaredType: "TIMESTAMP") == .numeric)
        #expect(ColumnAffinity(declaredType: "BLOB") == .blob)
        #expect(ColumnAffinity(declaredType: "") == .blob)
        #expect(ColumnAffinity(declaredType: "POINT") == .numeric)  // SQLite's rule 5
    }
}
