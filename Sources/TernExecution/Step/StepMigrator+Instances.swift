import TernSQLite
import TernModel
import TernStore
import TernMapping
import TernLoop
import TernPlanning
import TernDurability

extension StepMigrator {
    // MARK: Stage 1: create destination instances

    /// Stage 1 of one entity mapping, whichever way its batches are written: a mapping an
    /// earlier run finished is replayed (its report, no writes); otherwise its source objects go
    /// in key order, batch after batch from the last checkpoint, each batch committed with the
    /// checkpoint, then reported, then a stop request honoured; last, the mapping's association
    /// index and its finished mark commit together.
    func createInstances(_ entry: PlannedMapping, writer: some InstanceBatchWriter) throws {
        let mapping = entry.entityMapping
        let unit = WorkUnit.createInstances(mapping: entry.number, name: mapping.name)
        pending[entry.number] = writer.deferredRelationships
        let recorded = workspace[unit]
        var swiftTimes: StepReport.SwiftTimes?
        if !recorded.done {
            let sourceTable = sourceLayout.entities[entry.sourceEntity]!.table
            var batches = try SourceBatches(
                connection: connection, table: sourceTable, selection: writer.selection, size: writer.batchSize,
                weight: writer.batchWeight, after: recorded.lastKey)
            var selected = recorded.count
            let total = try batches.total()
            // Work beside the pass waits while the writing needs every core.
            swiftTimes = try coreGate.holding(if: writer.usesEveryCore) {
                try writer.writeAll(&batches) { end, write in
                    let before = selected
                    try workspace.commit(unit) {
                        selected += try write()
                        return StepWorkspace.Progress(lastKey: end, count: selected)
                    }
                    emit(.batchCommitted(mapping: mapping.name, pass: entry.pass + 1, rows: selected - before, done: selected, total: total))
                    options.reached?(.batchCommitted)
                    try stopIfAsked()
                }
            }
            // Whether a policy kept every key is found once, as the mapping's stage 1 commits, and
            // recorded with it: from this run's batches when it wrote them all, else from the
            // association table (a resumed mapping). Lookups are then the key itself, and the
            // index would serve none.
            let seenKeepingEveryKey = identityAssociations[entry.number].map { $0.other == 0 && $0.identity == selected } == true
            try workspace.commit(unit, done: true) {
                let kept = try entry.policyMayKeepKeys && (seenKeepingEveryKey || policyKeptEveryKey(entry, selected: selected))
                if !kept, let index = associations.indexStatement(entry) {
                    try connection.execute(index)
                }
                return StepWorkspace.Progress(lastKey: batches.last, count: selected, keptKeys: kept)
            }
        }
        completed.insert(entry.number)
        let selected = workspace[unit].count
        let keptKeys = associations.keepsKeys(entry)
        let created = entry.keepsKeys ? selected : try createdCount(entry)
        if !recorded.done {
            emit(.entityMappingFinished(mapping: mapping.name, pass: entry.pass + 1, objects: created))
            logger.debug(
                "created instances",
                metadata: ["mapping": "\(mapping.name)", "objects": "\(created)", "keptKeys": "\(keptKeys)", "writer": "\(type(of: writer))"])
        }
        var mappingReport = StepReport.Mapping(
            name: mapping.name, pass: entry.pass + 1, selected: selected, created: created, keptKeys: keptKeys, swiftTimes: swiftTimes)
        if let count = unassociated[entry.number] {
            try reportUnassociated(count, of: entry)
            mappingReport.unassociated = count
        }
        if mapping.policy != nil, let policy = policies[entry.number], !keptKeys {
            mappingReport.neverAssociated = try reportNeverAssociated(entry, selection: writer.selection, policy: policy.name(in: mapping))
        }
        report.mappings.append(mappingReport)
    }

