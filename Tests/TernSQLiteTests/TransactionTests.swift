import Testing
import TernSQLite

@Suite("Transactions and savepoints")
struct TransactionTests {
    struct Failure: Error {}

    private func count(_ connection: Connection) throws -> Int64? {
        try connection.scalar("SELECT count(*) FROM t")?.int64
    }

    @Test("a transaction commits when its body returns and rolls back when it throws", arguments: [TransactionKind.deferred, .immediate, .exclusive])
    func commitAndRollback(kind: TransactionKind) throws {
        let connection = try Connection(path: ":memory:")
        try connection.execute("CREATE TABLE t (x)")
        try connection.transaction(kind) { try connection.execute("INSERT INTO t VALUES (1)") }
        #expect(throws: Failure.self) {
            try connection.transaction(kind) {
                try connection.execute("INSERT INTO t VALUES (2)")
                throw Failure()
            }
        }
        #expect(try count(connection) == 1)
        #expect(connection.isAutocommit)
    }

    @Test("savepoints nest: an inner failure undoes only the inner work")
    func nestedSavepoints() throws {
        let connection = try Connection(path: ":memory:")
        try connection.execute("CREATE TABLE t (x)")
        try connection.transaction {
            try connection.execute("INSERT INTO t VALUES (1)")
            try connection.savepoint("outer") {
                try connection.execute("INSERT INTO t VALUES (2)")
                try? connection.savepoint("inner \"quoted\"") {
                    try connection.execute("INSERT INTO t VALUES (3)")
                    throw Failure()
                }
            }
        }
        #expect(try connection.scalar("SELECT group_concat(x) FROM t") == .text("1,2"))
    }

    @Test("an IMMEDIATE transaction holds the write lock: a second writer gets SQLITE_BUSY")
    func immediateLocks() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("lock.sqlite")
        let first = try Connection(path: path)
        try first.setJournalMode(.wal)
        try first.execute("CREATE TABLE t (x)")
        let second = try Connection(path: path, configuration: .init(busyTimeout: .zero))
        try first.transaction(.immediate) {
            let error = try #require(throws: SQLiteError.self) { try second.beginTransaction(.immediate) }
            #expect(error.code.primary == .SQLITE_BUSY)
            #expect(try count(second) == 0)  // readers still read in WAL mode
        }
    }

    @Test("pragmas read and set; names are checked")
    func pragmas() throws {
        let directory = try TemporaryDirectory()
        let connection = try Connection(path: directory.path("p.sqlite"))
        try connection.setJournalMode(.wal)
        #expect(try connection.pragma("journal_mode") == .text("wal"))
        try connection.setPragma("user_version", .integer(7))
        #expect(try connection.pragma("user_version") == .integer(7))
        let error = try #require(throws: SQLiteError.self) { try connection.pragma("user_version; DROP TABLE x") }
        #expect(error.code == .SQLITE_MISUSE)
    }
}
