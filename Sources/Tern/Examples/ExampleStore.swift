import Foundation
import TernSQLite

/// A small BookStore store in Core Data's layout, written directly in SQL, for the README's first
/// command and for tests that need a store without a model.
///
/// `Book (title, price)` has many `Page (text, book)`; page `book` is a to-one foreign key with
/// Core Data's index. Rows are generated inside SQLite, so even large examples take seconds.
public enum ExampleStore {
    /// Creates the store at `path`, which must not exist.
    public static func createBookStore(at path: String, books: Int, pagesPerBook: Int) throws {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw TernError(.badInput, "refusing to overwrite an existing file", path: path)
        }
        let connection = try Connection(path: path)
        try connection.execute("PRAGMA auto_vacuum = 2")
        try connection.transaction(.immediate) {
            try connection.execute("""
                CREATE TABLE ZBOOK (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZPRICE DECIMAL, ZTITLE VARCHAR);
                CREATE TABLE ZPAGE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZBOOK INTEGER, ZTEXT VARCHAR);
                CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                """)
            try connection.execute("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                INSERT INTO ZBOOK SELECT i, 1, 1, round(5 + (i * 7919 % 3000) / 100.0, 2), 'Book ' || i FROM n
                """, books)
            try connection.execute("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                INSERT INTO ZPAGE SELECT i, 2, 1, (i - 1) / ? + 1, 'Page ' || ((i - 1) % ? + 1) FROM n
                """, books * pagesPerBook, max(pagesPerBook, 1), max(pagesPerBook, 1))
            try connection.execute("CREATE INDEX ZPAGE_ZBOOK_INDEX ON ZPAGE (ZBOOK)")
            try connection.execute("INSERT INTO Z_PRIMARYKEY VALUES (1, 'Book', 0, ?), (2, 'Page', 0, ?)",
                                   books, books * pagesPerBook)
            let plist: [String: Any] = [
                "NSStoreType": "SQLite",
                "NSStoreModelVersionIdentifiers": ["1"],
                "NSStoreModelVersionHashesVersion": 3,
                "_NSAutoVacuumLevel": "2",
            ]
            let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
            try connection.execute("INSERT INTO Z_METADATA VALUES (1, ?, ?)", UUID().uuidString, [UInt8](data))
        }
        try connection.close()
    }
}
