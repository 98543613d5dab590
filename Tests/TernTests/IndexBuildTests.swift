import Foundation
import Synchronization
import Testing
import TernLoop
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
import TernSQLite
import TernTesting

/// The destination's indexes built beside verification: on a WAL store being read, each
/// committed on its own, best effort (what it did not make, the step's `finish` makes).
@Suite("Indexes built beside verification")
struct IndexBuildTests {
    /// A WAL store of `rows` rows whose `code` repeats once.
    private func store(in directory: TemporaryDirectory, rows: Int) throws -> Connection {
        let connection = try Connection(path: directory.path("store.sqlite"))
        try connection.setJournalMode(.wal)
        try connection.execute("CREATE TABLE ZITEM (Z_PK INTEGER PRIMARY KEY, ZCODE INTEGER, ZNAME VARCHAR)")
        try connection.execute(
            "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < \(rows)) INSERT INTO ZITEM SELECT k, k % \(rows - 1), 'item ' || k FROM n"
        )
        return connection
    }

    private func indexes(_ connection: Connection) throws -> [String] {
        // `rows` gives SQL literals: the names without their quotes.
        try rows(connection, "SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name").map { String($0.dropFirst().dropLast()) }
    }

    @Test("built while another connection reads the store through a long scan; the reader sees the rows, the store gets the indexes")
    func besideAReader() throws {
        let directory = try TemporaryDirectory()
        let connection = try store(in: directory, rows: 200_000)
        // A read transaction open across the whole build, as verification's scans are.
        let reader = try Connection(path: connection.path, configuration: .init(mode: .readOnly))
        try reader.execute("BEGIN")
        #expect(try reader.scalar("SELECT count(*) FROM ZITEM") == .integer(200_000))
        let build = try IndexBuild(
            store: connection.path,
            statements: ["CREATE INDEX IF NOT EXISTS ZITEM_ZCODE_INDEX ON ZITEM (ZCODE)", "CREATE INDEX IF NOT EXISTS ZITEM_ZNAME_INDEX ON ZITEM (ZNAME)"],
            threads: 2, beside: true, shouldStop: { false })
        build.waitForEnd()
        #expect(try reader.scalar("SELECT count(*) FROM ZITEM") == .integer(200_000))
        try reader.execute("COMMIT")
        #expect(try indexes(connection) == ["ZITEM_ZCODE_INDEX", "ZITEM_ZNAME_INDEX"])
        #expect(try connection.scalar("PRAGMA integrity_check") == .text("ok"))
    }

    @Test("a statement that fails (a unique index over repeated values) ends the build: the indexes made before it stay, the rest is left to finish")
    func failureEndsTheBuild() throws {
        let directory = try TemporaryDirectory()
        let connection = try store(in: directory, rows: 1_000)
        let build = try IndexBuild(
            store: connection.path,
            statements: [
                "CREATE INDEX ZITEM_ZNAME_INDEX ON ZITEM (ZNAME)", "CREATE UNIQUE INDEX ZITEM_ZCODE_UNIQUE ON ZITEM (ZCODE)",
                "CREATE INDEX ZITEM_ZCODE_INDEX ON ZITEM (ZCODE)",
            ],
            threads: 2, beside: true, shouldStop: { false })
        build.waitForEnd()
        #expect(try indexes(connection) == ["ZITEM_ZNAME_INDEX"])
        // Completing the build makes the statement fail again, now reported.
        #expect(throws: SQLiteError.self) { try build.completeAll() }
    }

    @Test("without a build beside, completing it makes every index on its own connection, each committed on its own")
    func completeAllWithoutBeside() throws {
        let directory = try TemporaryDirectory()
        let connection = try store(in: directory, rows: 1_000)
        let build = try IndexBuild(
            store: connection.path,
            statements: ["CREATE INDEX IF NOT EXISTS ZITEM_ZNAME_INDEX ON ZITEM (ZNAME)", "CREATE INDEX IF NOT EXISTS ZITEM_ZCODE_INDEX ON ZITEM (ZCODE)"],
            threads: 1, beside: false, shouldStop: { false })
        #expect(try indexes(connection).isEmpty, "nothing is built before it is asked for")
        try build.completeAll()
        #expect(try indexes(connection) == ["ZITEM_ZCODE_INDEX", "ZITEM_ZNAME_INDEX"])
    }

    @Test("asked to finish, the build makes the index it is making and starts no other")
    func finishCurrentKeepsTheIndexInProgress() throws {
        let directory = try TemporaryDirectory()
        let connection = try store(in: directory, rows: 300_000)
        // The build asks `shouldStop` before each statement and, through its progress handler,
        // all along one: a few calls say the first index is being made.
        let calls = Atomic<Int>(0)
        let build = try IndexBuild(
            store: connection.path,
            statements: ["CREATE INDEX ZITEM_ZNAME_INDEX ON ZITEM (ZNAME)", "CREATE INDEX ZITEM_ZCODE_INDEX ON ZITEM (ZCODE)"],
            threads: 1, beside: true,
            shouldStop: {
                calls.add(1, ordering: .relaxed)
                return false
            })
        Latch.until(timeout: 30) { calls.load(ordering: .relaxed) >= 3 }
        build.finishCurrent()
        #expect(try indexes(connection) == ["ZITEM_ZNAME_INDEX"])
        #expect(try connection.scalar("PRAGMA integrity_check") == .text("ok"))
    }

    @Test("a stop asked for interrupts the build, and the index it was making is not kept")
    func stopRollsBack() throws {
        let directory = try TemporaryDirectory()
        let connection = try store(in: directory, rows: 20_000)
        let build = try IndexBuild(
            store: connection.path, statements: ["CREATE INDEX ZITEM_ZNAME_INDEX ON ZITEM (ZNAME)"], threads: 2, beside: true, shouldStop: { true })
        build.stop()
        #expect(try indexes(connection).isEmpty)
    }
}
