import TernSQLite
import TernModel
import TernStore
import TernMapping

/// An app's own views and triggers in a store (Core Data's are the derived attributes' `Z_DA_…`
/// triggers, which the layout makes again). A step applied in place keeps them: they are set
/// aside while its tables change and made again after. One that would no longer hold over the
/// new tables (a view reading a column the step drops) is refused when the plan is made, naming
/// it, rather than left to fail in SQLite mid-step.
enum AppSchemaObjects {
    struct Object {
        var type: String
        var name: String
        /// The table (or view) a trigger belongs to; a view's own name.
        var table: String
        var sql: String

        /// Statements whose compiling resolves every name the object uses: SQLite checks a view's
        /// columns and a trigger's body only when they are used, not when they are created.
        var uses: [String] {
            let on = quoteIdentifier(table)
            return type == "view"
                ? ["SELECT * FROM \(on) LIMIT 0"]
                : ["INSERT INTO \(on) DEFAULT VALUES", "UPDATE \(on) SET rowid = rowid", "DELETE FROM \(on)"]
        }
    }

    /// The store's views and its triggers but Core Data's.
    static func read(_ connection: Connection) throws -> [Object] {
        let statement = try connection.prepare(
            """
            SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL
            AND (type = 'view' OR (type = 'trigger' AND name NOT LIKE 'Z\\_DA\\_%' ESCAPE '\\')) ORDER BY rowid
            """)
        var objects: [Object] = []
        var rows = statement.rows()
        while let row = try rows.next() {
            objects.append(Object(type: row.text(at: 0) ?? "", name: row.text(at: 1) ?? "", table: row.text(at: 2) ?? "", sql: row.text(at: 3) ?? ""))
        }
        return objects
    }

    /// Refuses a chain whose leading in-place steps would break one of the store's views or
    /// triggers: each is made, in order, over an empty copy of every destination's tables (and
    /// the store's own tables outside the layout), as the step would make it again.
    static func check(_ steps: [MigrationStep], store: String) throws {
        let inPlace = steps.prefix { $0.schemaChanges != nil }
        guard !inPlace.isEmpty else { return }
        let reader = try ReadOnlyStore(path: store)
        let (objects, appTables): ([Object], [String]) = try withExtendedLifetime(reader) {
            let connection = try reader.connect()
            let layoutTables = Set(StoreLayout(model: inPlace[inPlace.startIndex].source).tables.map(\.name)).union(LayoutSignature.bookkeepingTables)
            let tables = try connection.prepare(
                "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
            var appTables: [String] = []
            var rows = tables.rows()
            while let row = try rows.next() {
                if !layoutTables.contains(row.text(at: 0) ?? "") { appTables.append(row.text(at: 1) ?? "") }
            }
            return (try read(connection), appTables)
        }
        guard !objects.isEmpty else { return }
        for step in inPlace {
            let scratch = try Connection(path: ":memory:")
            defer { try? scratch.close() }
            for statement in StoreLayout(model: step.destination).createTableStatements + appTables { try scratch.execute(statement) }
            for object in objects { try? scratch.execute(object.sql) }
            for object in objects {
                do {
                    guard try scratch.scalar("SELECT count(*) FROM sqlite_master WHERE name = ?", object.name)?.int64 == 1 else {
                        throw SQLiteError(code: .SQLITE_ERROR, message: "it cannot be made over the new tables")
                    }
                    for use in object.uses { _ = try scratch.prepare(use) }
                } catch let error as SQLiteError {
                    throw TernError(
                        .badInput,
                        "the store's \(object.type) \(object.name) would not hold after step \(step.source.versionName) → \(step.destination.versionName), "
                            + "which changes its tables in place: \(error.message). Drop the \(object.type) before migrating and make it again for the new version; "
                            + "tern keeps an app's views and triggers that still hold", path: store)
                }
            }
        }
    }
}
