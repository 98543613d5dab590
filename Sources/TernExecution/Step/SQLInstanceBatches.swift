import TernSQLite
import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability

/// Stage 1 as SQL: each batch is one `INSERT … SELECT` over a key range of the source, every
/// value expression and every to-one whose targets are known computed inside SQLite, with the
/// association rows (destination keys in source key order) written just before.
///
/// Catching up a live store (`StepMigrator.catchUp`), the same INSERT reads instead the source
/// objects a round found changed (`LiveChanges`), all at once.
struct SQLInstanceBatches: InstanceBatchWriter {
    let selection: SQLFragment
    let batchSize: Int
    /// SQLite reads one value at a time, whatever its size.
    let batchWeight: (sql: String, budget: Int)? = nil
    let deferredRelationships: [String]
    /// One statement on the writer's core.
    let usesEveryCore = false
    private let insert: Statement
    private let valueArguments: [SQLiteValue]
    private let associate: Statement?
    /// The association table's last rowid before a batch: the batch's own rows follow it.
    private let lastAssociation: String?
    private let root: String
    /// Ordered lists' places the objects take as they are inserted, numbered before the first batch.
    private let ranks: [ListRanks]
    private unowned let migrator: StepMigrator

    /// Which source rows the INSERT reads: key ranges, batch by batch; or, catching up a live
    /// store, the objects of the mapping's source table in `LiveChanges.table` (keys kept only).
    enum Rows { case keyRanges, changed }

    init(_ entry: PlannedMapping, migrator: StepMigrator, rows: Rows = .keyRanges) throws {
        self.migrator = migrator
        let sourceEntity = migrator.sourceLayout.entities[entry.sourceEntity]!
        let destinationEntity = migrator.destinationLayout.entities[entry.destinationEntity]!
        var compiler = SQLCompiler(layout: migrator.sourceLayout, schema: "src")
        selection = migrator.inputs.sourceSelection(entry, compiler: &compiler)
        batchSize = migrator.options.batchSize

        // Columns: attributes, then foreign keys whose targets are known now.
        var columns: [String] = ["Z_PK", "Z_ENT", "Z_OPT"]
        var values: [SQLFragment] = [
            SQLFragment(entry.keepsKeys ? "s.\"Z_PK\"" : "a.destination"), SQLFragment("\(destinationEntity.number)"),
            // A new object's version is 1; a step applied in place keeps each row's, and so does
            // catching such a step up.
            SQLFragment(rows == .changed && migrator.step.schemaChanges != nil ? "s.\"Z_OPT\"" : "1"),
        ]
        for attribute in migrator.step.destination.allAttributes(of: entry.destinationEntity) where !attribute.isTransient {
            columns.append(destinationEntity.attributeColumns[attribute.name]!)
            values.append(migrator.inputs.storedValue(attribute, in: entry, compiler: &compiler))
        }
        let fused = migrator.fusedForeignKeys(of: entry)
        columns += fused.columns
        values += fused.values
        deferredRelationships = fused.deferred
        ranks = fused.ranks
        for list in ranks { try migrator.connection.execute(list.create) }

        root = destinationEntity.table
        if migrator.nextKeys[root] == nil { migrator.nextKeys[root] = 1 }
        // With new keys, the batch reads its own association rows (the rowids after the last one
        // before it: the table has no index on `source` until the mapping is done), each joined
        // to its source row by key, rather than joining the whole, growing table per batch.
        let from =
            rows == .changed
            ? "FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s WHERE s.\"Z_PK\" IN (\(LiveChanges.keys(of: sourceEntity.table))) AND "
            : entry.keepsKeys
                ? "FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s WHERE s.\"Z_PK\" > ? AND s.\"Z_PK\" <= ? AND "
                : "FROM \(quoteIdentifier(entry.table)) a JOIN \"src\".\(quoteIdentifier(sourceEntity.table)) s ON s.\"Z_PK\" = a.source WHERE a.rowid > ? AND "
        let insert =
            SQLFragment("INSERT INTO \(quoteIdentifier(destinationEntity.table)) (\(columns.map(quoteIdentifier).joined(separator: ", "))) SELECT ")
            + values.dropFirst().reduce(values[0]) { $0 + SQLFragment(", ") + $1 }
            + SQLFragment(" \(from)") + selection
        self.insert = try migrator.connection.prepare(insert.sql)
        migrator.logger.trace("each batch's statement", metadata: ["mapping": "\(entry.entityMapping.name)", "sql": "\(insert.sql)"])
        valueArguments = values.flatMap(\.arguments)
        associate =
            entry.keepsKeys
            ? nil
            : try migrator.connection.prepare(
                (SQLFragment(
                    "INSERT INTO \(quoteIdentifier(entry.table)) (source, destination) SELECT s.\"Z_PK\", ? + row_number() OVER (ORDER BY s.\"Z_PK\") - 1 FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s WHERE "
                )
                    + selection + SQLFragment(" AND s.\"Z_PK\" > ? AND s.\"Z_PK\" <= ? ORDER BY s.\"Z_PK\"")).sql)
        lastAssociation = entry.keepsKeys ? nil : "SELECT coalesce(max(rowid), 0) FROM \(quoteIdentifier(entry.table))"
    }

    func writeAll(_ batches: inout SourceBatches, commit: (_ end: Int64, _ write: () throws -> Int) throws -> Void) throws -> StepReport.SwiftTimes? {
        let connection = migrator.connection
        for list in ranks {
            let started = ContinuousClock.now
            let links = try list.fill(on: connection, ranking: migrator.runningRank)
            migrator.relationships.numberedAhead(list.name, links: links, in: ContinuousClock.now - started)
        }
        defer { for list in ranks { try? connection.execute(list.drop) } }
        while let (after, end) = try batches.next() {
            try commit(end) {
                var range: [SQLiteValue] = [.integer(after), .integer(end)]
                if let associate, let lastAssociation {
                    let last = try connection.scalar(lastAssociation)?.int64 ?? 0
                    try associate.bind([SQLiteValue.integer(migrator.nextKeys[root]!)] + selection.arguments + [.integer(after), .integer(end)])
                    try associate.run()
                    migrator.nextKeys[root]! += Int64(connection.changes)
                    range = [.integer(last)]
                }
                try insert.bind(valueArguments + range + selection.arguments)
                try insert.run()
                return connection.changes
            }
        }
        return nil
    }

    /// Writes the objects of the changed source keys (`Rows.changed`), inside the caller's
    /// transaction; returns how many.
    func writeChanged() throws -> Int {
        try insert.bind(valueArguments + selection.arguments)
        try insert.run()
        return migrator.connection.changes
    }
}
