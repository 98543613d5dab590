import Synchronization
import TernModel
import TernStore
import TernMapping
import TernSQLite
import TernPlanning

/// The record of which destination objects each entity mapping made from which source objects,
/// kept on disk in the destination file (never in memory), so look-ups stay fast and bounded
/// however large the store, and survive a crash with the rows they describe.
///
/// Where an entity mapping may keep keys (its destination table receives objects from one source
/// table only, and nothing creates extra instances), destination keys equal source keys and no
/// table is needed: the association is the identity, checked against the source's entity.
package struct AssociationTables {
    /// The step's entity mappings that copy objects, in the order they run (`StepPlan`).
    package let entries: [PlannedMapping]
    private let source: StoreLayout
    private let destination: StoreLayout
    /// Entity mappings run by a policy that turned out to keep every key (`policyMayKeepKeys`),
    /// by number: known once their objects are all created, and written only by the step's
    /// workspace, as it commits (or reads back) the unit's record (`WorkUnit.keptKeys`). Every
    /// copy of this value reads the one record.
    let keptByPolicy = KeptKeys()

    package init(plan: StepPlan, source: StoreLayout, destination: StoreLayout) {
        entries = plan.mappings
        self.source = source
        self.destination = destination
    }

    /// Whether `entry`'s destination objects have their source objects' keys, one each: lookups
    /// are then the key itself.
    package func keepsKeys(_ entry: PlannedMapping) -> Bool {
        entry.keepsKeys || keptByPolicy.contains(entry.number)
    }

    /// The entry for an entity mapping name, preferring the given pass, then earlier passes.
    package func entry(named name: String, pass: Int) -> PlannedMapping? {
        entries(named: name, pass: pass).last
    }

    /// Every entry of an entity mapping name in the given pass or an earlier one, in pass order
    /// (a plan may cut one mapping into several passes by predicate).
    package func entries(named name: String, pass: Int) -> [PlannedMapping] {
        entries.filter { $0.entityMapping.name == name && $0.pass <= pass }
    }

    /// Entries whose source entity lies in `entity`'s tree below it (inclusive): what
    /// `destinationInstancesForSourceRelationshipNamed:` consults.
    package func entries(coveringSourceEntity entity: String, pass: Int) -> [PlannedMapping] {
        let covered = Set(source.model.descendants(of: entity).map(\.name))
        return entries.filter { $0.pass <= pass && covered.contains($0.sourceEntity) }
    }

    /// The index on `source`, built when the mapping's objects are all created (`StepWorkspace`
    /// creates the tables).
    package func indexStatement(_ entry: PlannedMapping) -> String? {
        entry.keepsKeys
            ? nil : "CREATE INDEX IF NOT EXISTS \(quoteIdentifier(entry.table + "_SOURCE")) ON \(quoteIdentifier(entry.table)) (source, destination)"
    }

    /// SQL giving the destination key that `entry` made from the source object whose key is the
    /// SQL `key`, or NULL when it made none.
    package func lookup(_ entry: PlannedMapping, key: String) -> String {
        let sourceEntity = entry.sourceEntity
        if keepsKeys(entry) {
            let layout = source.entities[sourceEntity]!
            // The key is the same; it only counts if the source object is of the mapped entity.
            if source.model.descendants(of: source.model.root(of: sourceEntity)!.name).count == 1 {
                return key
            }
            return "(SELECT t.\"Z_PK\" FROM \"src\".\(quoteIdentifier(layout.table)) t WHERE t.\"Z_PK\" = \(key) AND t.\"Z_ENT\" = \(layout.number))"
        }
        guard entry.runsInSwift else {
            return "(SELECT a.destination FROM \(quoteIdentifier(entry.table)) a WHERE a.source = \(key) ORDER BY a.destination LIMIT 1)"
        }
        // A policy may associate a source object with objects of other entities too: only those
        // of the mapping's destination entity (or below) are what its relationships can hold.
        return
            "(SELECT a.destination FROM \(quoteIdentifier(entry.table)) a WHERE a.source = \(key) AND a.entity IN (\(entityNumbers(below: entry))) ORDER BY a.destination LIMIT 1)"
    }

    /// The destination entity numbers of `entry`'s destination entity and its descendants.
    private func entityNumbers(below entry: PlannedMapping) -> String {
        destination.model.descendants(of: entry.destinationEntity)
            .compactMap { destination.entities[$0.name]?.number }.map(String.init).joined(separator: ", ")
    }

    /// Every destination object of `entry`'s destination entity that `entry` made from the
    /// source object whose key is the SQL `key`: an expression and the join that yields one row
    /// per such object (no join where keys are kept, one object per source object).
    package func owners(_ entry: PlannedMapping, key: String) -> (expression: String, join: String) {
        guard !keepsKeys(entry) else { return (lookup(entry, key: key), "") }
        let owner = destination.entities[entry.destinationEntity]!
        // SQL makes objects of the destination entity only; a policy may make others too.
        let ofOwner = entry.runsInSwift ? " AND o.entity = \(owner.number)" : ""
        return ("o.destination", " JOIN \(quoteIdentifier(entry.table)) o ON o.source = \(key)\(ofOwner)")
    }

    /// SQL for the destination entity number of what `lookup` finds, over several entries.
    package func entityNumber(_ entries: [PlannedMapping], key: String) -> String {
        let cases = entries.map { "WHEN \(lookup($0, key: key)) IS NOT NULL THEN \(destination.entities[$0.destinationEntity]!.number)" }
        return "(CASE \(cases.joined(separator: " ")) END)"
    }

    /// Lookup over several entries (the first that made something).
    package func lookup(_ entries: [PlannedMapping], key: String) -> String {
        entries.count == 1 ? lookup(entries[0], key: key) : "coalesce(\(entries.map { lookup($0, key: key) }.joined(separator: ", ")))"
    }
}

/// The numbers of the entity mappings whose policy kept every key, as the step's workspace
/// records them; a reference, so the copies of `AssociationTables` every stage holds all read the
/// one record.
final class KeptKeys: Sendable {
    private let numbers = Mutex<Set<Int>>([])

    func contains(_ number: Int) -> Bool { numbers.withLock { $0.contains(number) } }
    func insert(_ number: Int) { _ = numbers.withLock { $0.insert(number) } }
}
