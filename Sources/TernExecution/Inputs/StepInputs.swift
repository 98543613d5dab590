import TernSQLite
import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability

/// What every stage of one step reads and none changes: the step and its layouts, the entity
/// mappings as planned (with their association tables), the destination store's connection
/// with the source attached as `src`, the folders of values stored outside the stores, and the
/// options. Stages take it explicitly; the SQL they share is worked out here.
struct StepInputs {
    let step: MigrationStep
    let sourceLayout: StoreLayout
    let destinationLayout: StoreLayout
    let associations: AssociationTables
    let connection: Connection
    /// Where worker threads find the source, to attach it as `src` on their own connections.
    let sourceAttachURI: String
    let externalData: ExternalDataFolders
    let options: MigrationOptions
}

extension StepInputs {
    func sourceSelection(_ entry: PlannedMapping, compiler: inout SQLCompiler) -> SQLFragment {
        SourceBatches.selection(of: sourceLayout.entities[entry.sourceEntity]!, filter: entry.mapping.filter, compiler: &compiler)
    }

    /// The source relationship a relationship mapping of `entry` reads, and the entity mappings
    /// whose objects it links to: the one it names (in this pass or an earlier one — a plan may
    /// cut one mapping into several passes), or every mapping of the source relationship's
    /// destination; only those that make objects the destination relationship can hold.
    ///
    /// `throughPass` widens the look to later passes: once every pass has run, links to objects a
    /// later pass made are caught up (a plan may cut mappings into passes in any way), and
    /// verification expects them.
    func targets(of relationship: Relationship, in entry: PlannedMapping, throughPass: Int? = nil) -> (String, [PlannedMapping]) {
        let holdable = Set(step.destination.descendants(of: relationship.destination).map(\.name))
        let pass = throughPass ?? entry.pass
        let (name, candidates): (String, [PlannedMapping])
        switch entry.mapping.relationships[relationship.name]! {
        case .entityMapping(let mapping, let source):
            (name, candidates) = (source, associations.entries(named: mapping, pass: pass))
        case .sourceRelationship(let source):
            let destination = step.source.allRelationships(of: entry.sourceEntity).first { $0.name == source }!.destination
            (name, candidates) = (source, associations.entries(coveringSourceEntity: destination, pass: pass))
        }
        return (name, candidates.filter { holdable.contains($0.destinationEntity) })
    }

    /// The destination rows `entry` created, as an SQL condition on alias `d`.
    func created(_ entry: PlannedMapping) -> String {
        let destination = destinationLayout.entities[entry.destinationEntity]!
        if associations.keepsKeys(entry) {
            let source = sourceLayout.entities[entry.sourceEntity]!
            return
                "d.\"Z_ENT\" = \(destination.number) AND d.\"Z_PK\" IN (SELECT \"Z_PK\" FROM \"src\".\(quoteIdentifier(source.table)) WHERE \"Z_ENT\" = \(source.number))"
        }
        return "d.\"Z_PK\" IN (SELECT destination FROM \(quoteIdentifier(entry.table)))"
    }

    /// Whether every row of the entry's destination table is one of its objects: no other entity
    /// mapping maps into the table, and no policy wrote objects there (a policy may make objects
    /// of any entity: the writer records where, `StepWorkspace.swiftWriters`, by root table).
    func soleWriter(_ entry: PlannedMapping, swiftWriters: [String: Set<Int>]) -> Bool {
        let table = destinationLayout.entities[entry.destinationEntity]!.table
        let mapped = associations.entries.filter { destinationLayout.entities[$0.destinationEntity]!.table == table }.map(\.number)
        return Set(mapped).union(swiftWriters[table] ?? []) == [entry.number]
    }

