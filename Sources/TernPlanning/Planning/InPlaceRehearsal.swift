import TernSQLite
import TernModel
import TernStore
import TernMapping

/// Decides, while planning, whether each step that qualifies to run in place really can on this
/// store: its statements are applied to an empty copy of the store's schema (tables, indexes,
/// triggers and views; no rows but Core Data's entity numbers) and the result must be the
/// destination's layout. A store whose tables are not what the model lays out (an app's own
/// `Z…` table or column in the way) plans that step as the copy it must be, so `tern plan` shows
/// what `migrate` does and the run never changes its mind. Later steps start from the copy's
/// store, which is Tern's layout: they are not rehearsed.
package enum InPlaceRehearsal {
    /// The indices of `steps` that qualify to run in place but cannot on the store at `store`.
    package static func stepsToCopy(_ steps: [MigrationStep], store: String) throws -> Set<Int> {
        // The leading steps that qualify: a copied step writes Tern's own layout for what follows.
        let leading = steps.map(\.schemaChanges).prefix { $0 != nil }.compactMap { $0 }
        guard !leading.isEmpty else { return [] }
        let reader = try ReadOnlyStore(path: store)
        defer { withExtendedLifetime(reader) {} }  // its private copy, if it made one, lives on
        let source = try reader.connect()
        // A column of the app's own in a model table: a table rebuilt in place would lose it
        // without a word; the copy says what it drops.
        guard DataLoss.columnsOutsideModel(of: steps[0].source, tables: try source.tableColumns()).isEmpty else { return [0] }
        let schema = try Connection(path: ":memory:")
        // A virtual table (FTS5) makes its shadow tables itself.
        let objects = try source.prepare(
            """
            SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
            AND name NOT IN (SELECT name FROM pragma_table_list WHERE type = 'shadow')
            ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 WHEN 'view' THEN 2 ELSE 3 END, rowid
            """)
        var rows = objects.rows()
        while let row = try rows.next() {
            try schema.execute(row.text(at: 0)!)
        }
        // Which tables are the model's is told by Z_PRIMARYKEY's rows (`LayoutSignature`).
        for table in ["Z_PRIMARYKEY", "Z_METADATA"] {
            var found = try source.prepare("SELECT * FROM \(table)").rows()
            var insert: Statement?
            while let row = try found.next() {
                let values = row.values
                if insert == nil {
                    insert = try schema.prepare("INSERT INTO \(table) VALUES (\(Array(repeating: "?", count: values.count).joined(separator: ", ")))")
                }
                try insert!.bind(values)
                try insert!.run()
            }
        }
        try SQLCompiler.prepare(schema)
        for (index, statements) in leading.enumerated() where !(try LightweightInPlace.apply(statements, step: steps[index], to: schema)) {
            return [index]
        }
        return []
    }
}