    /// Source objects the policy of `entry` associated with no destination object (a forgotten
    /// `associate`, or none made): Core Data leaves what reaches them through the mapping empty
    /// without a word; Tern counts them, warns with the first few, and refuses them with
    /// `refuseDataLoss`. Returns their count.
    private func reportNeverAssociated(_ entry: PlannedMapping, selection: SQLFragment, policy: String) throws -> Int {
        let source = quoteIdentifier(sourceLayout.entities[entry.sourceEntity]!.table)
        let query =
            SQLFragment("SELECT s.\"Z_PK\" FROM \"src\".\(source) s WHERE ") + selection
            + SQLFragment(" AND NOT EXISTS (SELECT 1 FROM \(quoteIdentifier(entry.table)) a WHERE a.source = s.\"Z_PK\") ORDER BY s.\"Z_PK\"")
        let statement = try connection.prepare(query.sql)
        try statement.bind(query.arguments)
        var rows = statement.rows()
        var count = 0
        var first: [Int64] = []
        while let row = try rows.next() {
            count += 1
            if first.count < 3 { first.append(row.int64(at: 0)) }
        }
        guard count > 0 else { return 0 }
        var dropped = DroppedData(entity: entry.sourceEntity, values: count)
        dropped.neverAssociatedBy = policy
        dropped.entityMapping = entry.entityMapping.name
        dropped.sourceKeys = first
        if options.refuseDataLoss { throw MigrationError.dataLoss(step: step.identity, dropped: [dropped]) }
        logger.warning("\(dropped)", metadata: ["mapping": "\(entry.entityMapping.name)"])
        report.dropped.append(dropped)
        return count
    }

    /// A policy that creates objects without associating them loses what the mapping's
    /// relationship mappings would have linked them to: said as a warning and in the report's
    /// dropped data, and refused with `refuseDataLoss` (Core Data is silent about it).
    private func reportUnassociated(_ count: Int, of entry: PlannedMapping) throws {
        let mapping = entry.entityMapping
        var dropped = DroppedData(entity: entry.destinationEntity, values: count)
        dropped.createdUnassociatedBy = policies[entry.number].map { $0.name(in: mapping) } ?? "the manager hook"
        dropped.entityMapping = mapping.name
        if options.refuseDataLoss {
            throw MigrationError.dataLoss(step: step.identity, dropped: [dropped])
        }
        logger.warning("\(dropped)", metadata: ["mapping": "\(mapping.name)"])
        report.dropped.append(dropped)
    }

    /// Starts the key counter of every destination table whose objects may keep their source
    /// keys above the highest key the source handed out there (its largest key and its
    /// `Z_MAX`): any other object of the table, made by any policy in any order, then gets a
    /// key no source object has. A key Core Data once handed out (an object since deleted) is
    /// never handed out again either, so a URI saved with it can never name another object.
    func raiseKeyCountersAboveSourceKeys() throws {
        for entry in associations.entries where entry.keepsKeys || entry.policyMayKeepKeys {
            let root = destinationLayout.entities[entry.destinationEntity]!.table
            let sourceTable = sourceLayout.entities[entry.sourceEntity]!.table
            let highest = try connection.scalar(sourceLayout.highestKeyHandedOut(in: sourceTable, schema: "src"))?.int64 ?? 0
            nextKeys[root] = max(nextKeys[root, default: 1], highest + 1)
        }
    }

    /// Whether the policy of `entry` gave each of the `selected` source objects exactly one
    /// destination object, of the mapping's destination entity, with the source object's key
    /// (`SwiftBatchWriter` gives it when it can): then its association table is the identity.
    private func policyKeptEveryKey(_ entry: PlannedMapping, selected: Int) throws -> Bool {
        let table = quoteIdentifier(entry.table)
        let destination = destinationLayout.entities[entry.destinationEntity]!
        guard try connection.scalar("SELECT EXISTS (SELECT 1 FROM \(table) WHERE source <> destination)") == .integer(0) else { return false }
        let kept = try connection.scalar(
            """
            SELECT count(DISTINCT a.source) FROM \(table) a
            JOIN \(quoteIdentifier(destination.table)) d ON d."Z_PK" = a.destination AND d."Z_ENT" = \(destination.number)
            """)?.int64
        let associated = try createdCount(entry)
        return kept == Int64(selected) && associated == selected
    }

