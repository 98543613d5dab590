import Foundation
import Testing
import TernSQLite

@Suite("Reads restricted to one database")
struct ReadScopeTests {
    @Test(
        "once restricted to src, a query reads src's tables; one reading main's, temp's, or an unqualified name is refused at prepare, even where src has a table of that name"
    )
    func onlyThatDatabase() throws {
        let directory = try TemporaryDirectory()
        let other = directory.path("other.sqlite")
        let setup = try Connection(path: other)
        try setup.execute(
            "CREATE TABLE t (a); INSERT INTO t VALUES (1), (2); CREATE TABLE shared (b); INSERT INTO shared VALUES (7); CREATE TABLE seq (id INTEGER PRIMARY KEY AUTOINCREMENT); INSERT INTO seq DEFAULT VALUES"
        )
        try setup.close()

        let connection = try Connection(path: ":memory:")
        try connection.execute("CREATE TABLE shared (b); INSERT INTO shared VALUES (99); CREATE TEMP TABLE scratch (c)")
        try connection.execute("ATTACH DATABASE '\(other)' AS src")
        // Before: an unqualified name finds main's table first, and src's when main has none.
        #expect(try connection.scalar("SELECT sum(a) FROM t") == .integer(3))
        try connection.restrictReads(to: "src")
        #expect(try connection.scalar("SELECT sum(a) FROM src.t") == .integer(3))
        #expect(try connection.scalar("SELECT count(*) FROM src.shared") == .integer(1))
        #expect(try connection.scalar("SELECT count(*) FROM src.sqlite_master WHERE name = 'seq'") == .integer(1))
        for query in [
            "SELECT b FROM shared", "SELECT b FROM main.shared", "SELECT c FROM scratch", "SELECT count(*) FROM main.shared", "SELECT sum(a) FROM t",
            "SELECT count(*) FROM t", "SELECT seq FROM src.sqlite_sequence", "SELECT seq FROM sqlite_sequence",
        ] {
            let error = try #require(throws: SQLiteError.self, "\(query)") { try connection.prepare(query) }
            // Refused, or, for a name only src has, found in the empty temporary table that takes
            // it; SQLite's own tables are refused wherever they are.
            #expect(
                error.message.contains("prohibited") || error.message.contains("not authorized") || error.message.contains("no such column"),
                "\(query): \(error.message)")
        }
    }
}
