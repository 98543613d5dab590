import Foundation
import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore

/// The source's digest read whole and read in ranges of rowids must be one and the same: the
/// digest recorded by one run is compared with one read by the next.
@Suite("The store digest, read in rowid ranges")
struct StoreDigestTests {
    /// A store whose tables have gaps, negative and huge keys, every storage class, a table
    /// without rowids and one whose column hides the rowid.
    private func awkwardStore() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tern-digest-\(UUID().uuidString).sqlite").path
        let connection = try Connection(path: path)
        try connection.execute("CREATE TABLE ZTHING (Z_PK INTEGER PRIMARY KEY, ZNAME VARCHAR, ZDATA BLOB, ZVALUE FLOAT)")
        try connection.execute(
            """
            WITH RECURSIVE n(i) AS (SELECT -40 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
            INSERT INTO ZTHING SELECT i * 3, CASE WHEN i % 7 = 0 THEN NULL ELSE 'name ' || i END, CASE WHEN i % 5 = 0 THEN x'00ff' END, i / 3.0 FROM n
            """)
        try connection.execute("CREATE TABLE ZEXTREME (Z_PK INTEGER PRIMARY KEY, ZNAME VARCHAR)")
        try connection.execute("INSERT INTO ZEXTREME VALUES (9223372036854775807, 'last'), (0, 'middle'), (-9223372036854775807, 'first')")
        try connection.execute("CREATE TABLE ZSPARSE (Z_PK INTEGER PRIMARY KEY, ZNAME VARCHAR)")
        try connection.execute("INSERT INTO ZSPARSE VALUES (1, 'a'), (5000000000, 'b'), (5000000001, 'c'), (9000000000000, 'd')")
        try connection.execute("CREATE TABLE ZKEYED (ZKEY TEXT PRIMARY KEY, ZVALUE INTEGER) WITHOUT ROWID")
        try connection.execute("INSERT INTO ZKEYED VALUES ('x', 1), ('y', 2)")
        try connection.execute("CREATE TABLE ZHIDING (rowid TEXT, ZVALUE INTEGER)")
        try connection.execute("INSERT INTO ZHIDING VALUES (NULL, 1), ('text', 2), ('3', 3)")
        try connection.execute("CREATE TABLE ZEMPTY (Z_PK INTEGER PRIMARY KEY)")
        try connection.close()
        return path
    }

    @Test("every range size gives the digest of the tables read whole, with every row counted")
    func rangesAddUp() throws {
        let store = try awkwardStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let whole = try StoreDigest.read(storeAt: store, workers: 1, rowidsPerScan: .max).digest
        for size: Int64 in [1, 7, 100, 1000, 1 << 18] {
            #expect(try StoreDigest.read(storeAt: store, workers: 2, rowidsPerScan: size).digest == whole, "ranges of \(size)")
        }
        #expect(whole.tables["ZTHING"]?.rows == 3041)
        #expect(whole.tables["ZEXTREME"]?.rows == 3)
        #expect(whole.tables["ZSPARSE"]?.rows == 4)
        #expect(whole.tables["ZKEYED"]?.rows == 2)
        #expect(whole.tables["ZHIDING"]?.rows == 3)
        #expect(whole.tables["ZEMPTY"] == StoreDigest.Table(rows: 0, checksum: 0))
    }

    @Test("a table is cut into at most 64 ranges, open at both ends; the unsplittable are read whole")
    func ranges() throws {
        let store = try awkwardStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let connection = try Connection(path: store, configuration: .init(mode: .readOnly))
        defer { try? connection.close() }
        let ranges = try RowidRanges.conditions(of: "ZSPARSE", columns: ["Z_PK", "ZNAME"], in: connection, rowidsPerScan: 1)
        #expect(ranges.count == 64)
        #expect(ranges.first?.hasPrefix("rowid < ") == true && ranges.last?.hasPrefix("rowid >= ") == true)
        #expect(ranges.dropFirst().dropLast().allSatisfy { $0.contains(" AND rowid < ") })
        #expect(try RowidRanges.conditions(of: "ZTHING", columns: ["Z_PK"], in: connection, rowidsPerScan: 1000).count == 9)
        // The keys span all of Int64: their distance overflows.
        #expect(try RowidRanges.conditions(of: "ZEXTREME", columns: ["Z_PK"], in: connection, rowidsPerScan: 1) == ["1"])
        #expect(try RowidRanges.conditions(of: "ZKEYED", columns: ["ZKEY", "ZVALUE"], in: connection, rowidsPerScan: 1) == ["1"])
        #expect(try RowidRanges.conditions(of: "ZHIDING", columns: ["rowid", "ZVALUE"], in: connection, rowidsPerScan: 1) == ["1"])
        #expect(try RowidRanges.conditions(of: "ZEMPTY", columns: ["Z_PK"], in: connection, rowidsPerScan: 1) == ["1"])
    }

    @Test("a value changed inside one range, or a row added past the last, changes the digest")
    func changesAreSeen() throws {
        let store = try awkwardStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let before = try StoreDigest.read(storeAt: store, workers: 2, rowidsPerScan: 100).digest
        let connection = try Connection(path: store)
        try connection.execute("UPDATE ZSPARSE SET ZNAME = 'B' WHERE Z_PK = 5000000000")
        try connection.execute("UPDATE ZTHING SET ZVALUE = ZVALUE + 1 WHERE Z_PK = 3000")
        try connection.close()
        let after = try StoreDigest.read(storeAt: store, workers: 2, rowidsPerScan: 100).digest
        #expect(after.changes(since: before) == ["ZSPARSE: values changed (4 rows)", "ZTHING: values changed (3041 rows)"])
    }
}
