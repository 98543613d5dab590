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
package enum AppSchemaObjects {
    struct Object {
        var type: String
        var name: String
        /// The table (or view) a trigger or index belongs to; a view's own name.
        var table: String
        var sql: String

        /// Statements whose compiling resolves every name the object uses: SQLite checks a view's
        /// columns and a trigger's body only when they are used, not when they are created; an
        /// index's when it is made. A trigger is used by its own event alone (an INSTEAD OF
        /// trigger on a view, a trigger on a WITHOUT ROWID table): `firstColumn` is a column of
        /// its table, for an UPDATE that changes nothing.
        func uses(firstColumn: String?) -> [String] {
            let on = quoteIdentifier(table)
            switch type {
            case "view": return ["SELECT * FROM \(on) LIMIT 0"]
            case "trigger":
                let event = sql.firstMatch(of: Self.triggerEvent).map { String($0.1).uppercased() }
                if event == "INSERT" { return ["INSERT INTO \(on) DEFAULT VALUES"] }
                if event == "DELETE" { return ["DELETE FROM \(on)"] }
                return firstColumn.map { ["UPDATE \(on) SET \(quoteIdentifier($0)) = \(quoteIdentifier($0))"] } ?? []
            default: return []
            }
        }

        /// `CREATE TRIGGER name [BEFORE|AFTER|INSTEAD OF] event`: the event, whatever the body does.
        nonisolated(unsafe) static let triggerEvent =
            /(?i)^\s*CREATE\s+(?:TEMP(?:ORARY)?\s+)?TRIGGER\s+(?:IF\s+NOT\s+EXISTS\s+)?(?:"[^"]*"|\[[^\]]*\]|`[^`]*`|[^\s]+)\s+(?:BEFORE\s+|AFTER\s+|INSTEAD\s+OF\s+)?(INSERT|DELETE|UPDATE)/
    }

    /// The store's views, its triggers but Core Data's, and its indexes on the model's tables
    /// that neither `layout` (the store's) nor Core Data's naming (`Z…`) makes, in `schema` (nil:
    /// the connection's main one). An app's index on a table of its own stays with that table.
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
            // An index on a model table is Core Data's when the layout makes it, or when it has a
            // name of Core Data's making (`Z…`: a table Core Data renamed keeps its indexes' names).
            if object.type == "index",
                !modelTables.contains(object.table.uppercased()) || layoutIndexes.contains(object.name.uppercased()) || object.name.hasPrefix("Z")
            {
                continue
            }
            objects.append(object)
        }
        return objects
    }

    /// Which of `objects` would not hold over `tables` (the layout's `CREATE` statements) beside
    /// `appTables` (the store's own, made as they can be: a virtual table makes its shadow
    /// tables itself) and why: each is made, in order, over an empty copy, as a step would make
    /// it again.
    static func rehearse(_ objects: [Object], over tables: [String], appTables: [String] = []) throws -> [(object: Object, reason: String)] {
        guard !objects.isEmpty else { return [] }
        let scratch = try Connection(path: ":memory:")
        defer { try? scratch.close() }
        for statement in tables { try scratch.execute(statement) }
        for statement in appTables { try? scratch.execute(statement) }
        for object in objects { try? scratch.execute(object.sql) }
        return try objects.compactMap { object in
            do {
                guard try scratch.scalar("SELECT count(*) FROM sqlite_master WHERE name = ?", object.name)?.int64 == 1 else {
                    throw SQLiteError(code: .SQLITE_ERROR, message: "it cannot be made over the new tables")
                }
                for use in object.uses(firstColumn: try firstColumn(of: object.table, in: scratch)) { _ = try scratch.prepare(use) }
                return nil
            } catch let error as SQLiteError {
                return (object, error.message)
            }
        }
    }

    /// The first column of `table` in `connection`'s schema, or nil.
    static func firstColumn(of table: String, in connection: Connection) throws -> String? {
        let statement = try connection.prepare("SELECT name FROM pragma_table_info(?) ORDER BY cid LIMIT 1")
        try statement.bind([SQLiteValue.text(table)])
        var rows = statement.rows()
        return try rows.next()?.text(at: 0)
    }

    /// The app's objects in the store at `store` (a copied step's input) that would not hold over
    /// `step`'s new store, as dropped data: the copy makes the others again.
    package static func notCarried(by step: MigrationStep, from store: String) throws -> [DroppedData] {
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
    package static func carry(into connection: Connection, from layout: StoreLayout) throws {
        for object in try read(connection, layout: layout, schema: "src") {
            try connection.execute("SAVEPOINT tern_app_object")
            do {
                try connection.execute(object.sql)
                for use in object.uses(firstColumn: try firstColumn(of: object.table, in: connection)) { _ = try connection.prepare(use) }
                try connection.execute("RELEASE tern_app_object")
            } catch is SQLiteError {
                // Reported as dropped when the step began (`notCarried`).
                try connection.execute("ROLLBACK TO tern_app_object")
                try connection.execute("RELEASE tern_app_object")
            }
        }
    }

    /// Refuses a chain with an in-place step that would break one of the store's views,
    /// triggers or indexes, before any work: the steps are followed in order, each making again
    /// what survives the step before over an empty copy of its tables — a copied step keeps
    /// what holds over its new store (and the store's own tables stay behind; what it drops is
    /// reported when it runs), an in-place step must keep all of it.
    package static func check(_ steps: [MigrationStep], store: String) throws {
        guard let first = steps.first, steps.contains(where: { $0.schemaChanges != nil }) else { return }
        let reader = try ReadOnlyStore(path: store)
        var (objects, appTables): ([Object], [String]) = try withExtendedLifetime(reader) {
            let connection = try reader.connect()
            let layoutTables = Set(first.sourceLayout.tables.map(\.name)).union(LayoutSignature.bookkeepingTables)
            let tables = try connection.prepare(
                """
                SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                AND name NOT IN (SELECT name FROM pragma_table_list WHERE type = 'shadow')
                """)
            var appTables: [String] = []
            var rows = tables.rows()
            while let row = try rows.next() {
                if !layoutTables.contains(row.text(at: 0) ?? "") { appTables.append(row.text(at: 1) ?? "") }
            }
            return (try read(connection, layout: first.sourceLayout), appTables)
        }
        for step in steps where !objects.isEmpty {
            let failed = try rehearse(objects, over: StoreLayout(model: step.destination).createTableStatements, appTables: appTables)
            if step.schemaChanges == nil {
                let lost = Set(failed.map(\.object.name))
                objects.removeAll { lost.contains($0.name) }
                appTables = []
                continue
            }
            if let failed = failed.first {
                throw TernError(
                    .badInput,
                    "the store's \(failed.object.type) \(failed.object.name) would not hold after step \(step.source.versionName) → \(step.destination.versionName), "
                        + "which changes its tables in place: \(failed.reason). Drop the \(failed.object.type) before migrating and make it again for the new version; "
                        + "tern keeps an app's views, triggers and indexes that still hold", path: store)
            }
        }
    }
}
