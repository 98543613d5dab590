import TernSQLite
import TernModel
import TernStore
import TernMapping

/// An app's own views, triggers and indexes in a store (Core Data's are the layout's indexes and
/// the derived attributes' `Z_DA_…` triggers, which the layout makes again). A step applied in
/// place keeps them: they are set aside while its tables change and made again after; one that
/// would no longer hold over the new tables (a view reading a column the step drops) is refused
/// when the plan is made, naming it, rather than left to fail in SQLite mid-step. A step that
/// copies the store makes again those that hold over the new store's tables, and reports the
/// others as dropped (`notCarried(by:from:)`): refused with `--no-data-loss`, as on the other path.
enum AppSchemaObjects {
    struct Object {
        var type: String
        var name: String
        /// The table (or view) a trigger or index belongs to; a view's own name.
        var table: String
        var sql: String

        /// Statements whose compiling resolves every name the object uses: SQLite checks a view's
        /// columns and a trigger's body only when they are used, not when they are created; an
        /// index's when it is made.
        var uses: [String] {
            let on = quoteIdentifier(table)
            switch type {
            case "view": return ["SELECT * FROM \(on) LIMIT 0"]
            case "trigger": return ["INSERT INTO \(on) DEFAULT VALUES", "UPDATE \(on) SET rowid = rowid", "DELETE FROM \(on)"]
            default: return []
            }
        }
    }

    /// The store's views, its triggers but Core Data's, and its indexes on the model's tables
    /// that `layout` (the store's) does not make, in `schema` (nil: the connection's main one).
    /// An app's index on a table of its own stays with that table.
    static func read(_ connection: Connection, layout: StoreLayout, schema: String? = nil) throws -> [Object] {
        let master = schema.map { "\(quoteIdentifier($0)).sqlite_master" } ?? "sqlite_master"
        let statement = try connection.prepare(
            """
            SELECT type, name, tbl_name, sql FROM \(master) WHERE sql IS NOT NULL
            AND (type = 'view' OR type = 'index' OR (type = 'trigger' AND name NOT LIKE 'Z\\_DA\\_%' ESCAPE '\\')) ORDER BY rowid
            """)
        let modelTables = Set(layout.tables.map { $0.name.uppercased() })
        let layoutIndexes = Set(layout.indexes.map { $0.name.uppercased() })
        var objects: [Object] = []
        var rows = statement.rows()
        while let row = try rows.next() {
            let object = Object(type: row.text(at: 0) ?? "", name: row.text(at: 1) ?? "", table: row.text(at: 2) ?? "", sql: row.text(at: 3) ?? "")
            if object.type == "index", !modelTables.contains(object.table.uppercased()) || layoutIndexes.contains(object.name.uppercased()) { continue }
            objects.append(object)
        }
        return objects
    }

    /// Which of `objects` would not hold over `tables` (`CREATE` statements) and why: each is
    /// made, in order, over an empty copy of the tables, as a step would make it again.
    static func rehearse(_ objects: [Object], over tables: [String]) throws -> [(object: Object, reason: String)] {
        guard !objects.isEmpty else { return [] }
        let scratch = try Connection(path: ":memory:")
        defer { try? scratch.close() }
        for statement in tables { try scratch.execute(statement) }
        for object in objects { try? scratch.execute(object.sql) }
        return try objects.compactMap { object in
            do {
                guard try scratch.scalar("SELECT count(*) FROM sqlite_master WHERE name = ?", object.name)?.int64 == 1 else {
                    throw SQLiteError(code: .SQLITE_ERROR, message: "it cannot be made over the new tables")
                }
                for use in object.uses { _ = try scratch.prepare(use) }
                return nil
            } catch let error as SQLiteError {
                return (object, error.message)
            }
        }
    }

    /// The app's objects in the store at `store` (a copied step's input) that would not hold over
    /// `step`'s new store, as dropped data: the copy makes the others again.
    static func notCarried(by step: MigrationStep, from store: String) throws -> [DroppedData] {
        let reader = try ReadOnlyStore(path: store)
        let objects = try withExtendedLifetime(reader) { try read(try reader.connect(), layout: step.sourceLayout) }
        return try rehearse(objects, over: StoreLayout(model: step.destination).createTableStatements).map { failed in
            var data = DroppedData(entity: failed.object.name)
            data.schemaObject = failed.object.type
            data.reason = failed.reason
            return data
        }
    }

    /// Makes again, in `connection`'s store (a copied step's new store, its input attached as
    /// `src`), each of the input's app objects that holds over the new tables.
    static func carry(into connection: Connection, from layout: StoreLayout) throws {
        for object in try read(connection, layout: layout, schema: "src") {
            try connection.execute("SAVEPOINT tern_app_object")
            do {
                try connection.execute(object.sql)
                for use in object.uses { _ = try connection.prepare(use) }
                try connection.execute("RELEASE tern_app_object")
            } catch is SQLiteError {
                // Reported as dropped when the step began (`notCarried`).
                try connection.execute("ROLLBACK TO tern_app_object")
                try connection.execute("RELEASE tern_app_object")
            }
        }
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
            return (try read(connection, layout: inPlace[inPlace.startIndex].sourceLayout), appTables)
        }
        guard !objects.isEmpty else { return }
        for step in inPlace {
            if let failed = try rehearse(objects, over: StoreLayout(model: step.destination).createTableStatements + appTables).first {
                throw TernError(
                    .badInput,
                    "the store's \(failed.object.type) \(failed.object.name) would not hold after step \(step.source.versionName) → \(step.destination.versionName), "
                        + "which changes its tables in place: \(failed.reason). Drop the \(failed.object.type) before migrating and make it again for the new version; "
                        + "tern keeps an app's views, triggers and indexes that still hold", path: store)
            }
        }
    }
}
