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

    @Test("two edits of a long text or blob never cancel out: bits 30 apart in successive words, and random pairs of flipped bits")
    func editsDoNotCancel() throws {
        func hash(_ value: SQLiteValue, _ affinity: String = "B") throws -> SQLiteValue? {
            try connection.scalar("SELECT tern_checksum(?, ?)", affinity, value)
        }
        // A multiplication alone carries a word's top bit nowhere: these hashed alike.
        var edited = [UInt8](repeating: 0, count: 16)
        edited[4] = 0x04
        edited[15] = 0x80
        #expect(try hash(.blob([UInt8](repeating: 0, count: 16))) != hash(.blob(edited)))
        #expect(try hash(.text("tsiihgxtqedlbvge"), "T") != hash(.text("tsiijgxtqedlbvg%"), "T"))
        var generator = SplitMix(state: 7)
        for _ in 0..<3000 {
            let count = 13 + Int(generator.next() % 28)
            let original = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            var changed = original
            for _ in 0..<2 { changed[Int(generator.next() % UInt64(count))] ^= 1 << (generator.next() % 8) }
            guard changed != original else { continue }
            #expect(try hash(.blob(original)) != hash(.blob(changed)), "\(original) → \(changed)")
        }
    }

    /// A reproducible stream of random words.
    private struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
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

    /// Links of lists `(owner, target, k1, k2)`: small and one-link partitions, NULL keys, a
    /// second key breaking ties of the first, negative numbers.
    private func links() throws {
        try connection.execute("CREATE TABLE l (owner INTEGER, target, k1, k2)")
        try connection.execute(
            """
            INSERT INTO l VALUES (3, 30, 2048, 1), (1, 11, NULL, 5), (1, 12, 1024, 2), (1, 13, 1024, 3), (2, 'twenty', -5, 0),
                                 (7, 70, NULL, NULL), (1, 14, NULL, 6), (3, 31, 1024, 9), (-4, 40, 0, 0), (-4, 41, 0, 1)
            """)
    }

    @Test("tern_ranked_checksum over rows in partition and key order equals tern_checksum over row_number(), at any slot and affinity")
    func rankedEqualsWindow() throws {
        try links()
        for (affinities, slot) in [("NNNN", 2), ("NNNN", 3), ("TNBN", 0), ("NRTB", 1), ("BBBB", 2)] {
            var columns = ["owner", "target", "k1", "k2"]
            columns[slot] = "row_number() OVER (PARTITION BY owner ORDER BY k1, k2)"
            let window = try connection.scalar(
                "SELECT tern_checksum('\(affinities)', c0, c1, c2, c3) FROM (SELECT \(columns.enumerated().map { "\($1) AS c\($0)" }.joined(separator: ", ")) FROM l)"
            )
            columns[slot] = "NULL"
            let ranked = try connection.scalar(
                """
                SELECT tern_ranked_checksum('\(affinities)', \(slot), 2, owner, k1, k2, \(columns.joined(separator: ", ")))
                FROM (SELECT * FROM l ORDER BY owner, k1, k2 LIMIT -1)
                """)
            #expect(ranked == window, "\(affinities) at \(slot)")
        }
        #expect(try connection.scalar("SELECT tern_ranked_checksum('N', 0, 0, owner, NULL) FROM l WHERE 0") == .integer(0))
    }

    @Test(
        "tern_ranked_checksum refuses rows out of order — a tie, a key or partition going back, a key or partition that is not an integer or NULL — and says so",
        arguments: [
            "SELECT * FROM l UNION ALL SELECT * FROM l WHERE owner = 7 ORDER BY owner, k1, k2 LIMIT -1",  // a tie
            "SELECT * FROM l ORDER BY owner, k1, k2 DESC LIMIT -1",
            "SELECT * FROM l ORDER BY owner, k1 DESC, k2 LIMIT -1",
            "SELECT * FROM l ORDER BY owner DESC, k1, k2 LIMIT -1",
            "SELECT owner, k1 AS target, CAST(k1 AS TEXT) AS k1, k2 FROM l ORDER BY owner, k1, k2 LIMIT -1",
            "SELECT target AS owner, target, k1, k2 FROM l ORDER BY target, k1, k2 LIMIT -1",
        ])
    func rankedRefusesDisorder(rows: String) throws {
        try links()
        let error = #expect(throws: SQLiteError.self) {
            try connection.scalar("SELECT tern_ranked_checksum('NNNN', 2, 2, owner, k1, k2, owner, target, NULL, k2) FROM (\(rows))")
        }
        #expect(error.map(RankedChecksum.isOutOfOrder) == true, "\(String(describing: error))")
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
