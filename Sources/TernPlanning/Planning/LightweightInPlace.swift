import Foundation
import TernModel
import TernStore
import TernMapping
import TernSQLite

/// Applies an inferred step as schema changes inside the store: renamed tables and columns, new
/// tables, new metadata, in one transaction, without reading a row into Tern. A table whose
/// columns change otherwise (one added, dropped, or renamed out of its place) is rebuilt in SQL
/// in the destination's column order, as Core Data rebuilds it: the result is the table Core Data
/// writes, not one with columns appended (wibosco's `color → hexColor`, objc.io's `rating`).
///
/// Only when every entity keeps its number (Core Data numbers entities by name, so some renames
/// move them), every kept column keeps its declared type, and nothing needs values computed (a
/// column becoming non-optional, a new order, a value moving in or out of external storage)
/// does a step qualify. Before committing, the store's tables and columns must equal the destination layout exactly; otherwise the
/// transaction rolls back and the step is copied instead.
package enum LightweightInPlace {
    /// The prefixes of the tables and columns the statements make while they move things aside
    /// (`tern_rebuilt_ZITEM`, `tern_renaming_ZITEM`): no object of a store may use them.
    static let workTablePrefixes = [rebuilt, renaming]
    private static let rebuilt = "tern_rebuilt_"
    private static let renaming = "tern_renaming_"

    /// The SQL that turns a store of `step.source` into one of `step.destination`, or nil when the
    /// step does not qualify.
    static func statements(for step: MigrationStep) -> [String]? {
        // A store an earlier Tern laid out is copied: the copy writes Core Data's layout.
        guard step.isInferred, step.passes.count == 1, step.sourceRules == .coreData else { return nil }
        let source = step.sourceLayout
        let destination = StoreLayout(model: step.destination)
        let sourceNumbers = step.source.entityNumbers
        let destinationNumbers = step.destination.entityNumbers
        var statements: [String] = []
        var renamedTables: [String: String] = [:]
        // Source table → (destination column → the source column whose values it keeps).
        var kept: [String: [String: String]] = [:]
        func keep(_ table: String, _ old: String, as new: String) { kept[table, default: [:]][new] = old }
        // Source table → (new destination column → its default, an SQL literal).
        var defaults: [String: [String: String]] = [:]
        var sourceOf: [String: String] = [:]
        // A column new to one entity that its table already has for another (a relationship
        // moved from a subentity to its parent): the entity's rows need values cleared, a copy.
        func has(_ table: String, _ column: String) -> Bool {
            source.tables.first { $0.name == table }?.columns.contains { $0.name == column } ?? false
        }

        // Which source entity each destination entity's objects come from, for every mapping.
        let imageOf = Dictionary(
            step.passes[0].entities.compactMap { entity in
                entity.mapping.destinationEntity.flatMap { destination in entity.mapping.sourceEntity.map { (destination, $0) } }
            }, uniquingKeysWith: { first, _ in first })
        for entity in step.passes[0].entities {
            let mapping = entity.mapping
            guard let sourceName = mapping.sourceEntity, let destinationName = mapping.destinationEntity else {
                if mapping.type == .remove { return nil }  // removing data is a copy
                continue
            }
            guard sourceNumbers[sourceName] == destinationNumbers[destinationName],
                step.source.entity(named: sourceName)?.parent.flatMap({ sourceNumbers[$0] })
                    == step.destination.entity(named: destinationName)?.parent.flatMap({ destinationNumbers[$0] })
            else { return nil }
            sourceOf[destinationName] = sourceName
            let from = source.entities[sourceName]!
            let to = destination.entities[destinationName]!
            if from.table != to.table { renamedTables[from.table] = to.table }
            // Attributes: a copy of a source attribute may be a rename; a new one is added.
            for attribute in step.destination.allAttributes(of: destinationName) where !attribute.isTransient {
                let column = to.attributeColumns[attribute.name]!
                if let compiled = entity.attributes[attribute.name] {
                    guard case .input(0) = compiled.expression, compiled.inputs.count == 1, compiled.inputs[0].relationships.isEmpty,
                        case .attribute(let old) = compiled.inputs[0].final,
                        let oldAttribute = step.source.allAttributes(of: sourceName).first(where: { $0.name == old }),
                        oldAttribute.type.columnDeclaration == attribute.type.columnDeclaration,
                        // Values stored outside the store are decoded or encoded: a copy.
                        oldAttribute.allowsExternalStorage == attribute.allowsExternalStorage,
                        let oldColumn = from.attributeColumns[old]
                    else { return nil }
                    keep(from.table, oldColumn, as: column)
                } else {
                    guard !has(from.table, column) else { return nil }
                    if let value = attribute.defaultValue { defaults[from.table, default: [:]][column] = value.sqlLiteral }
                }
            }
            // A relationship read from one that reaches other objects (its destination or the entity
            // declaring it changed, say to a subentity or its parent) keeps links it can no longer
            // hold, or lets rows keep a key no property owns: values are needed.
            for relationship in step.destination.allRelationships(of: destinationName) where !relationship.isTransient {
                guard let old = sourceRelationshipName(entity.relationships[relationship.name]) else { continue }
                guard let oldRelationship = step.source.allRelationships(of: sourceName).first(where: { $0.name == old }),
                    imageOf[relationship.destination] == oldRelationship.destination,
                    imageOf[step.destination.entityDeclaring(relationship: relationship.name, from: destinationName)]
                        == step.source.entityDeclaring(relationship: old, from: sourceName)
                else { return nil }
                // Only the objects one entity mapping made: in place only if it makes them all.
                if case .entityMapping(let name, _)? = entity.relationships[relationship.name] {
                    let reachable = Set(step.source.descendants(of: oldRelationship.destination).map(\.name))
                    let makers = step.passes[0].entities.filter {
                        $0.mapping.sourceEntity.map(reachable.contains) == true && $0.mapping.destinationEntity != nil
                    }
                    guard makers.map(\.mapping.name) == [name] else { return nil }
                }
            }
            // To-one relationships keep or rename their key columns, or start empty.
            for relationship in step.destination.allRelationships(of: destinationName) where !relationship.isToMany && !relationship.isTransient {
                let columns = [to.foreignKeyColumns[relationship.name], to.entityColumns[relationship.name], to.orderColumns[relationship.name]]
                if let old = sourceRelationshipName(entity.relationships[relationship.name]) {
                    guard let oldRelationship = step.source.allRelationships(of: sourceName).first(where: { $0.name == old }), !oldRelationship.isToMany else {
                        return nil
                    }
                    let oldColumns = [from.foreignKeyColumns[old], from.entityColumns[old], from.orderColumns[old]]
                    for (oldColumn, newColumn) in zip(oldColumns, columns) {
                        switch (oldColumn, newColumn) {
                        case (nil, nil): continue
                        case (let a?, let b?):
                            keep(from.table, a, as: b)
                        default: return nil  // an order or entity column appears or goes: values needed
                        }
                    }
                } else {
                    for case let column? in columns where has(from.table, column) { return nil }
                }
            }
            // Hidden keys of to-manys with no inverse: kept (or renamed) where the owner's mapping
            // reads the same kind of relationship, added empty where the relationship is new.
            for hidden in to.hiddenKeys {
                let ownerMapping = step.passes[0].entities.first { $0.mapping.destinationEntity == hidden.owner }
                let columns = [hidden.column, hidden.orderColumn]
                guard let ownerMapping, let old = sourceRelationshipName(ownerMapping.relationships[hidden.relationship]) else {
                    for case let column? in columns where has(from.table, column) { return nil }
                    continue
                }
                guard let oldKey = from.hiddenKeys.first(where: { $0.owner == ownerMapping.mapping.sourceEntity && $0.relationship == old }),
                    (oldKey.orderColumn == nil) == (hidden.orderColumn == nil)
                else { return nil }
                for case let (a?, b?) in zip([oldKey.column, oldKey.orderColumn], columns) {
                    keep(from.table, a, as: b)
                }
            }
        }
        // Each entity table: its columns renamed where they keep their order, else rebuilt.
        var columnRenames: (first: [String], last: [String]) = ([], [])
        var rebuilds: [String] = []
        var rebuilt: [(temporary: String, name: String)] = []
        for table in Set(source.entities.values.map(\.table)).sorted() {
            guard sourceOf.values.contains(where: { source.entities[$0]?.table == table }) else { return nil }
            let target = renamedTables[table] ?? table
            guard let old = source.tables.first(where: { $0.name == table }),
                let new = destination.tables.first(where: { $0.name == target })
            else { return nil }
            var keeps = kept[table, default: [:]]
            for fixed in ["Z_PK", "Z_ENT", "Z_OPT"] { keeps[fixed] = fixed }
            if new.columns.map({ keeps[$0.name] }) == old.columns.map(\.name) {
                // Through names of their own first, so renames may swap names (a → b, b → a).
                for (newName, oldName) in keeps.sorted(by: { $0.key < $1.key }) where newName != oldName {
                    columnRenames.first.append(Self.renameColumn(table, oldName, Self.renaming + oldName))
                    columnRenames.last.append(Self.renameColumn(table, Self.renaming + oldName, newName))
                }
            } else {
                let temporary = Self.rebuilt + target
                let values = new.columns.map { column in
                    keeps[column.name].map(quoteIdentifier) ?? defaults[table]?[column.name] ?? "NULL"
                }
                rebuilds += [
                    destination.createStatement(new, named: temporary),
                    "INSERT INTO \(quoteIdentifier(temporary)) SELECT \(values.joined(separator: ", ")) FROM \(quoteIdentifier(table))",
                    "DROP TABLE \(quoteIdentifier(table))",
                ]
                rebuilt.append((temporary, target))
                renamedTables[table] = nil
            }
        }
        // Join tables must carry over unchanged; new ones are created.
        let sourceJoins = Set(source.joinTables.map(\.table))
        for join in destination.joinTables {
            guard !sourceJoins.contains(join.table) else { continue }
            guard destinationRelationshipIsNew(join, step: step, sourceOf: sourceOf) else { return nil }
            statements.append(destination.createStatement(destination.tables.first { $0.name == join.table }!))
        }
        guard Set(destination.joinTables.map(\.table)).isSuperset(of: sourceJoins) else { return nil }
        // "Unchanged" down to their columns: an order column that comes or goes is a copy.
        let columns = { (layout: StoreLayout, table: String) in Set(layout.tables.first { $0.name == table }?.columns.map(\.name) ?? []) }
        guard sourceJoins.allSatisfy({ columns(source, $0) == columns(destination, $0) }) else { return nil }
        // New entities get their tables and key rows.
        for entity in step.destination.entitiesInStoreOrder where sourceOf[entity.name] == nil {
            let layout = destination.entities[entity.name]!
            if entity.parent == nil {
                statements.append(destination.createStatement(destination.tables.first { $0.name == layout.table }!))
            } else if sourceOf.values.contains(where: { source.entities[$0]?.table == layout.table }) == false {
                return nil
            }
            statements.append(destination.addKeyCounter(of: entity.name)!)
        }
        for (destinationName, sourceName) in sourceOf where destinationName != sourceName {
            statements.append(StoreLayout.renameKeyCounter(number: sourceNumbers[sourceName]!, to: destinationName))
        }
        // Column changes name the source tables, so tables are renamed last — through names of
        // their own, as columns are, so that one may take a name another gives up (A → B, B → C).
        let tables = renamedTables.sorted(by: { $0.key < $1.key })
        return columnRenames.first + rebuilds + statements + columnRenames.last
            + tables.map { "ALTER TABLE \(quoteIdentifier($0.key)) RENAME TO \(quoteIdentifier(Self.renaming + $0.key))" }
            + tables.map { "ALTER TABLE \(quoteIdentifier(Self.renaming + $0.key)) RENAME TO \(quoteIdentifier($0.value))" }
            + rebuilt.map { "ALTER TABLE \(quoteIdentifier($0.temporary)) RENAME TO \(quoteIdentifier($0.name))" }
    }

    private static func sourceRelationshipName(_ source: ValidatedMapping.RelationshipSource?) -> String? {
        switch source {
        case .entityMapping(_, let relationship)?: relationship
        case .sourceRelationship(let relationship)?: relationship
        case nil: nil
        }
    }

    private static func destinationRelationshipIsNew(_ join: StoreLayout.JoinTable, step: MigrationStep, sourceOf: [String: String]) -> Bool {
        let owner = step.passes[0].entities.first { $0.mapping.destinationEntity == join.entity }
        return owner?.relationships[join.relationship] == nil
    }

    private static func renameColumn(_ table: String, _ old: String, _ new: String) -> String {
        "ALTER TABLE \(quoteIdentifier(table)) RENAME COLUMN \(quoteIdentifier(old)) TO \(quoteIdentifier(new))"
    }

    /// Runs the statements on `connection` in one transaction, with the destination's metadata
    /// and indexes, and checks the result against the destination layout before committing.
    ///
    /// - Returns: false (and changes nothing) when the result would not be the destination layout.
    package static func apply(_ statements: [String], step: MigrationStep, to connection: Connection) throws -> Bool {
        let destination = StoreLayout(model: step.destination)
        do {
            try connection.transaction(.immediate) {
                // The indexes of the model's tables are rebuilt from the destination model, and so are
                // Core Data's triggers (a derived attribute's), which name tables a rebuild replaces;
                // an app's views, triggers and indexes on the model's tables are set aside and made
                // again (the plan checked they hold), and its own tables keep their indexes.
                let modelTables = Set(step.sourceLayout.tables.map(\.name))
                let appObjects = try AppSchemaObjects.read(connection, layout: step.sourceLayout)
                let appIndexes = Set(appObjects.filter { $0.type == "index" }.map(\.name))
                let indexes = try connection.prepare("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
                var drops: [String] = []
                var rows = indexes.rows()
                while let row = try rows.next() {
                    let name = row.text(at: 0) ?? ""
                    if modelTables.contains(row.text(at: 1) ?? ""), !appIndexes.contains(name) { drops.append("DROP INDEX \(quoteIdentifier(name))") }
                }
                let coreDataTriggers = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'Z\\_DA\\_%' ESCAPE '\\'")
                var triggerRows = coreDataTriggers.rows()
                while let row = try triggerRows.next() { drops.append("DROP TRIGGER \(quoteIdentifier(row.text(at: 0)!))") }
                // Triggers first: dropping a view drops its INSTEAD OF triggers with it.
                let order = ["trigger": 0, "view": 1, "index": 2]
                drops += appObjects.sorted { order[$0.type, default: 3] < order[$1.type, default: 3] }
                    .map { "DROP \($0.type.uppercased()) IF EXISTS \(quoteIdentifier($0.name))" }
                for drop in drops { try connection.execute(drop) }
                for statement in statements { try connection.execute(statement) }
                try rebuildTablesWithConstraints(destination, connection: connection)
                guard LayoutSignature(layout: destination) == (try LayoutSignature(connection: connection)) else {
                    throw InPlaceMismatch()  // rolls the transaction back
                }
                for statement in destination.indexStatements + destination.derivedValueStatements + destination.triggerStatements + appObjects.map(\.sql) {
                    try connection.execute(statement)
                }
                try connection.execute("UPDATE Z_METADATA SET Z_PLIST = ?", StoreFile.metadataPlist(for: step.destination))
            }
            return true
        } catch is InPlaceMismatch {
            return false
        }
    }

    struct InPlaceMismatch: Error {}

    /// Core Data 637 (objc.io's stores) kept uniqueness constraints inside `CREATE TABLE`; today's
    /// Core Data keeps them as unique indexes. A table of the old kind is rebuilt as today's
    /// layout has it, its rows copied in SQL, so the migrated store is the one Core Data writes.
    private static func rebuildTablesWithConstraints(_ destination: StoreLayout, connection: Connection) throws {
        for table in destination.tables where table.constraints.isEmpty {
            guard let sql = try connection.scalar("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", table.name)?.text,
                sql.contains("CONSTRAINT")
            else { continue }
            let temporary = Self.rebuilt + table.name
            let columns = table.columns.map { quoteIdentifier($0.name) }.joined(separator: ", ")
            try connection.execute(destination.createStatement(table, named: temporary))
            try connection.execute("INSERT INTO \(quoteIdentifier(temporary)) (\(columns)) SELECT \(columns) FROM \(quoteIdentifier(table.name))")
            try connection.execute("DROP TABLE \(quoteIdentifier(table.name))")
            try connection.execute("ALTER TABLE \(quoteIdentifier(temporary)) RENAME TO \(quoteIdentifier(table.name))")
        }
    }
}
