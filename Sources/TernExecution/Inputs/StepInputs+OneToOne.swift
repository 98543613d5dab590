import TernSQLite
import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability

/// A relationship whose inverse is a to-one is stored in that to-one's foreign key, one value
/// per object, and Core Data keeps both sides equal. Where the source's links do not fit (a
/// to-many cut to a to-one, a many-to-many made one-to-one or one-to-many), the links kept are
/// those the to-one side chooses — for a one-to-one, those both sides choose — and each target
/// keeps its first owner. Writing and verification both read the pairs from here, so they agree.
extension StepInputs {
    /// Whether the links of destination `relationship` of `entity` must be cut down to those its
    /// to-one inverse holds: some mapping of either side reads a source relationship that gives
    /// a to-one side more than one link (a to-many, or one whose inverse is a to-many).
    func needsMatching(_ relationship: Relationship, of entity: String) -> Bool {
        guard let inverseName = relationship.inverse,
            let inverse = step.destination.allRelationships(of: relationship.destination).first(where: { $0.name == inverseName }),
            !inverse.isToMany
        else { return false }
        let sides = [(relationship, entity, inverse), (inverse, relationship.destination, relationship)]
        return sides.contains { side, holder, other in
            entries(mapping: side.name, of: holder).contains { entry, mapped in
                let (sourceName, _) = targets(of: mapped, in: entry)
                guard let source = step.source.allRelationships(of: entry.sourceEntity).first(where: { $0.name == sourceName }) else {
                    return true
                }
                if !side.isToMany && source.isToMany { return true }
                guard !other.isToMany else { return false }
                guard let sourceInverse = source.inverse else { return true }
                return step.source.allRelationships(of: source.destination).first { $0.name == sourceInverse }?.isToMany != false
            }
        }
    }

    /// `pairs` (owner, target, …) of `relationship`, whose inverse is a to-one, cut down to
    /// what that to-one holds: a link stays where the inverse's mappings, if they map it for the
    /// target's entity, hold it too, and then only the first owner of each target.
    func matched(_ pairs: String, _ relationship: Relationship, of entity: String) -> String {
        let columns = "owner, target, target_entity, ord, order_key, source_owner, inverse_ord"
        let otherSide = entries(mapping: relationship.inverse!, of: relationship.destination).compactMap { entry, inverse -> (number: Int, pairs: String)? in
            guard let storage = destinationLayout.storage(ofRelationship: inverse.name, of: entry.destinationEntity),
                let pairs = mappedPairs(entry, relationship: inverse, storage: storage, matching: false)
            else { return nil }
            return (destinationLayout.entities[entry.destinationEntity]!.number, pairs)
        }
        guard !otherSide.isEmpty else {
            return
                "SELECT \(columns) FROM (SELECT *, row_number() OVER (PARTITION BY target ORDER BY owner) AS tern_first FROM (\(pairs))) WHERE tern_first = 1"
        }
        let held = otherSide.map { "SELECT owner, target FROM (\($0.pairs))" }.joined(separator: " UNION ALL ")
        let mappedThere = Set(otherSide.map(\.number)).sorted().map(String.init).joined(separator: ", ")
        return """
            SELECT \(columns) FROM (
              WITH tern_held AS MATERIALIZED (\(held))
              SELECT *, row_number() OVER (PARTITION BY target ORDER BY owner) AS tern_first FROM (\(pairs)) x
              WHERE x.target_entity NOT IN (\(mappedThere)) OR EXISTS (SELECT 1 FROM tern_held h WHERE h.owner = x.target AND h.target = x.owner)
            ) WHERE tern_first = 1
            """
    }

    /// The entity mappings that map `name` of `holder`'s tree (the same relationship,
    /// inherited by subentities), with the relationship as each destination entity has it.
    private func entries(mapping name: String, of holder: String) -> [(PlannedMapping, Relationship)] {
        let root = step.destination.root(of: holder)?.name
        return associations.entries.compactMap { entry in
            let destination = entry.destinationEntity
            guard entry.mapping.relationships[name] != nil, step.destination.root(of: destination)?.name == root,
                let relationship = step.destination.allRelationships(of: destination).first(where: { $0.name == name })
            else { return nil }
            return (entry, relationship)
        }
    }
}
