import TernSQLite
import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability

/// Stage 2: every relationship mapping's links, recreated in set-based SQL from the source's
/// pairs carried through the association tables, each relationship committed with its
/// checkpoint unit; the links policies made; after the last pass, links to objects later passes
/// made; one-to-ones' other sides; order keys for lists that have none.
final class RelationshipRecreation {
    let inputs: StepInputs
    let workspace: StepWorkspace
    /// Links (and orders) already written, by where and between which entity mappings' objects:
    /// stage 1 adds the to-ones it wrote inside its INSERTs, so no side writes a place twice.
    var writtenLinks: [LinkEnds] = []
    /// Links written, by "mapping.relationship" (and "policy: Entity.relationship").
    private(set) var links: [String: Int] = [:]
    /// Time this run spent writing them, by the same names (none for those an earlier run wrote).
    private(set) var linkTimes: [String: Duration] = [:]
    /// Catching up a live store (`StepMigrator.catchUp`): only the links with an end among the
    /// changed objects (`LiveChanges`) are written, after the ones they replace are cleared.
    var catchingUp = false

    private var step: MigrationStep { inputs.step }
    private var connection: Connection { inputs.connection }
    private var sourceLayout: StoreLayout { inputs.sourceLayout }
    private var destinationLayout: StoreLayout { inputs.destinationLayout }
    private var associations: AssociationTables { inputs.associations }

    /// Records the links of an ordered list numbered ahead of its objects (`ListRanks`), which
    /// took their places as they were written: `name` is the list's own mapping's.
    func numberedAhead(_ name: String, links count: Int, in time: Duration) {
        links[name] = count
        linkTimes[name, default: .zero] += time
    }

    init(inputs: StepInputs, workspace: StepWorkspace) {
        self.inputs = inputs
        self.workspace = workspace
    }

    /// Writes the links of `relationships`, those of `entry`'s relationship mappings stage 1 left:
    /// the ones stored with an order, or the others (then one-to-ones' other sides too). Run for
    /// every entity mapping's ordered ones first: a list's links are then written with their
    /// order in one insert, and its unordered other side finds them written (five times faster
    /// than setting the order afterwards).
    func recreate(_ relationships: [String], of entry: PlannedMapping, ordered: Bool) throws {
        let mapping = entry.entityMapping
        for name in relationships {
            let relationship = step.destination.allRelationships(of: entry.destinationEntity).first { $0.name == name }!
            let (_, targets) = inputs.targets(of: relationship, in: entry)
            guard !targets.isEmpty, let storage = destinationLayout.storage(ofRelationship: name, of: entry.destinationEntity),
                (storage.orderColumn != nil) == ordered
            else { continue }
            // Both sides of a relationship may be mapped and are stored in one place: write the
            // links once, and their order from the side that is ordered.
            let ends = inputs.linkEnds(entry, storage: storage, targets: targets)
            let orderColumn = storage.orderColumn
            let linksWritten = ends.isCovered(by: writtenLinks)
            guard !linksWritten || (orderColumn.map { !ends.order($0).isCovered(by: writtenLinks) } ?? false) else { continue }
            writtenLinks.append(ends)
            if let orderColumn { writtenLinks.append(ends.order(orderColumn)) }
            let unit = WorkUnit.links(mapping: entry.number, name: mapping.name, relationship: name)
            if !workspace[unit].done {
                let started = ContinuousClock.now
                try writeRelationship(relationship, storage: storage, entry: entry, orderOnly: linksWritten, unit: unit)
                linkTimes["\(mapping.name).\(name)", default: .zero] += ContinuousClock.now - started
            }
            links["\(mapping.name).\(name)"] = workspace[unit].count
        }
        if !ordered { try mirrorOneToOnes(entry) }
    }

    /// After the last pass: links whose targets a later pass made (a plan that cuts mappings into
    /// passes by predicate sends a chapter and its book to different passes) are written now,
    /// with every pass's objects to look in. Writing links again is harmless: foreign keys are
    /// set to the same values and join rows are upserted.
    func catchUpLinksToLaterPasses() throws {
        let last = step.passes.count - 1
        for entry in associations.entries where entry.pass < last {
            let mapping = entry.entityMapping
            for relationship in step.destination.allRelationships(of: entry.destinationEntity) where entry.mapping.relationships[relationship.name] != nil {
                let now = inputs.targets(of: relationship, in: entry).1.map(\.number)
                let all = inputs.targets(of: relationship, in: entry, throughPass: last).1.map(\.number)
                guard all.count > now.count, let storage = destinationLayout.storage(ofRelationship: relationship.name, of: entry.destinationEntity) else {
                    continue
                }
                let unit = WorkUnit.laterLinks(mapping: entry.number, name: mapping.name, relationship: relationship.name)
                if !workspace[unit].done {
                    let started = ContinuousClock.now
                    try writeRelationship(relationship, storage: storage, entry: entry, orderOnly: false, unit: unit, throughPass: last)
                    linkTimes["\(mapping.name).\(relationship.name)", default: .zero] += ContinuousClock.now - started
                }
                links["\(mapping.name).\(relationship.name)", default: 0] += workspace[unit].count
            }
        }
    }