    /// Destination objects an entity mapping created so far: its association table's rows.
    func createdCount(_ entry: PlannedMapping) throws -> Int {
        Int(try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(entry.table))")?.int64 ?? 0)
    }

    /// The to-ones `entry` writes inside its objects' inserts (`fusedForeignKey`), their links
    /// recorded as written (stage 2 then leaves them alone); and its relationship mappings left
    /// for stage 2.
    func fusedForeignKeys(of entry: PlannedMapping, readingOnlySource: Bool = false) -> (
        columns: [String], values: [SQLFragment], ranks: [ListRanks], deferred: [String]
    ) {
        let destination = destinationLayout.entities[entry.destinationEntity]!
        var fused: (columns: [String], values: [SQLFragment], ranks: [ListRanks], deferred: [String]) = ([], [], [], [])
        for relationship in step.destination.allRelationships(of: entry.destinationEntity) where entry.mapping.relationships[relationship.name] != nil {
            guard let written = fusedForeignKey(relationship, entry: entry, destination: destination, readingOnlySource: readingOnlySource) else {
                fused.deferred.append(relationship.name)
                continue
            }
            fused.columns += written.columns
            fused.values += written.values
            fused.ranks += written.ranks
            relationships.writtenLinks += written.written
        }
        return fused
    }

    /// A destination to-one relationship computed inside the INSERT, when every possible target
    /// is known: its targets keep their keys, or were created already. With `readingOnlySource`,
    /// only targets that keep their keys, and no list numbered ahead: the values are then SQL
    /// over the source row `s` and the source alone, which a worker reading the source computes
    /// too.
    func fusedForeignKey(
        _ relationship: Relationship, entry: PlannedMapping,
        destination: StoreLayout.EntityLayout, readingOnlySource: Bool = false
    ) -> (columns: [String], values: [SQLFragment], written: [LinkEnds], ranks: [ListRanks])? {
        guard !relationship.isToMany, let column = destination.foreignKeyColumns[relationship.name],
            !inputs.needsMatching(relationship, of: entry.destinationEntity)
        else { return nil }
        let (sourceRelationshipName, targets) = inputs.targets(of: relationship, in: entry)
        guard
            let sourceRelationship = step.source.allRelationships(of: entry.sourceEntity).first(where: { $0.name == sourceRelationshipName }),
            !sourceRelationship.isToMany,
            let sourceColumn = sourceLayout.entities[entry.sourceEntity]!.foreignKeyColumns[sourceRelationshipName],
            !targets.isEmpty, targets.allSatisfy({ readingOnlySource ? associations.keepsKeys($0) : $0.keepsKeys || completed.contains($0.number) })
        else { return nil }
        let key = "s.\(quoteIdentifier(sourceColumn))"
        var columns = [column]
        var values = [SQLFragment(associations.lookup(targets, key: key))]
        if let entityColumn = destination.entityColumns[relationship.name] {
            columns.append(entityColumn)
            values.append(SQLFragment(associations.entityNumber(targets, key: key)))
        }
        let ends = inputs.linkEnds(entry, storage: .foreignKey(column: column), targets: targets)
        var written = [ends]
        var ranks: [ListRanks] = []
        if let orderColumn = destination.orderColumns[relationship.name] {
            if let sourceOrder = sourceLayout.entities[entry.sourceEntity]!.orderColumns[sourceRelationshipName] {
                // The inverse to-many is ordered and so was the source's: keep its order.
                columns.append(orderColumn)
                values.append(SQLFragment("s.\(quoteIdentifier(sourceOrder))"))
                written.append(ends.order(orderColumn))
            } else if !readingOnlySource, let listed = listRanks(relationship, of: entry, owner: targets) {
                // The list's order is numbered before the objects are written, and each object
                // takes its place as it is inserted. Otherwise the to-many side's mapping
                // numbers them in stage 2, rewriting every object.
                columns.append(orderColumn)
                values.append(SQLFragment("(SELECT r.order_key FROM temp.\(quoteIdentifier(listed.table)) r WHERE r.target = s.\"Z_PK\")"))
                written.append(ends.order(orderColumn))
                ranks.append(listed)
            }
        }
        return (columns, values, written, ranks)
    }

