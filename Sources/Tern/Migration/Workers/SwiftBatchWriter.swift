import TernSQLite
import TernModel
import TernStore
import TernMapping

/// The writer's prepared statements for batches that ran in Swift, and per destination entity
/// which attribute (and default) fills each inserted column, worked out once.
final class SwiftBatchStatements {
    let objects: ObjectWriter
    let associate: Statement
    let link: Statement
    let findUnique: Statement
    let recordUnique: Statement
    let recordWriter: Statement

    init(connection: Connection, layout: StoreLayout, associationTable: String) throws {
        objects = try ObjectWriter(connection: connection, layout: layout)
        associate = try connection.prepare("INSERT INTO \(quoteIdentifier(associationTable)) (source, destination, entity) VALUES (?, ?, ?)")
        link = try connection.prepare(
            "INSERT INTO \(StepWorkspace.linksTable) (owner, owner_entity, relationship, target, target_entity, target_mapping) VALUES (?, ?, ?, ?, ?, ?)")
        findUnique = try connection.prepare("SELECT destination FROM \(StepWorkspace.uniqueTable) WHERE entity = ? AND identity = ?")
        recordUnique = try connection.prepare("INSERT INTO \(StepWorkspace.uniqueTable) (entity, identity, destination) VALUES (?, ?, ?)")
        recordWriter = try connection.prepare("INSERT OR IGNORE INTO \(StepWorkspace.writersTable) (entry, root) VALUES (?, ?)")
    }

    private var columnSources: [String: [(attribute: String?, defaultValue: SQLiteValue)]] = [:]

    /// For each column `objects` inserts for `entity`: the attribute it holds and its default.
    func columns(of entity: String, layout: StoreLayout.EntityLayout, model: ObjectModel) throws -> [(attribute: String?, defaultValue: SQLiteValue)] {
        if let known = columnSources[entity] { return known }
        let defaults = Dictionary(
            uniqueKeysWithValues: model.allAttributes(of: entity).map { attribute in
                // A default kept outside the store is too large to be one: stored inline, behind its marker.
                guard attribute.allowsExternalStorage, case .blob(let bytes)? = attribute.defaultValue else {
                    return (attribute.name, attribute.defaultValue ?? .null)
                }
                return (attribute.name, SQLiteValue.blob(ExternalBinaryData.inlineValue(bytes)))
            })
        let attributeOfColumn = Dictionary(layout.attributeColumns.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        let sources = try objects.insertColumns(for: entity).map { column -> (attribute: String?, defaultValue: SQLiteValue) in
            let attribute = attributeOfColumn[column]
            return (attribute, attribute.flatMap { defaults[$0] } ?? .null)
        }
        columnSources[entity] = sources
        return sources
    }
}

extension StepMigrator {
    /// Counts the batch's objects of the mapping's destination entity that have no source object
    /// and no link of the policy's: the mapping's relationship mappings cannot reach them.
    private func countUnassociated(_ batch: TransformedBatch, of entry: PlannedMapping) {
        let mapping = entry.entityMapping
        guard mapping.relationshipMappings.contains(where: { $0.valueExpression != nil }) else { return }
        var reached = Set(batch.associations.map(\.1))
        for (owner, _, target) in batch.links {
            reached.insert(owner)
            if case .created(let handle) = target { reached.insert(handle.index) }
        }
        let found = Set(batch.identities.keys)
        let count = batch.objects.indices.filter { batch.objects[$0].entity == mapping.destinationEntity && !reached.contains($0) && !found.contains($0) }.count
        if count > 0 { unassociated[entry.number, default: 0] += count }
    }