    /// Every ordered list gets order keys: one filled from its unordered side, with no order in the
    /// source to copy, is numbered in key order, as Core Data numbers new members (a list with any
    /// key already is left as it is). Idempotent, so a resumed run may do it again.
    func numberUnnumberedLists() throws {
        var seen: Set<String> = []
        for entity in step.destination.entities {
            for relationship in entity.relationships where relationship.isToMany && relationship.isOrdered {
                guard let storage = destinationLayout.storage(ofRelationship: relationship.name, of: entity.name), let order = storage.orderColumn else {
                    continue
                }
                let (table, owner, member, row): (String, String, String, String)
                switch storage {
                case .inverseForeignKey(let name, let column, _), .hiddenKey(let name, let column, _):
                    (table, owner, member, row) = (name, column, "\"Z_PK\"", "\"Z_PK\"")
                case .joinTable(let name, let own, let destination, _): (table, owner, member, row) = (name, own, quoteIdentifier(destination), "rowid")
                case .foreignKey: continue
                }
                guard seen.insert("\(table).\(order)").inserted else { continue }
                let (t, o, k) = (quoteIdentifier(table), quoteIdentifier(owner), quoteIdentifier(order))
                // A list without keys has members without one: when every member has one (the
                // ordered side wrote them), one plain scan says so, without grouping the table.
                guard try connection.scalar("SELECT 1 FROM \(t) WHERE \(k) IS NULL AND \(o) IS NOT NULL LIMIT 1") != nil else { continue }
                try connection.transaction(.immediate) {
                    try connection.execute(
                        """
                        UPDATE \(t) SET \(k) = x.position FROM (
                          SELECT \(row) AS id, 1024 * (row_number() OVER (PARTITION BY \(o) ORDER BY \(member)) + 1) AS position FROM \(t)
                          WHERE \(o) IN (SELECT \(o) FROM \(t) WHERE \(o) IS NOT NULL GROUP BY \(o) HAVING count(\(k)) = 0)) x
                        WHERE \(t).\(row) = x.id
                        """)
                }
            }
        }
    }

    /// A one-to-one keeps a foreign key on both sides. Where only one side is mapped, the other
    /// side's column is written from the mapped side's links (Core Data sets an inverse whenever
    /// it sets a relationship).
    func mirrorOneToOnes(_ entry: PlannedMapping) throws {
        let mapping = entry.entityMapping
        let owner = destinationLayout.entities[entry.destinationEntity]!
        for relationship in step.destination.allRelationships(of: entry.destinationEntity) where entry.mapping.relationships[relationship.name] != nil {
            guard let pair = destinationLayout.oneToOne(relationship.name, of: entry.destinationEntity) else { continue }
            let (target, inverseColumn) = (pair.target, pair.inverseColumn)
            let (_, targets) = inputs.targets(of: relationship, in: entry)
            guard !targets.isEmpty else { continue }
            let mirrored = LinkEnds(
                place: "\(target.table).\(inverseColumn)", holders: Set(targets.map(\.number)), referents: [entry.number], ownerHolds: false)
            guard !mirrored.isCovered(by: writtenLinks) else { continue }
            writtenLinks.append(mirrored)
            let unit = WorkUnit.mirror(mapping: entry.number, name: mapping.name, relationship: relationship.name)
            guard !workspace[unit].done else { continue }
            try workspace.commit(unit, done: true) {
                try connection.execute(Self.mirrorStatement(pair, owner: owner))
                return StepWorkspace.Progress(count: connection.changes)
            }
        }
    }

    /// Writes the other side's foreign key of one-to-one `pair` from `owner`'s: each target
    /// row an owner points at points back at it. Idempotent.
    static func mirrorStatement(_ pair: StoreLayout.OneToOne, owner: StoreLayout.EntityLayout) -> String {
        var sets = ["\(quoteIdentifier(pair.inverseColumn)) = o.\"Z_PK\""]
        if let entityColumn = pair.target.entityColumns[pair.inverse] { sets.append("\(quoteIdentifier(entityColumn)) = o.\"Z_ENT\"") }
        return "UPDATE \(quoteIdentifier(pair.target.table)) SET \(sets.joined(separator: ", ")) FROM \(quoteIdentifier(owner.table)) o "
            + "WHERE o.\(quoteIdentifier(pair.column)) = \(quoteIdentifier(pair.target.table)).\"Z_PK\" AND o.\"Z_ENT\" = \(owner.number)"
    }

