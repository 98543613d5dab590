/// Where a relationship mapping's links are stored, and which entity mappings' objects they can
/// join, in one orientation per storage: holders are the objects in the row or column that holds
/// a key (a foreign key's rows, a join table's first column), referents the objects it points at.
///
/// Both sides of a relationship may be mapped, and they write one set of links: stage 2 writes a
/// side only where no earlier write covered its ends, and verification compares a storage once
/// against everything its mappings say.
struct LinkEnds {
    /// "table.column" or a join table.
    var place: String
    var holders: Set<Int>
    var referents: Set<Int>
    /// Whether the mapping's owner objects are the holders (else its pairs are reversed).
    var ownerHolds: Bool
    /// Whether a write covers every object on the targets' end: false when two target mappings
    /// read one source entity (a target is the first object of several, so the write links only
    /// the first mapping's objects, and the others' links must still be written).
    var exhaustive = true

    /// Whether both write the same links: one place, the same objects on each end.
    func joinsSameObjects(as other: LinkEnds) -> Bool {
        place == other.place && holders == other.holders && referents == other.referents
    }

    /// Whether one earlier, exhaustive write covered both ends.
    func isCovered(by written: [LinkEnds]) -> Bool {
        written.contains { $0.exhaustive && $0.place == place && holders.isSubset(of: $0.holders) && referents.isSubset(of: $0.referents) }
    }

    /// The same ends, for the order column `column` of the storage.
    func order(_ column: String) -> LinkEnds {
        LinkEnds(place: "\(place)#\(column)", holders: holders, referents: referents, ownerHolds: ownerHolds, exhaustive: exhaustive)
    }
}

extension StepMigrator {
    /// The ends of relationship mapping `relationship` of `entry`, whose targets are `targets`.
    func linkEnds(_ entry: PlannedMapping, storage: RelationshipStorage, targets: [PlannedMapping]) -> LinkEnds {
        let own: Set<Int> = [entry.number]
        let others = Set(targets.map(\.number))
        var ends: LinkEnds
        switch storage {
        case .foreignKey(let column):
            ends = LinkEnds(place: "\(destinationLayout.entities[entry.mapping.mapping.destinationEntity!]!.table).\(column)", holders: own, referents: others, ownerHolds: true)
        case .inverseForeignKey(let table, let column, _):
            ends = LinkEnds(place: "\(table).\(column)", holders: others, referents: own, ownerHolds: false)
        case .joinTable(let table, let ownColumn, let destinationColumn, _):
            let ownerHolds = ownColumn < destinationColumn
            ends = LinkEnds(place: table, holders: ownerHolds ? own : others, referents: ownerHolds ? others : own, ownerHolds: ownerHolds)
        }
        let sourceEntities = targets.map { $0.mapping.mapping.sourceEntity! }
        ends.exhaustive = Set(sourceEntities).count == sourceEntities.count
        return ends
    }
}
