import Foundation
import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore
import TernSQLite

/// Stage 1's batches: key ranges in key order, bounded in objects and, where values may be
/// large, in bytes — never empty, however large one object is.
@Suite("Source batches")
struct SourceBatchesTests {
    @Test("weighed batches hold at most the budget, or the one object that alone weighs more")
    func byteBudget() throws {
        let directory = try TemporaryDirectory()
        let source = try Connection(path: directory.path("src.sqlite"))
        try source.execute("CREATE TABLE ZT (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, W INTEGER)")
        for (key, weight) in [10, 10, 50, 5, 5, 5, 0, 30].enumerated() {
            try source.execute("INSERT INTO ZT VALUES (?, 1, ?)", Int64(key + 1), Int64(weight))
        }
        try source.execute("INSERT INTO ZT VALUES (100, 2, 1)")  // another entity: not selected
        try source.close()
        let connection = try Connection(path: ":memory:")
        try connection.execute("ATTACH DATABASE \(quoteLiteral(directory.path("src.sqlite"))) AS src")
        func ranges(size: Int, weight: (sql: String, budget: Int)?) throws -> [[Int64]] {
            var batches = try SourceBatches(
                connection: connection, table: "ZT", selection: SQLFragment("s.\"Z_ENT\" = 1"), size: size, weight: weight, after: 0)
            var found: [[Int64]] = []
            while let (after, through) = try batches.next() { found.append([after, through]) }
            #expect(try batches.total() == 8)
            return found
        }
        #expect(try ranges(size: 100, weight: ("s.W", 20)) == [[0, 2], [2, 3], [3, 7], [7, 8]])
        #expect(try ranges(size: 2, weight: ("s.W", 1000)) == [[0, 2], [2, 4], [4, 6], [6, 8]])
        #expect(try ranges(size: 3, weight: nil) == [[0, 3], [3, 6], [6, 8]])
    }

    @Test("every row an object and the keys dense: batches are the next keys, no key counted; sparse keys, or a resume, are counted as before")
    func byKeyRange() throws {
        let directory = try TemporaryDirectory()
        let source = try Connection(path: directory.path("src.sqlite"))
        try source.execute("CREATE TABLE ZDENSE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER)")
        // Keys 5…14 with a gap at 9: dense enough to cut by arithmetic.
        for key in [5, 6, 7, 8, 10, 11, 12, 13, 14] { try source.execute("INSERT INTO ZDENSE VALUES (?, 1)", Int64(key)) }
        try source.execute("CREATE TABLE ZSPARSE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER)")
        for key in [1, 2, 1_000_000_000] { try source.execute("INSERT INTO ZSPARSE VALUES (?, 1)", Int64(key)) }
        try source.close()
        let connection = try Connection(path: ":memory:")
        try connection.execute("ATTACH DATABASE \(quoteLiteral(directory.path("src.sqlite"))) AS src")
        func ranges(_ table: String, size: Int, after: Int64 = 0) throws -> [[Int64]] {
            var batches = try SourceBatches(connection: connection, table: table, selection: SQLFragment("1"), size: size, after: after)
            var found: [[Int64]] = []
            while let (after, through) = try batches.next() { found.append([after, through]) }
            return found
        }
        #expect(try ranges("ZDENSE", size: 4) == [[4, 8], [8, 12], [12, 14]])
        #expect(try ranges("ZDENSE", size: 4, after: 10) == [[10, 14]])
        // A billion keys apart: counted, or there would be 250 million empty batches.
        #expect(try ranges("ZSPARSE", size: 4) == [[0, 1_000_000_000]])
        #expect(try ranges("ZSPARSE", size: 2) == [[0, 2], [2, 1_000_000_000]])
    }
}
