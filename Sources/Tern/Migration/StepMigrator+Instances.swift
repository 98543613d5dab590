import TernSQLite

extension StepMigrator {
    // MARK: Stage 1: create destination instances

    func sourceSelection(_ entry: AssociationTables.Entry, compiler: inout SQLCompiler) -> SQLFragment {
        Self.selection(of: sourceLayout.entities[entry.mapping.mapping.sourceEntity!]!, filter: entry.mapping.filter, compiler: &compiler)
    }

    /// The WHERE condition (source rows aliased `s`) that selects an entity mapping's source
    /// objects: those of exactly its source entity, its filter applied.
    static func selection(of entity: StoreLayout.EntityLayout, filter: CompiledPredicate?, compiler: inout SQLCompiler) -> SQLFragment {
        var selection = SQLFragment("s.\"Z_ENT\" = \(entity.number)")
        if let filter {
            selection = selection + SQLFragment(" AND ") + compiler.sql(filter, alias: "s")
        }
        return selection
    }

    func createInstances(_ entry: AssociationTables.Entry) throws {
        let mapping = entry.mapping.mapping
        let sourceEntity = sourceLayout.entities[mapping.sourceEntity!]!
        let destinationEntity = destinationLayout.entities[mapping.destinationEntity!]!
        var compiler = SQLCompiler(layout: sourceLayout, schema: "src")
        let selection = sourceSelection(entry, compiler: &compiler)

        // Columns: attributes, then foreign keys whose targets are known now.
        var columns: [String] = ["Z_PK", "Z_ENT", "Z_OPT"]
        var values: [SQLFragment] = [SQLFragment(entry.keepsKeys ? "s.\"Z_PK\"" : "a.destination"), SQLFragment("\(destinationEntity.number)"), SQLFragment("1")]
        for attribute in step.destination.allAttributes(of: mapping.destinationEntity!) where !attribute.isTransient {
            columns.append(destinationEntity.attributeColumns[attribute.name]!)
            values.append(storedValue(attribute, in: entry, compiler: &compiler))
        }
        var deferred: [String] = []
        for relationship in step.destination.allRelationships(of: mapping.destinationEntity!) {
            guard entry.mapping.relationships[relationship.name] != nil else { continue }
            if let fused = fusedForeignKey(relationship, entry: entry, destination: destinationEntity) {
                columns += fused.columns
                values += fused.values
                writtenLinks += fused.written
            } else {
                deferred.append(relationship.name)
            }
        }
        pending[entry.number] = deferred

        let table = quoteIdentifier(destinationEntity.table)
        let root = destinationEntity.table
        if nextKeys[root] == nil { nextKeys[root] = 1 }
        let unit = "create:\(entry.number):\(mapping.name)"
        if checkpoint[unit].done {
            completed.insert(entry.number)
            report.mappings.append(StepReport.Mapping(name: mapping.name, pass: entry.pass, selected: checkpoint[unit].count, created: checkpoint[unit].count, keptKeys: entry.keepsKeys))
            return
        }
        let from = entry.keepsKeys
            ? "FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s"
            : "FROM \(quoteIdentifier(entry.table)) a JOIN \"src\".\(quoteIdentifier(sourceEntity.table)) s ON s.\"Z_PK\" = a.source"
        let insert = SQLFragment("INSERT INTO \(table) (\(columns.map(quoteIdentifier).joined(separator: ", "))) SELECT ")
            + values.dropFirst().reduce(values[0]) { $0 + SQLFragment(", ") + $1 }
            + SQLFragment(" \(from) WHERE ") + selection + SQLFragment(" AND s.\"Z_PK\" > ? AND s.\"Z_PK\" <= ?")
        let insertStatement = try connection.prepare(insert.sql)
        let batchEnd = try connection.prepare((SQLFragment("SELECT max(k) FROM (SELECT s.\"Z_PK\" AS k FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s WHERE ") + selection
            + SQLFragment(" AND s.\"Z_PK\" > ? ORDER BY s.\"Z_PK\" LIMIT ?)")).sql)
        let associate = entry.keepsKeys ? nil : try connection.prepare((SQLFragment("INSERT INTO \(quoteIdentifier(entry.table)) (source, destination) SELECT s.\"Z_PK\", ? + row_number() OVER (ORDER BY s.\"Z_PK\") - 1 FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s WHERE ")
            + selection + SQLFragment(" AND s.\"Z_PK\" > ? AND s.\"Z_PK\" <= ? ORDER BY s.\"Z_PK\"")).sql)

        var last = checkpoint[unit].lastKey
        var selected = checkpoint[unit].count
        let total = try selectedCount(sourceEntity, selection)
        while true {
            let before = selected
            try batchEnd.bind(selection.arguments + [SQLiteValue.integer(last), .integer(Int64(options.batchSize))])
            guard try batchEnd.step(), let end = batchEnd.row.value(at: 0).int64 else {
                batchEnd.reset()
                break
            }
            batchEnd.reset()
            try connection.transaction(.immediate) {
                if let associate {
                    try associate.bind([SQLiteValue.integer(nextKeys[root]!)] + selection.arguments + [.integer(last), .integer(end)])
                    try associate.run()
                    nextKeys[root]! += Int64(connection.changes)
                }
                try insertStatement.bind(values.flatMap(\.arguments) + selection.arguments + [.integer(last), .integer(end)])
                try insertStatement.run()
                selected += connection.changes
                try checkpoint.save(unit, lastKey: end, count: selected, nextKeys: nextKeys, on: connection)
            }
            last = end
            emit(.batchCommitted(mapping: mapping.name, pass: entry.pass, rows: selected - before, done: selected, total: total))
            try stopIfAsked()
        }
        try connection.transaction(.immediate) {
            if entry.keepsKeys {
                nextKeys[root] = max(nextKeys[root]!, (try connection.scalar("SELECT max(Z_PK) FROM \(table)")?.int64 ?? 0) + 1)
            }
            if let index = associations.indexStatement(entry) {
                try connection.execute(index)
            }
            try checkpoint.save(unit, lastKey: last, count: selected, done: true, nextKeys: nextKeys, on: connection)
        }
        completed.insert(entry.number)
        emit(.entityMappingFinished(mapping: mapping.name, pass: entry.pass, objects: selected))
        report.mappings.append(StepReport.Mapping(name: mapping.name, pass: entry.pass, selected: selected, created: selected, keptKeys: entry.keepsKeys))
        logger.debug("created instances", metadata: ["mapping": "\(mapping.name)", "objects": "\(selected)", "keptKeys": "\(entry.keepsKeys)"])
    }

