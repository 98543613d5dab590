import Testing
import TernSQLite

@Suite("Statements are finalized exactly once")
struct StatementLifetimeTests {
    @Test("releasing a statement finalizes it")
    func releaseFinalizes() throws {
        let connection = try Connection(path: ":memory:")
        #expect(connection.liveStatementCount == 0)
        do {
            let statement = try connection.prepare("SELECT 1")
            #expect(try statement.step())
            #expect(connection.liveStatementCount == 1)
        }
        #expect(connection.liveStatementCount == 0)
    }

    @Test("finalize() then release does not finalize twice, and use after finalize throws")
    func explicitFinalize() throws {
        let connection = try Connection(path: ":memory:")
        var statement: Statement? = try connection.prepare("SELECT 1")
        let other = try connection.prepare("SELECT 2")
        statement?.finalize()
        statement?.finalize()
        #expect(statement?.isFinalized == true)
        #expect(connection.liveStatementCount == 1)
        let error = try #require(throws: SQLiteError.self) { try statement?.step() }
        #expect(error.code == .SQLITE_MISUSE)
        statement = nil  // deinit must not finalize a second time: `other` still works
        #expect(try other.step())
        #expect(other.row.int64(at: 0) == 2)
        #expect(connection.liveStatementCount == 1)
    }

    @Test("close() refuses while a statement is alive, and succeeds once it is released")
    func closeWithLiveStatement() throws {
        let connection = try Connection(path: ":memory:")
        var statement: Statement? = try connection.prepare("SELECT 1")
        let error = try #require(throws: SQLiteError.self) { try connection.close() }
        #expect(error.code == .SQLITE_BUSY)
        #expect(try statement?.step() == true)  // still open and usable
        statement = nil
        try connection.close()
        #expect(throws: SQLiteError.self) { try connection.execute("SELECT 1") }
    }

    @Test("a statement outliving its connection object stays valid")
    func statementOutlivesConnection() throws {
        var connection: Connection? = try Connection(path: ":memory:")
        let statement = try connection!.prepare("SELECT 7")
        connection = nil  // sqlite3_close_v2 waits for the statement
        #expect(try statement.step())
        #expect(statement.row.int64(at: 0) == 7)
    }

    @Test("a cursor that reached the end leaves its statement ready to bind and run again")
    func cursorResetsAtEnd() throws {
        let connection = try Connection(path: ":memory:")
        let statement = try connection.prepare("SELECT ? * 2")
        for value in [Int64(3), 5] {
            try statement.bind(value, at: 1)
            var rows = statement.rows()
            #expect(try rows.next()?.int64(at: 0) == value * 2)
            #expect(try rows.next() == nil)
            #expect(try rows.next() == nil)
        }
    }

    @Test("the statement cache returns the same statement, reset and cleared, and close finalizes it")
    func statementCache() throws {
        let connection = try Connection(path: ":memory:", configuration: .init(statementCacheCapacity: 2))
        let first = try connection.cachedStatement("SELECT ?")
        try first.bind(Int64(5), at: 1)
        #expect(try first.step())
        let again = try connection.cachedStatement("SELECT ?")
        #expect(first === again)
        #expect(try again.step())
        #expect(again.row.isNull(at: 0))  // bindings were cleared
        _ = try connection.cachedStatement("SELECT 2")
        _ = try connection.cachedStatement("SELECT 3")  // evicts "SELECT ?", the least recently used
        #expect(try connection.cachedStatement("SELECT ?") !== first)
        #expect(connection.liveStatementCount == 3)  // 2 cached + `first`, held here
        try? connection.close()
        #expect(connection.liveStatementCount <= 1)
    }
}
