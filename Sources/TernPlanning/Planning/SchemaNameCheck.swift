import TernSQLite
import TernModel
import TernStore

/// Refuses, while planning, a migration that would put two things under one name in the store:
/// a version's own tables, indexes and triggers against each other and Core Data's bookkeeping
/// tables (`StoreLayout.nameClashes`), and against the app's own objects in the store (its tables,
/// views, triggers and indexes the layout does not make). An app object may not use the prefix of
/// Tern's work tables either: a step applied in place makes them inside the store.
package enum SchemaNameCheck {
    package static func check(_ steps: [MigrationStep], store: String) throws {
        guard let first = steps.first else { return }
        let source = first.sourceLayout
        try source.refuseNameClashes(store: store)
        let appObjects = try Self.appObjects(in: store, besides: source)
        let workPrefixes = LightweightInPlace.workTablePrefixes
        if let work = appObjects.first(where: { object in workPrefixes.contains { object.name.lowercased().hasPrefix($0) } }) {
            throw TernError(
                .badInput,
                "\(work.holder) is named like the work tables tern makes inside a store (\(workPrefixes.map { $0 + "…" }.joined(separator: ", "))); "
                    + "rename it before migrating", path: store)
        }
        for step in steps {
            try StoreLayout(model: step.destination).refuseNameClashes(besides: appObjects, store: store)
        }
    }

    /// The store's objects outside the model's tables: tables the layout does not make (nor Core
    /// Data), with their indexes and triggers, and views; and the app's indexes and triggers on
    /// the model's tables (`AppSchemaObjects.read`: those a step makes again).
    private static func appObjects(in store: String, besides layout: StoreLayout) throws -> [SchemaName] {
        let own = Set((layout.tables.map(\.name) + LayoutSignature.bookkeepingTables).map { $0.uppercased() })
        let reader = try ReadOnlyStore(path: store)
        return try withExtendedLifetime(reader) {
            let connection = try reader.connect()
            let statement = try connection.prepare(
                "SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid")
            var names: [SchemaName] = []
            var rows = statement.rows()
            while let row = try rows.next() {
                let type = row.text(at: 0) ?? "", name = row.text(at: 1) ?? "", table = row.text(at: 2) ?? ""
                if !own.contains(table.uppercased()) { names.append(SchemaName(name: name, holder: "the store's own \(type) \(name)")) }
            }
            let outside = Set(names.map(\.name))
            for object in try AppSchemaObjects.read(connection, layout: layout) where !outside.contains(object.name) {
                names.append(SchemaName(name: object.name, holder: "the store's own \(object.type) \(object.name)"))
            }
            return names
        }
    }
}
