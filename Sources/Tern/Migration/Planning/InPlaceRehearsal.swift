import TernSQLite

/// Decides, while planning, whether each step that qualifies to run in place really can on this
/// store: its statements are applied to an empty copy of the store's schema (tables, indexes,
/// triggers and views; no rows but Core Data's entity numbers) and the result must be the
/// destination's layout. A store whose
/// tables are not what the model lays out (an app's own `Z…` table in the way) plans that step as
/// the copy it must be, so `tern plan` shows what `migrate` does and the run never changes its
/// mind. Later steps start from the copy's store, which is Tern's layout: they are not rehearsed.
enum InPlaceRehearsal {
    /// The indices of `steps` that qualify to run in place but cannot on the store at `store`.
    static func stepsToCopy(_ steps: [MigrationStep], store: String) throws -> Set<Int> {
        guard steps.contains(where: { LightweightInPlace.statements(for: $0) != nil }) else { return [] }
        let schema = try Connection(path: ":memory:")
        let reader = try ReadOnlyStore(path: store)
        let source = try reader.connect()
        let objects = try source.prepare(
            """
            SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
            ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 WHEN 'view' THEN 2 ELSE 3 END, rowid
            """)
        var rows = objects.rows()
        while let row = try rows.next() {
            try schema.execute(row.text(at: 0)!)
        }
        // A column of the app's own in a model table: a table rebuilt in place would lose it
        // without a word; the copy says what it drops.
        if let first = steps.first, LightweightInPlace.statements(for: first) != nil,
            !DataLoss.columnsOutsideModel(of: first.source, tables: try source.tableColumns()).isEmpty
        {
            return [0]
        }
        // Which tables are the model's is told by Z_PRIMARYKEY's rows (`LayoutSignature`).
        for table in ["Z_PRIMARYKEY", "Z_METADATA"] {
            let read = try source.prepare("SELECT * FROM \(table)")
            var found = read.rows()
            while let row = try found.next() {
                let values = row.values
                let insert = try schema.prepare("INSERT INTO \(table) VALUES (\(Array(repeating: "?", count: values.count).joined(separator: ", ")))")
                try insert.bind(values)
                try insert.run()
            }
        }
        try SQLCompiler.prepare(schema)
        var copied: Set<Int> = []
        for (index, step) in steps.enumerated() {
            // A copied step writes Tern's own layout: whatever follows starts from it.
            guard let statements = LightweightInPlace.statements(for: step) else { break }
            guard try LightweightInPlace.apply(statements, step: step, to: schema) else {
                copied.insert(index)
                break
            }
        }
        return copied
    }
}