    /// The ends of relationship mapping `relationship` of `entry`, whose targets are `targets`.
    func linkEnds(_ entry: PlannedMapping, storage: RelationshipStorage, targets: [PlannedMapping]) -> LinkEnds {
        let own: Set<Int> = [entry.number]
        let others = Set(targets.map(\.number))
        var ends: LinkEnds
        switch storage {
        case .foreignKey(let column):
            ends = LinkEnds(
                place: "\(destinationLayout.entities[entry.destinationEntity]!.table).\(column)", holders: own, referents: others,
                ownerHolds: true)
        case .inverseForeignKey(let table, let column, _), .hiddenKey(let table, let column, _):
            ends = LinkEnds(place: "\(table).\(column)", holders: others, referents: own, ownerHolds: false)
        case .joinTable(let table, let ownColumn, let destinationColumn, _):
            let ownerHolds = ownColumn < destinationColumn
            ends = LinkEnds(place: table, holders: ownerHolds ? own : others, referents: ownerHolds ? others : own, ownerHolds: ownerHolds)
        }
        let sourceEntities = targets.map { $0.sourceEntity }
        ends.exhaustive = Set(sourceEntities).count == sourceEntities.count
        return ends
    }

    /// The source's links of `relationship` as (owner source key, target source key, order,
    /// inverse order): the same rows whatever way the source stores them. `ord` orders the
    /// owner's targets where the relationship is ordered; `inverse_ord` the owner's place among
    /// the target's, where the inverse is.
    func sourcePairs(_ relationship: String, of entity: String) -> String? {
        let owner = sourceLayout.entities[entity]!
        let column: (String, String?) -> String = { alias, name in name.map { "\(alias).\(quoteIdentifier($0))" } ?? "NULL" }
        switch sourceLayout.storage(ofRelationship: relationship, of: entity) {
        case .foreignKey(let key):
            return
                "SELECT s.\"Z_PK\" AS owner, s.\(quoteIdentifier(key)) AS target, NULL AS ord, \(column("s", owner.orderColumns[relationship])) AS inverse_ord FROM \"src\".\(quoteIdentifier(owner.table)) s WHERE s.\"Z_ENT\" = \(owner.number) AND s.\(quoteIdentifier(key)) IS NOT NULL"
        case .inverseForeignKey(let table, let key, let order), .hiddenKey(let table, let key, let order):
            return
                "SELECT d.\(quoteIdentifier(key)) AS owner, d.\"Z_PK\" AS target, \(column("d", order)) AS ord, NULL AS inverse_ord FROM \"src\".\(quoteIdentifier(table)) d WHERE d.\(quoteIdentifier(key)) IS NOT NULL"
        case .joinTable(let table, let own, let destination, let order):
            let inverse = sourceLayout.inverseOrderColumn(ofRelationship: relationship, of: entity)
            return
                "SELECT j.\(quoteIdentifier(own)) AS owner, j.\(quoteIdentifier(destination)) AS target, \(column("j", order)) AS ord, \(column("j", inverse)) AS inverse_ord FROM \"src\".\(quoteIdentifier(table)) j"
        case nil:
            return nil
        }
    }