    /// A destination to-one relationship computed inside the INSERT, when every possible target
    /// is known: its targets keep their keys, or were created already.
    func fusedForeignKey(_ relationship: Relationship, entry: AssociationTables.Entry,
                         destination: StoreLayout.EntityLayout) -> (columns: [String], values: [SQLFragment], written: [LinkEnds])? {
        guard !relationship.isToMany, let column = destination.foreignKeyColumns[relationship.name] else { return nil }
        let (sourceRelationshipName, targets) = targets(of: relationship, in: entry)
        guard let sourceRelationship = step.source.allRelationships(of: entry.mapping.mapping.sourceEntity!).first(where: { $0.name == sourceRelationshipName }),
              !sourceRelationship.isToMany,
              let sourceColumn = sourceLayout.entities[entry.mapping.mapping.sourceEntity!]!.foreignKeyColumns[sourceRelationshipName],
              !targets.isEmpty, targets.allSatisfy({ $0.keepsKeys || completed.contains($0.number) }) else { return nil }
        let key = "s.\(quoteIdentifier(sourceColumn))"
        var columns = [column]
        var values = [SQLFragment(associations.lookup(targets, key: key))]
        if let entityColumn = destination.entityColumns[relationship.name] {
            columns.append(entityColumn)
            values.append(SQLFragment(associations.entityNumber(targets, key: key)))
        }
        let ends = linkEnds(entry, storage: .foreignKey(column: column), targets: targets)
        var written = [ends]
        if let orderColumn = destination.orderColumns[relationship.name],
           let sourceOrder = sourceLayout.entities[entry.mapping.mapping.sourceEntity!]!.orderColumns[sourceRelationshipName] {
            // The inverse to-many is ordered and so was the source's: keep its order. Otherwise
            // the to-many side's mapping numbers them in stage 2.
            columns.append(orderColumn)
            values.append(SQLFragment("s.\(quoteIdentifier(sourceOrder))"))
            written.append(ends.order(orderColumn))
        }
        return (columns, values, written)
    }

    /// The source relationship a relationship mapping of `entry` reads, and the entity mappings
    /// whose objects it links to: the one it names (in this pass or an earlier one — a plan may
    /// cut one mapping into several passes), or every mapping of the source relationship's
    /// destination; only those that make objects the destination relationship can hold.
    ///
    /// `throughPass` widens the look to later passes: once every pass has run, links to objects a
    /// later pass made are caught up (a plan may cut mappings into passes in any way), and
    /// verification expects them.
    func targets(of relationship: Relationship, in entry: AssociationTables.Entry, throughPass: Int? = nil) -> (String, [AssociationTables.Entry]) {
        let holdable = Set(step.destination.descendants(of: relationship.destination).map(\.name))
        let pass = throughPass ?? entry.pass
        let (name, candidates): (String, [AssociationTables.Entry])
        switch entry.mapping.relationships[relationship.name]! {
        case .entityMapping(let mapping, let source):
            (name, candidates) = (source, associations.entries(named: mapping, pass: pass))
        case .sourceRelationship(let source):
            let destination = step.source.allRelationships(of: entry.mapping.mapping.sourceEntity!).first { $0.name == source }!.destination
            (name, candidates) = (source, associations.entries(coveringSourceEntity: destination, pass: pass))
        }
        return (name, candidates.filter { holdable.contains($0.mapping.mapping.destinationEntity!) })
    }
}
