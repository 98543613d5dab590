import Foundation
import Testing
import TernSQLite

@Suite("Errors carry the extended code, the message and the SQL")
struct ErrorTests {
    @Test("a syntax error names the SQL")
    func syntaxError() throws {
        let connection = try Connection(path: ":memory:")
        let error = try #require(throws: SQLiteError.self) { try connection.prepare("SELEC 1") }
        #expect(error.code == .SQLITE_ERROR)
        #expect(error.sql == "SELEC 1")
        #expect(error.message.contains("syntax error"))
        #expect(error.description.contains("SELEC 1"))
    }

    @Test("a quoted name that names no column is an error, never a string literal")
    func doubleQuotedStringsAreOff() throws {
        let connection = try Connection(path: ":memory:")
        try connection.execute("CREATE TABLE t (a BLOB)")
        try connection.execute("INSERT INTO t VALUES (x'00')")
        // With SQLite's default, typeof("missing") is 'text': a store lacking a column would
        // look like a store holding text in it.
        let error = try #require(throws: SQLiteError.self) { try connection.prepare(#"SELECT typeof("missing") FROM t"#) }
        #expect(error.message.contains("no such column: missing"))
        #expect(throws: SQLiteError.self) { try connection.execute(#"CREATE INDEX i ON t ("nosuch")"#) }
    }

    @Test("a constraint failure has the extended code and matches its family")
    func constraint() throws {
        let connection = try Connection(path: ":memory:")
        try connection.execute("CREATE TABLE t (a UNIQUE)")
        try connection.execute("INSERT INTO t VALUES (1)")
        let error = try #require(throws: SQLiteError.self) { try connection.execute("INSERT INTO t VALUES (?)", 1) }
        #expect(error.code == .SQLITE_CONSTRAINT_UNIQUE)
        #expect(error.code.primary == .SQLITE_CONSTRAINT)
        switch error.code {
        case .SQLITE_CONSTRAINT: break
        default: Issue.record("SQLITE_CONSTRAINT should match SQLITE_CONSTRAINT_UNIQUE")
        }
        switch error.code {
        case .SQLITE_CONSTRAINT_PRIMARYKEY: Issue.record("an extended pattern must match exactly")
        default: break
        }
        #expect(error.message.contains("UNIQUE constraint failed"))
    }

    @Test("a script error names the one statement that failed")
    func scriptError() throws {
        let connection = try Connection(path: ":memory:")
        let error = try #require(throws: SQLiteError.self) {
            try connection.execute("CREATE TABLE a (x); INSERT INTO nowhere VALUES (1); CREATE TABLE b (y);")
        }
        #expect(error.sql == "INSERT INTO nowhere VALUES (1)")
        #expect(try connection.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'b'") == .integer(0))
    }

    @Test("a failed step is an error, never the end of the rows")
    func failedStepIsNotEnd() throws {
        let connection = try Connection(path: ":memory:")
        try connection.execute("CREATE TABLE t (x INTEGER PRIMARY KEY); INSERT INTO t VALUES (1), (2), (3), (4), (5), (6)")
        // x - Int64.max - 6 is Int64.min for x = 5 only, and abs(Int64.min) overflows at run time.
        let statement = try connection.prepare("SELECT x, abs(x - 9223372036854775807 - 6) FROM t ORDER BY x")
        var rows = statement.rows()
        var seen: [Int64] = []
        let error = try #require(throws: SQLiteError.self) {
            while let row = try rows.next() { seen.append(row.int64(at: 0)) }
        }
        #expect(seen == [1, 2, 3, 4])
        #expect(error.message.contains("integer overflow"))
        #expect(error.sql?.contains("abs(") == true)
        let again = try #require(throws: SQLiteError.self) { try rows.next() }
        #expect(again == error)  // asking again neither restarts nor ends the rows
    }

    @Test("writing through a read-only connection fails with SQLITE_READONLY")
    func readOnly() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        try Connection(path: path).execute("CREATE TABLE t (x)")
        let reader = try Connection(path: path, configuration: .init(mode: .readOnly))
        #expect(reader.isReadOnly)
        let error = try #require(throws: SQLiteError.self) { try reader.execute("INSERT INTO t VALUES (1)") }
        #expect(error.code.primary == .SQLITE_READONLY)
    }

    @Test("opening a missing file read-only fails with SQLITE_CANTOPEN naming the path")
    func missingFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("absent.sqlite")
        let error = try #require(throws: SQLiteError.self) {
            try Connection(path: path, configuration: .init(mode: .readOnly))
        }
        #expect(error.code == .SQLITE_CANTOPEN)
        #expect(error.message.contains(path))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("a file that is not a database fails with SQLITE_NOTADB on first read")
    func notADatabase() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("text.sqlite")
        try Data(String(repeating: "not a database ", count: 100).utf8).write(to: URL(fileURLWithPath: path))
        let connection = try Connection(path: path, configuration: .init(mode: .readOnly))
        let error = try #require(throws: SQLiteError.self) { try connection.scalar("SELECT count(*) FROM sqlite_master") }
        #expect(error.code == .SQLITE_NOTADB)
    }

    @Test("binding the wrong number of values is SQLITE_RANGE")
    func wrongArity() throws {
        let connection = try Connection(path: ":memory:")
        let error = try #require(throws: SQLiteError.self) { try connection.execute("SELECT ?, ?", 1) }
        #expect(error.code == .SQLITE_RANGE)
    }

    @Test("prepare refuses a second statement instead of ignoring it")
    func prepareTakesOneStatement() throws {
        let connection = try Connection(path: ":memory:")
        #expect(throws: SQLiteError.self) { try connection.prepare("SELECT 1; DROP TABLE x") }
        #expect(try connection.prepare("SELECT 1;  \n").columnCount == 1)
    }
}
