import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability
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