    /// Writes one transformed batch inside the caller's transaction: destination keys (the
    /// existing object for `findOrCreate`, the source key where `sourceKeys` gives it, else the
    /// next key in creation order), then associations, then links.
    func write(_ batch: TransformedBatch, of entry: PlannedMapping, with statements: SwiftBatchStatements) throws {
        let mapping = entry.entityMapping
        let sourceKeys = sourceKeys(batch, of: entry)
        var keys: [Int64] = []
        keys.reserveCapacity(batch.objects.count)
        var tables: Set<String> = []
        for (index, object) in batch.objects.enumerated() {
            guard let layout = destinationLayout.entities[object.entity] else {
                throw TernError(
                    .badInput,
                    "entity mapping \(mapping.name): the policy created an object of \(object.entity), which is not in \(step.destination.versionName)")
            }
            var identity: String?
            if let identifying = batch.identities[index] {
                // Values joined as SQL literals: unambiguous, and the same text for the same values.
                identity = identifying.map { object.values[$0]?.sqlLiteral ?? "NULL" }.joined(separator: ",")
                try statements.findUnique.bind([object.entity, identity!])
                let found = try statements.findUnique.step() ? statements.findUnique.row.int64(at: 0) : nil
                statements.findUnique.reset()
                if let found {
                    keys.append(found)
                    continue
                }
            }
            let key: Int64
            if let sourceKey = sourceKeys[index] {
                key = sourceKey
            } else {
                key = nextKeys[layout.table, default: 1]
                nextKeys[layout.table] = key + 1
            }
            keys.append(key)
            let values = try statements.columns(of: object.entity, layout: layout, model: step.destination).map { column in
                column.attribute.flatMap { object.values[$0] } ?? column.defaultValue
            }
            try statements.objects.insert(object.entity, key: key, values: values)
            tables.insert(layout.table)
            if let identity {
                try statements.recordUnique.bind([object.entity, identity, key])
                try statements.recordUnique.run()
            }
        }
        for table in tables {
            try statements.recordWriter.bind([Int64(entry.number), table])
            try statements.recordWriter.run()
        }
        countUnassociated(batch, of: entry)
        for (source, index) in batch.associations {
            try statements.associate.bind([source, keys[index], Int64(destinationLayout.entities[batch.objects[index].entity]!.number)])
            try statements.associate.run()
        }
        for (owner, relationship, target) in batch.links {
            let (targetKey, targetEntity, targetMapping): (Int64, String, String?)
            switch target {
            case .created(let handle): (targetKey, targetEntity, targetMapping) = (keys[handle.index], batch.objects[handle.index].entity, nil)
            case .existing(let key, let entity): (targetKey, targetEntity, targetMapping) = (key, entity, nil)
            case .migrated(let sourceKey, let name):
                guard let target = associations.entry(named: name, pass: entry.pass) else {
                    throw TernError(.badInput, "entity mapping \(mapping.name): the policy linked to objects of entity mapping \(name), which does not exist")
                }
                (targetKey, targetEntity, targetMapping) = (sourceKey, target.destinationEntity, name)
            }
            try statements.link.bind([keys[owner], batch.objects[owner].entity, relationship, targetKey, targetEntity, targetMapping])
            try statements.link.run()
        }
    }

    /// Object index → the source key it takes (`PlannedMapping.policyMayKeepKeys`): for each
    /// source object of this batch, the first object of the mapping's destination table it was
    /// associated with. Decided by source object, so the same whatever the batch boundaries;
    /// the key counter starts above every source key, so no other object can hold one.
    private func sourceKeys(_ batch: TransformedBatch, of entry: PlannedMapping) -> [Int: Int64] {
        guard entry.policyMayKeepKeys else { return [:] }
        let table = destinationLayout.entities[entry.destinationEntity]!.table
        var given: [Int: Int64] = [:]
        var taken: Set<Int64> = []
        for (source, index) in batch.associations where batch.after < source && source <= batch.end && given[index] == nil && !taken.contains(source) {
            guard destinationLayout.entities[batch.objects[index].entity]?.table == table else { continue }
            given[index] = source
            taken.insert(source)
        }
        return given
    }
}
