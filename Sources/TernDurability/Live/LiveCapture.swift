import TernModel
import TernSQLite

/// What a live migration leaves in the store the app writes while it runs: a change log and
/// triggers that record in it which key every INSERT, UPDATE and DELETE touched — nothing
/// else. Persistent triggers are the one tool that sees every connection's writes (SQLite's
/// session extension and update hooks see only their own), and they run inside the writer's
/// own transaction, so a logged change commits or rolls back with it.
///
/// Plain SQL any SQLite the app links parses; created in one immediate transaction and
/// dropped in one, so a kill leaves all of them or none.
package enum LiveCapture {
    /// The change log: a position, the table, the key (both keys for a join table), when.
    package static let log = "TERN_LIVE_CHANGES"
    /// Every trigger's name starts with this.
    package static let triggerPrefix = "TERN_LIVE_"

    /// A table whose changes are logged, and the columns naming a row of it.
    package struct Table: Codable, Equatable, Sendable {
        package var name: String
        /// `Z_PK` for an entity's table; the two key columns of a join table; the declared
        /// primary key of any other.
        package var keys: [String]

        package init(name: String, keys: [String]) {
            self.name = name
            self.keys = keys
        }
    }

    /// The tables of the store at `connection` whose changes are logged: every table but
    /// SQLite's, the cached model (Core Data rewrites it whole, and a migrated store drops it)
    /// and Tern's own. A table with no key to name its rows by is refused, by name.
    package static func tables(in connection: Connection, schema: String = "main") throws -> [Table] {
        let names = try connection.prepare(
            "SELECT name FROM \(quoteIdentifier(schema)).sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
        var rows = names.rows()
        var tables: [Table] = []
        while let row = try rows.next() {
            let name = row.text(at: 0) ?? ""
            if name == "Z_MODELCACHE" || name.hasPrefix("TERN_") { continue }
            let info = try connection.prepare("SELECT name, pk FROM pragma_table_info(?, ?) ORDER BY pk")
            try info.bind([name, schema])
            var columns = info.rows()
            var all: [String] = []
            var primary: [String] = []
            while let column = try columns.next() {
                let columnName = column.text(at: 0) ?? ""
                all.append(columnName)
                if column.int64(at: 1) > 0 { primary.append(columnName) }
            }
            let keys = all.contains("Z_PK") ? ["Z_PK"] : primary
            guard (1...2).contains(keys.count) else {
                throw TernError(
                    .badInput,
                    "table \(name) has no key of one or two columns to name its rows by: --live cannot log its changes (migrate the store offline)")
            }
            tables.append(Table(name: name, keys: keys))
        }
        return tables
    }

    /// The log and the triggers over `tables`, as SQL.
    package static func statements(for tables: [Table]) -> [String] {
        var statements = [
            "CREATE TABLE \(log) (Z_SEQ INTEGER PRIMARY KEY, Z_TABLE TEXT NOT NULL, Z_KEY1 INTEGER, Z_KEY2 INTEGER, Z_TIME REAL NOT NULL DEFAULT (julianday('now')))"
        ]
        for table in tables {
            let name = quoteIdentifier(table.name)
            let literal = quoteLiteral(table.name)
            func values(_ row: String) -> String {
                let keys = table.keys.map { "\(row).\(quoteIdentifier($0))" } + (table.keys.count == 1 ? ["NULL"] : [])
                return "\(literal), \(keys.joined(separator: ", "))"
            }
            let insert = "INSERT INTO \(log) (Z_TABLE, Z_KEY1, Z_KEY2) "
            let changedKey = table.keys.map { "OLD.\(quoteIdentifier($0)) IS NOT NEW.\(quoteIdentifier($0))" }.joined(separator: " OR ")
            statements += [
                "CREATE TRIGGER \(trigger(table, "INSERT")) AFTER INSERT ON \(name) BEGIN \(insert)VALUES (\(values("NEW"))); END",
                "CREATE TRIGGER \(trigger(table, "UPDATE")) AFTER UPDATE ON \(name) BEGIN \(insert)VALUES (\(values("NEW"))); "
                    + "\(insert)SELECT \(values("OLD")) WHERE \(changedKey); END",
                "CREATE TRIGGER \(trigger(table, "DELETE")) AFTER DELETE ON \(name) BEGIN \(insert)VALUES (\(values("OLD"))); END",
            ]
        }
        return statements
    }

    /// A trigger's name, quoted.
    private static func trigger(_ table: Table, _ event: String) -> String {
        quoteIdentifier("\(triggerPrefix)\(table.name)_\(event)")
    }

    /// Starts logging: the log and every trigger, in one immediate transaction on `connection`
    /// (a read-write connection to the live store). Returns the tables logged.
    package static func install(on connection: Connection) throws -> [Table] {
        try connection.transaction(.immediate) {
            let tables = try Self.tables(in: connection)
            for statement in statements(for: tables) { try connection.execute(statement) }
            return tables
        }
    }

    /// What a live migration left in a store: its triggers' names and whether its log is there.
    package static func leftovers(in connection: Connection, schema: String = "main") throws -> (triggers: [String], log: Bool) {
        let statement = try connection.prepare(
            "SELECT type, name FROM \(quoteIdentifier(schema)).sqlite_master WHERE (type = 'trigger' AND name LIKE 'TERN\\_LIVE\\_%' ESCAPE '\\') OR (type = 'table' AND name = ?) ORDER BY name"
        )
        try statement.bind([log])
        var rows = statement.rows()
        var triggers: [String] = []
        var hasLog = false
        while let row = try rows.next() {
            if row.text(at: 0) == "table" { hasLog = true } else { triggers.append(row.text(at: 1) ?? "") }
        }
        return (triggers, hasLog)
    }

    /// Stops logging: drops every trigger and the log, in one immediate transaction.
    package static func remove(from connection: Connection) throws {
        try connection.transaction(.immediate) {
            let (triggers, _) = try leftovers(in: connection)
            for name in triggers { try connection.execute("DROP TRIGGER IF EXISTS \(quoteIdentifier(name))") }
            try connection.execute("DROP TABLE IF EXISTS \(log)")
        }
    }

    /// Removes the log and triggers from a copy of the store (the mirror a live run reads),
    /// inside the caller's transaction or on their own.
    package static func strip(_ connection: Connection, schema: String = "main") throws {
        let (triggers, _) = try leftovers(in: connection, schema: schema)
        for name in triggers { try connection.execute("DROP TRIGGER IF EXISTS \(quoteIdentifier(schema)).\(quoteIdentifier(name))") }
        try connection.execute("DROP TABLE IF EXISTS \(quoteIdentifier(schema)).\(log)")
    }
}