    func writeRelationship(
        _ relationship: Relationship, storage: RelationshipStorage, entry: PlannedMapping, orderOnly: Bool, unit: WorkUnit,
        throughPass: Int? = nil
    ) throws {
        guard var mapped = inputs.mappedPairs(entry, relationship: relationship, storage: storage, throughPass: throughPass) else { return }
        if catchingUp {
            mapped = try changedLinks(of: mapped, relationship: relationship, storage: storage, entry: entry, orderOnly: orderOnly)
        }
        try apply(
            pairs: mapped, relationship: relationship, ownerEntity: entry.destinationEntity, storage: storage, orderOnly: orderOnly, unit: unit
        )
    }

    /// Catching up: the pairs `mapped` with an end among the changed objects, once the links
    /// they replace are cleared (unless only their order is written). Keys are kept, so a
    /// destination key is its source object's.
    private func changedLinks(of mapped: String, relationship: Relationship, storage: RelationshipStorage, entry: PlannedMapping, orderOnly: Bool) throws
        -> String
    {
        let (_, targets) = inputs.targets(of: relationship, in: entry)
        let owners = LiveChanges.keys(of: sourceLayout.entities[entry.sourceEntity]!.table)
        let targetKeys = Set(targets.map { sourceLayout.entities[$0.sourceEntity]!.table }).sorted().map(LiveChanges.keys(of:))
            .joined(separator: " UNION ALL ")
        if !orderOnly {
            switch storage {
            case .joinTable(let table, let own, let destination, _):
                try connection.execute(
                    "DELETE FROM \(quoteIdentifier(table)) WHERE \(quoteIdentifier(own)) IN (\(owners)) OR \(quoteIdentifier(destination)) IN (\(targetKeys))")
            case .inverseForeignKey(let table, let column, let order), .hiddenKey(let table, let column, let order):
                let cleared = ([column] + (order.map { [$0] } ?? [])).map { "\(quoteIdentifier($0)) = NULL" }.joined(separator: ", ")
                try connection.execute(
                    "UPDATE \(quoteIdentifier(table)) SET \(cleared) WHERE \(quoteIdentifier(column)) IN (\(owners)) OR \"Z_PK\" IN (\(targetKeys))")
            case .foreignKey:
                break  // the owners' rows were written again, without it
            }
        }
        return "SELECT * FROM (\(mapped)) WHERE source_owner IN (\(owners)) OR target IN (\(targetKeys))"
    }