    /// The places in an ordered list of the objects `entry` creates, where the list is kept in
    /// their foreign key of `relationship` and the source kept no order: the pairs the list's
    /// own mapping would number in stage 2 (`StepInputs.mappedPairs`), numbered ahead into a
    /// temporary table by destination key. Only where those pairs and this mapping's objects
    /// are one set: `entry` keeps its keys and is the list's only target mapping, and the list's
    /// owner mapping, in the same pass, is the relationship's only target.
    private func listRanks(_ relationship: Relationship, of entry: PlannedMapping, owner targets: [PlannedMapping]) -> ListRanks? {
        guard entry.keepsKeys, targets.count == 1, let owner = targets.first, owner.pass == entry.pass, let inverseName = relationship.inverse,
            owner.mapping.relationships[inverseName] != nil,
            let list = step.destination.allRelationships(of: owner.destinationEntity).first(where: { $0.name == inverseName }),
            list.isToMany, list.isOrdered, !inputs.needsMatching(list, of: owner.destinationEntity),
            inputs.targets(of: list, in: owner).1.map(\.number) == [entry.number],
            let storage = destinationLayout.storage(ofRelationship: inverseName, of: owner.destinationEntity),
            storage.keyInDestinations != nil,
            let pairs = inputs.mappedPairs(owner, relationship: list, storage: storage, placesOnly: true)
        else { return nil }
        return ListRanks(
            name: "\(owner.entityMapping.name).\(inverseName)", table: "tern_list_\(entry.number)_\(relationship.name)", pairs: pairs,
            rankedAsTheyCome: inputs.mappedPairs(owner, relationship: list, storage: storage, placesOnly: true, runningRank: true))
    }
}

/// An ordered list's places, numbered ahead of the objects that take them (`listRanks`): a
/// temporary table of destination key → order key, filled from the list's pairs.
struct ListRanks {
    /// The list's own relationship mapping, "Mapping.relationship", as stage 2 names its links.
    let name: String
    let table: String
    /// `target, order_key` of every link, ranked by a window function.
    let pairs: String
    /// The same ranked by `RunningRank` as they come in owner order, where the pairs allow it:
    /// tried first, for it needs no window's buffer (450,000 links: 0.46 s → about 0.3 s).
    let rankedAsTheyCome: String?

    /// Creates the table, empty: the objects' INSERT refers to it when it is prepared.
    var create: String { "CREATE TEMP TABLE IF NOT EXISTS \(quoteIdentifier(table)) (target INTEGER PRIMARY KEY, order_key INTEGER)" }
    var drop: String { "DROP TABLE IF EXISTS temp.\(quoteIdentifier(table))" }

    /// Fills it, in key order (appended, not inserted at random), a target's first pair only:
    /// ranked as the pairs come where their plan gives them in owner order, by the window
    /// otherwise. Returns how many places it holds.
    func fill(on connection: Connection, ranking: RunningRank) throws -> Int {
        let empty = "DELETE FROM temp.\(quoteIdentifier(table))"
        func insert(_ pairs: String) throws -> Int {
            try connection.execute(empty)
            try connection.execute("INSERT OR IGNORE INTO temp.\(quoteIdentifier(table)) SELECT target, order_key FROM (\(pairs)) ORDER BY target")
            return connection.changes
        }
        if let rankedAsTheyCome {
            ranking.reset()
            do {
                return try insert(rankedAsTheyCome)
            } catch let error as SQLiteError where RunningRank.isOutOfOrder(error) {}
        }
        return try insert(pairs)
    }
}