    /// The destination links a relationship mapping stands for, as SQL rows `(owner, target,
    /// target_entity, ord, order_key, source_owner, inverse_ord)`: the source's pairs carried through the association
    /// tables — every object the mapping made from a source object owns that object's links (a
    /// policy may make several); a target is the first object its entity mapping made — with
    /// Core Data's sparse order keys per owner, and no more links than the destination holds (a
    /// to-one keeps its owner's first; a target whose inverse is a to-one, its first owner).
    /// Stage 2 writes these rows; verification compares the finished store with them.
    ///
    /// `rankingOrder: false` leaves `ord` unranked where only the list's order would need it:
    /// verification comparing the source's own order keys (`order_key`) needs no positions.
    ///
    /// `placesOnly` gives each link's `target` and `order_key` alone where nothing else chooses
    /// among the links: the window that ranks them then carries two columns instead of seven
    /// (450,000 links of a list numbered ahead: 0.63 s → 0.46 s). With `runningRank` too, the
    /// links are ranked by `tern_running_rank` as they come in owner order (`RunningRank`), and
    /// where that is not possible (the source keeps its own order), nil.
    func mappedPairs(
        _ entry: PlannedMapping, relationship: Relationship, storage: RelationshipStorage, throughPass: Int? = nil, matching: Bool = true,
        rankingOrder: Bool = true, placesOnly: Bool = false, runningRank: Bool = false
    ) -> String? {
        let (sourceName, targets) = targets(of: relationship, in: entry, throughPass: throughPass)
        guard !targets.isEmpty, let pairs = sourcePairs(sourceName, of: entry.sourceEntity),
            let source = step.source.allRelationships(of: entry.sourceEntity).first(where: { $0.name == sourceName })
        else { return nil }
        // Kept in the targets' rows, a link has one owner per target: a source whose targets
        // have several keeps the first.
        var manyOwnersPerTarget = false
        if storage.keyInDestinations != nil, sourceLayout.reachesSharedObjects(source) {
            manyOwnersPerTarget = true
        }
        // Positions cost a sort: only where the order is kept or a first link is chosen.
        let ranked = (relationship.isOrdered && rankingOrder) || (!relationship.isToMany && source.isToMany) || manyOwnersPerTarget
        // Order keys written are the source's own where it kept them: every side that writes a
        // list's order then agrees, whichever objects it covers.
        let sourceOrdered = sourceLayout.storage(ofRelationship: sourceName, of: entry.sourceEntity)?.orderColumn != nil
        // Without the source's order, `source_ord` is NULL on every row: left out of the window,
        // SQLite can rank in the order of an index on the pairs instead of sorting them.
        let ord = ranked ? "1024 * (row_number() OVER (PARTITION BY owner ORDER BY \(sourceOrdered ? "source_ord, " : "")source_target) + 1)" : "2048"
        let (owner, ownerJoin) = associations.owners(entry, key: "p.owner")
        let matches = matching && needsMatching(relationship, of: entry.destinationEntity)
        let choosing = manyOwnersPerTarget || (!relationship.isToMany && source.isToMany) || matches
        if runningRank, !placesOnly || choosing || !ranked || sourceOrdered { return nil }
        // Ranked as the links come, in the subquery's order (`LIMIT -1` keeps it one), which an
        // index on the pairs gives; in any other order the function fails rather than rank wrongly.
        let placed = runningRank ? "1024 * (tern_running_rank(owner, source_target) + 1)" : sourceOrdered ? "source_ord" : ord
        let columns =
            placesOnly && !choosing
            ? "target, \(placed) AS order_key"
            : "owner, target, target_entity, \(ord) AS ord, \(sourceOrdered ? "source_ord" : ord) AS order_key, source_owner, inverse_ord"
        var sql = """
            SELECT \(columns) FROM (
              SELECT \(owner) AS owner, \(associations.lookup(targets, key: "p.target")) AS target,
                     \(associations.entityNumber(targets, key: "p.target")) AS target_entity, p.ord AS source_ord, p.target AS source_target,
                     p.owner AS source_owner, p.inverse_ord AS inverse_ord
              FROM (\(pairs)) p\(ownerJoin)) WHERE owner IS NOT NULL AND target IS NOT NULL
            """
        if runningRank { return sql + " ORDER BY owner, source_target LIMIT -1" }
        // Where the to-one inverse chooses among the owners, `matched` keeps its choice instead.
        if manyOwnersPerTarget && !matches {
            sql =
                "SELECT owner, target, target_entity, ord, order_key, source_owner, inverse_ord FROM (SELECT *, row_number() OVER (PARTITION BY target ORDER BY owner, ord) AS k FROM (\(sql))) WHERE k = 1"
        }
        if !relationship.isToMany && source.isToMany {
            sql = "SELECT * FROM (\(sql)) WHERE ord = 2048"
        }
        if matches {
            sql = matched(sql, relationship, of: entry.destinationEntity)
        }
        return sql
    }
}