    /// Writes destination links `(owner, target, target_entity, ord, order_key, inverse_ord)` into wherever the
    /// relationship is stored, and marks `unit` done with their count, in one transaction. With
    /// `orderOnly`, the links exist already (the other side wrote them) and only their order is set.
    ///
    /// Links go in the order of the rows they land on: the writes then sweep the table's pages
    /// once instead of dirtying them at random (twice as fast for a million links; five times for
    /// a join table's order keys, whose primary key may start with either side).
    func apply(pairs: String, relationship: Relationship, ownerEntity: String, storage: RelationshipStorage, orderOnly: Bool = false, unit: WorkUnit) throws {
        let destinationEntity = destinationLayout.entities[ownerEntity]!
        let column: String, landing: String, kept: String
        switch storage {
        case .joinTable(let table, let own, let destination, let order):
            try insertJoinRows(
                pairs: pairs, into: table, own: own, destination: destination, order: order, relationship: relationship, ownerEntity: ownerEntity, unit: unit)
            return
        case .foreignKey(let own): (column, landing, kept) = (own, "owner", "owner, target, target_entity, ord, inverse_ord")
        case .inverseForeignKey(_, let inverse, _), .hiddenKey(_, let inverse, _): (column, landing, kept) = (inverse, "target", "owner, target, order_key")
        }
        // Foreign keys are set by UPDATE … FROM, which joins the pairs: they are sorted into a
        // table first, once, with only the columns the update reads (a smaller sort).
        try connection.execute("DROP TABLE IF EXISTS temp.tern_pairs")
        try connection.execute("CREATE TEMP TABLE tern_pairs AS SELECT \(kept) FROM (\(pairs)) ORDER BY \(landing)")
        defer { try? connection.execute("DROP TABLE IF EXISTS temp.tern_pairs") }
        let count = Int(try connection.scalar("SELECT count(*) FROM temp.tern_pairs")?.int64 ?? 0)
        try workspace.commit(unit, done: true) {
            if let (table, _, order) = storage.keyInDestinations {
                let target = destinationLayout.entities.values.first { $0.table == table && $0.foreignKeyColumns.values.contains(column) }
                var sets = orderOnly ? [] : ["\(quoteIdentifier(column)) = p.owner"]
                if let order { sets.append("\(quoteIdentifier(order)) = p.order_key") }
                if !orderOnly, let inverse = relationship.inverse, let entityColumn = target?.entityColumns[inverse] {
                    sets.append("\(quoteIdentifier(entityColumn)) = \(destinationEntity.number)")
                }
                // A hidden key (a to-many with no inverse) holds one owner: where mappings of
                // several entities give a target owners, the smallest key wins, whichever runs last.
                let firstOwner =
                    storage.holdsOneOwnerPerDestination && !orderOnly
                    ? " AND (\(quoteIdentifier(table)).\(quoteIdentifier(column)) IS NULL OR \(quoteIdentifier(table)).\(quoteIdentifier(column)) > p.owner)"
                    : ""
                if !sets.isEmpty {
                    try connection.execute(
                        "UPDATE \(quoteIdentifier(table)) SET \(sets.joined(separator: ", ")) FROM temp.tern_pairs p WHERE \(quoteIdentifier(table)).\"Z_PK\" = p.target\(firstOwner)"
                    )
                }
            } else {
                var sets = ["\(quoteIdentifier(column)) = p.target"]
                if let entityColumn = destinationEntity.entityColumns[relationship.name] { sets.append("\(quoteIdentifier(entityColumn)) = p.target_entity") }
                // The target's to-many inverse is ordered: the object keeps its source position.
                if let orderColumn = destinationEntity.orderColumns[relationship.name] { sets.append("\(quoteIdentifier(orderColumn)) = p.inverse_ord") }
                try connection.execute(
                    "UPDATE \(quoteIdentifier(destinationEntity.table)) SET \(sets.joined(separator: ", ")) FROM (SELECT owner, target, target_entity, inverse_ord FROM temp.tern_pairs WHERE ord = 2048) p WHERE \(quoteIdentifier(destinationEntity.table)).\"Z_PK\" = p.owner"
                )
            }
            return StepWorkspace.Progress(count: count)
        }
    }

    /// A join table's rows, inserted straight from the pairs in its primary key's order (no copy
    /// of them to write and read again), with the order keys of whichever sides are ordered. The
    /// count is of the rows the insert wrote or re-ordered.
    private func insertJoinRows(
        pairs: String, into table: String, own: String, destination: String, order: String?, relationship: Relationship,
        ownerEntity: String, unit: WorkUnit
    ) throws {
        let landing = destinationLayout.joinTables.first { $0.table == table }?.ownerColumn == own ? "owner, target" : "target, owner"
        // The inverse's order too, where it is ordered: its source's positions.
        let inverseOrder = destinationLayout.inverseOrderColumn(ofRelationship: relationship.name, of: ownerEntity)
        let orders = [(order, "order_key"), (inverseOrder, "inverse_ord")].compactMap { column, value in column.map { ($0, value) } }
        let columns = [own, destination] + orders.map(\.0)
        let values = ["owner", "target"] + orders.map(\.1)
        // `WHERE true` lets SQLite parse the upsert after INSERT … SELECT.
        let upsert =
            orders.isEmpty
            ? " ON CONFLICT DO NOTHING"
            : " ON CONFLICT DO UPDATE SET " + orders.map { "\(quoteIdentifier($0.0)) = excluded.\(quoteIdentifier($0.0))" }.joined(separator: ", ")
        try workspace.commit(unit, done: true) {
            try connection.execute(
                "INSERT INTO \(quoteIdentifier(table)) (\(columns.map(quoteIdentifier).joined(separator: ", "))) "
                    + "SELECT \(values.joined(separator: ", ")) FROM (\(pairs)) WHERE true ORDER BY \(landing)\(upsert)")
            return StepWorkspace.Progress(count: connection.changes)
        }
    }

