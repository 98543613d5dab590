import TernSQLite
import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability

/// The writer's prepared statements for batches that ran in Swift, and per destination entity
/// which attribute (and default) fills each inserted column, worked out once.
final class SwiftBatchStatements {
    let objects: ObjectWriter
    let link: Statement
    let findUnique: Statement
    let recordUnique: Statement
    let recordWriter: Statement
    /// Association rows, `rowsPerInsert` at a time, and one at a time for the rest.
    private let associateGroup: Statement
    private let associateOne: Statement
    static let associationsPerInsert = ObjectWriter.rowsPerInsert(columns: 2)
    /// The entity the fused to-ones are written for, and where their values go in its columns.
    let foreignKeysEntity: String
    let foreignKeyPositions: [Int]

    /// What fills one destination entity's inserted columns.
    struct Columns {
        let layout: StoreLayout.EntityLayout
        /// Per inserted column, the attribute it holds (nil for a to-one's columns) and its default.
        let sources: [(attribute: String?, defaultValue: SQLiteValue)]
    }

    init(connection: Connection, layout: StoreLayout, associationTable: String, foreignKeys: (entity: String, columns: [String])) throws {
        objects = try ObjectWriter(connection: connection, layout: layout)
        let association = "INSERT INTO \(quoteIdentifier(associationTable)) (source, destination, entity) VALUES "
        associateGroup = try connection.prepare(association + Array(repeating: "(?, ?, ?)", count: Self.associationsPerInsert).joined(separator: ", "))
        associateOne = try connection.prepare(association + "(?, ?, ?)")
        link = try connection.prepare(
            "INSERT INTO \(StepWorkspace.linksTable) (owner, owner_entity, relationship, target, target_entity, target_mapping) VALUES (?, ?, ?, ?, ?, ?)")
        findUnique = try connection.prepare("SELECT destination FROM \(StepWorkspace.uniqueTable) WHERE entity = ? AND identity = ?")
        recordUnique = try connection.prepare("INSERT INTO \(StepWorkspace.uniqueTable) (entity, identity, destination) VALUES (?, ?, ?)")
        recordWriter = try connection.prepare("INSERT OR IGNORE INTO \(StepWorkspace.writersTable) (entry, root) VALUES (?, ?)")
        foreignKeysEntity = foreignKeys.entity
        let inserted = foreignKeys.columns.isEmpty ? [] : try objects.insertColumns(for: foreignKeys.entity)
        foreignKeyPositions = foreignKeys.columns.map { inserted.firstIndex(of: $0)! }
    }

    private var columnSources: [String: Columns] = [:]
    /// The last entity asked for: a batch's objects are mostly of one entity.
    private var last: (entity: String, columns: Columns)?

    /// For each column `objects` inserts for `entity`: the attribute it holds and its default.
    func columns(of entity: String, layout: StoreLayout, model: ObjectModel) throws -> Columns? {
        if let last, last.entity == entity { return last.columns }
        if let known = columnSources[entity] {
            last = (entity, known)
            return known
        }
        guard let entityLayout = layout.entities[entity] else { return nil }
        let defaults = Dictionary(
            uniqueKeysWithValues: model.allAttributes(of: entity).map { attribute in
                // A default kept outside the store is too large to be one: stored inline, behind its marker.
                guard attribute.allowsExternalStorage, case .blob(let bytes)? = attribute.defaultValue else {
                    return (attribute.name, attribute.defaultValue ?? .null)
                }
                return (attribute.name, SQLiteValue.blob(ExternalBinaryData.inlineValue(bytes)))
            })
        let attributeOfColumn = Dictionary(entityLayout.attributeColumns.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        let sources = try objects.insertColumns(for: entity).map { column -> (attribute: String?, defaultValue: SQLiteValue) in
            let attribute = attributeOfColumn[column]
            return (attribute, attribute.flatMap { defaults[$0] } ?? .null)
        }
        let columns = Columns(layout: entityLayout, sources: sources)
        columnSources[entity] = columns
        last = (entity, columns)
        return columns
    }

    /// Inserts association rows `(source, destination, entity)`, several per statement.
    func associate(_ rows: [(source: Int64, destination: Int64, entity: Int64)]) throws {
        var index = 0
        while rows.count - index >= Self.associationsPerInsert {
            for row in 0..<Self.associationsPerInsert {
                let (source, destination, entity) = rows[index + row]
                try associateGroup.bind(source, at: 3 * row + 1)
                try associateGroup.bind(destination, at: 3 * row + 2)
                try associateGroup.bind(entity, at: 3 * row + 3)
            }
            try associateGroup.run()
            index += Self.associationsPerInsert
        }
        for (source, destination, entity) in rows[index...] {
            try associateOne.bind([source, destination, entity])
            try associateOne.run()
        }
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
    /// next key in creation order), then associations, then links. Objects of one entity in a
    /// row are inserted together, several per statement (`ObjectWriter.insert(_:keys:values:)`).
    func write(_ batch: TransformedBatch, of entry: PlannedMapping, with statements: SwiftBatchStatements) throws {
        let mapping = entry.entityMapping
        let sourceKeys = sourceKeys(batch, of: entry)
        var keys: [Int64] = []
        keys.reserveCapacity(batch.objects.count)
        var tables: Set<String> = []
        /// Objects not yet inserted, all of `pendingEntity`: their keys and their columns' values.
        var pendingEntity = ""
        var pendingKeys: [Int64] = []
        var pendingValues: [SQLiteValue] = []
        /// For objects with slots (`DestinationObject.Slots`): the slot each inserted column reads.
        var slotColumns: (slots: DestinationObject.Slots, positions: [Int?])?
        func insertPending() throws {
            guard !pendingKeys.isEmpty else { return }
            try statements.objects.insert(pendingEntity, keys: pendingKeys[...], values: pendingValues[...])
            pendingKeys.removeAll(keepingCapacity: true)
            pendingValues.removeAll(keepingCapacity: true)
        }
        for (index, object) in batch.objects.enumerated() {
            guard let columns = try statements.columns(of: object.entity, layout: destinationLayout, model: step.destination) else {
                throw TernError(
                    .badInput,
                    "entity mapping \(mapping.name): the policy created an object of \(object.entity), which is not in \(step.destination.versionName)")
            }
            var identity: String?
            if let identifying = batch.identities[index] {
                // Values joined as SQL literals: unambiguous, and the same text for the same values.
                identity = identifying.map { object.value(of: $0)?.sqlLiteral ?? "NULL" }.joined(separator: ",")
                try statements.findUnique.bind([object.entity, identity!])
                let found = try statements.findUnique.step() ? statements.findUnique.row.int64(at: 0) : nil
                statements.findUnique.reset()
                if let found {
                    keys.append(found)
                    continue
                }
            }
            let table = columns.layout.table
            let key: Int64
            if let sourceKey = sourceKeys[index] {
                key = sourceKey
            } else {
                key = nextKeys[table, default: 1]
                nextKeys[table] = key + 1
            }
            keys.append(key)
            if object.entity != pendingEntity {
                try insertPending()
                pendingEntity = object.entity
                tables.insert(table)
            }
            pendingKeys.append(key)
            let first = pendingValues.count
            if pendingValues.capacity == 0 { pendingValues.reserveCapacity(batch.objects.count * columns.sources.count) }
            if let slots = object.slots, object.otherValues.isEmpty {
                // The mapping's default objects: each column's slot, found once per batch.
                if slotColumns?.slots !== slots {
                    slotColumns = (slots, columns.sources.map { $0.attribute.flatMap { slots.positions[$0] } })
                }
                for (column, slot) in zip(columns.sources, slotColumns!.positions) {
                    pendingValues.append(slot.flatMap { object.slotValues[$0] } ?? column.defaultValue)
                }
            } else {
                for column in columns.sources {
                    pendingValues.append(column.attribute.flatMap { object.value(of: $0) } ?? column.defaultValue)
                }
            }
            if !batch.foreignKeys.isEmpty, object.entity == statements.foreignKeysEntity {
                let fused = statements.foreignKeyPositions.count
                for (offset, position) in statements.foreignKeyPositions.enumerated() {
                    pendingValues[first + position] = batch.foreignKeys[index * fused + offset]
                }
            }
            if let identity {
                try statements.recordUnique.bind([object.entity, identity, key])
                try statements.recordUnique.run()
            }
        }
        try insertPending()
        for table in tables {
            try statements.recordWriter.bind([Int64(entry.number), table])
            try statements.recordWriter.run()
        }
        countUnassociated(batch, of: entry)
        var entityNumbers: (entity: String, number: Int64) = ("", 0)
        let rows = batch.associations.map { source, index in
            let entity = batch.objects[index].entity
            if entity != entityNumbers.entity { entityNumbers = (entity, Int64(destinationLayout.entities[entity]!.number)) }
            return (source: source, destination: keys[index], entity: entityNumbers.number)
        }
        if entry.policyMayKeepKeys {
            // One per object that took the key handed to it (at most one object per source
            // object, and each source object in one batch): a second association of the same
            // object or source object is another row, so it counts as other.
            let identity = sourceKeys.indices.count { index in
                sourceKeys[index] != nil && keys[index] == sourceKeys[index] && batch.objects[index].entity == entry.destinationEntity
            }
            identityAssociations[entry.number, default: (0, 0)].identity += identity
            identityAssociations[entry.number, default: (0, 0)].other += rows.count - identity
        }
        try statements.associate(rows)
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

    /// Per object index, the source key it takes, or nil (`PlannedMapping.policyMayKeepKeys`): for each
    /// source object of this batch, the first object of the mapping's destination table it was
    /// associated with. Decided by source object, so the same whatever the batch boundaries;
    /// the key counter starts above every source key, so no other object can hold one.
    private func sourceKeys(_ batch: TransformedBatch, of entry: PlannedMapping) -> [Int64?] {
        var given = [Int64?](repeating: nil, count: batch.objects.count)
        guard entry.policyMayKeepKeys else { return given }
        let table = destinationLayout.entities[entry.destinationEntity]!.table
        var taken: Set<Int64> = []
        taken.reserveCapacity(batch.associations.count)
        for (source, index) in batch.associations where batch.after < source && source <= batch.end && given[index] == nil && !taken.contains(source) {
            let entity = batch.objects[index].entity
            guard entity == entry.destinationEntity || destinationLayout.entities[entity]?.table == table else { continue }
            given[index] = source
            taken.insert(source)
        }
        return given
    }
}