    /// Calls a policy's `createRelationships` for each object its mapping created, when the
    /// policy asks for it; the links it makes are saved in one transaction.
    func callRelationshipHook(_ entry: PlannedMapping, policy: any EntityMigrationPolicy) throws {
        let unit = WorkUnit.relationshipHook(mapping: entry.number)
        guard policy.createsRelationships, !workspace[unit].done else { return }
        let mapping = entry.entityMapping
        let context = RelationshipContext(mapping: mapping) { [connection, associations] name, key in
            guard let target = associations.entry(named: name, pass: entry.pass) else { return [] }
            let value = try connection.scalar("SELECT \(associations.lookup(target, key: "?"))", key)
            return value?.int64.map { [$0] } ?? []
        }
        let statement = try connection.prepare("SELECT source, destination FROM \(quoteIdentifier(entry.table)) ORDER BY source, destination")
        var rows = statement.rows()
        while let row = try rows.next() {
            try MigrationError.inPolicy(policy.name(in: mapping), mapping: mapping, sourceKey: row.int64(at: 0)) {
                try policy.createRelationships(forDestination: row.int64(at: 1), source: row.int64(at: 0), in: context)
            }
        }
        try workspace.commit(unit, done: true) {
            let insert = try connection.prepare(
                "INSERT INTO \(StepWorkspace.linksTable) (owner, owner_entity, relationship, target, target_entity) VALUES (?, ?, ?, ?, ?)")
            for link in context.links {
                try insert.bind([link.owner, link.ownerEntity, link.relationship, link.target, link.targetEntity])
                try insert.run()
            }
            return StepWorkspace.Progress(count: context.links.count)
        }
    }

    /// Applies the links policies of this pass made (`relate`), one relationship at a time.
    func applyPolicyLinks(pass: Int) throws {
        guard workspace.hasPolicyTables, !workspace[.policyLinksApplied(pass: pass)].done else { return }
        let groups = try rowsOf("SELECT DISTINCT owner_entity, relationship FROM \(StepWorkspace.linksTable) ORDER BY 1, 2")
        for group in groups {
            guard let ownerEntity = group[0].text, let name = group[1].text,
                let relationship = step.destination.allRelationships(of: ownerEntity).first(where: { $0.name == name }),
                let storage = destinationLayout.storage(ofRelationship: name, of: ownerEntity)
            else {
                throw TernError(.badInput, "a policy related objects through \(group[1].text ?? "?"), which \(group[0].text ?? "?") does not have")
            }
            let unit = WorkUnit.policyLinks(pass: pass, entity: ownerEntity, relationship: name)
            if !workspace[unit].done {
                let targetNumbers = destinationLayout.entities.values.map { "WHEN \(quoteLiteral($0.name)) THEN \($0.number)" }.joined(separator: " ")
                let resolved = associations.entries.filter { $0.pass <= pass }.map {
                    "WHEN \(quoteLiteral($0.entityMapping.name)) THEN \(associations.lookup($0, key: "l.target"))"
                }.joined(separator: " ")
                let pairs = """
                    SELECT owner, target, CASE target_entity \(targetNumbers) END AS target_entity,
                           1024 * (row_number() OVER (PARTITION BY owner ORDER BY link) + 1) AS ord,
                           1024 * (row_number() OVER (PARTITION BY owner ORDER BY link) + 1) AS order_key, NULL AS inverse_ord
                    FROM (SELECT l.rowid AS link, l.owner AS owner, l.target_entity AS target_entity,
                                 CASE WHEN l.target_mapping IS NULL THEN l.target ELSE (CASE l.target_mapping \(resolved) END) END AS target
                          FROM \(StepWorkspace.linksTable) l WHERE l.owner_entity = \(quoteLiteral(ownerEntity)) AND l.relationship = \(quoteLiteral(name)))
                    WHERE target IS NOT NULL
                    """
                try apply(pairs: pairs, relationship: relationship, ownerEntity: ownerEntity, storage: storage, unit: unit)
            }
            // Core Data sets the inverse whenever a relationship is set: a one-to-one the policy
            // set from one side gets the other side's key too.
            if let pair = destinationLayout.oneToOne(name, of: ownerEntity), let owner = destinationLayout.entities[ownerEntity] {
                try connection.execute(Self.mirrorStatement(pair, owner: owner))
            }
            links["policy: \(ownerEntity).\(name)", default: 0] += workspace[unit].count
        }
        try workspace.commit(.policyLinksApplied(pass: pass), done: true) {
            try connection.execute("DELETE FROM \(StepWorkspace.linksTable)")
            return StepWorkspace.Progress()
        }
    }

    func rowsOf(_ sql: String) throws -> [[SQLiteValue]] {
        let statement = try connection.prepare(sql)
        var rows = statement.rows()
        var result: [[SQLiteValue]] = []
        while let row = try rows.next() { result.append(row.values) }
        return result
    }
}
