import TernSQLite
import TernModel

extension StoreLayout {
    /// Whose rules named a store's tables and columns.
    public enum Rules: String, Sendable, Codable {
        /// Core Data's: every store Core Data writes, and every store Tern writes.
        case coreData = "core-data"
        /// Tern's before it followed Core Data's layout (stores carrying `TernVersionHashScheme`
        /// `tern.v1`): the same entity tables, but every to-many that is not one-to-many kept in
        /// a join table of its own naming. Read only, to bring such a store to Core Data's layout.
        case earlierTern = "earlier-tern"
    }

    /// Whether one object can be reached through `relationship` from several objects in a store
    /// of this layout (`ObjectModel.reachesSharedObjects`): an earlier Tern's join table for a
    /// to-many with no inverse can hold several owners of one object; Core Data's hidden key
    /// holds one.
    public func reachesSharedObjects(_ relationship: Relationship) -> Bool {
        model.reachesSharedObjects(relationship) || (rules == .earlierTern && relationship.isToMany && relationship.inverse == nil && !relationship.isTransient)
    }

    /// The join tables an earlier Tern made, frozen as that release named them: one per
    /// many-to-many and per to-many with no inverse. Entities in store order, each with its own
    /// relationships as declared; a pair's table is named after the relationship whose name
    /// sorts last (`Z_<owner number><NAME>`), its columns after the two relationships
    /// (`Z_<number><NAME>`, the owner's entity name for a relationship with no inverse), with
    /// no suffix across tables; sort keys are `Z_FOK_` + the column they order.
    mutating func layOutEarlierTernJoinTables(numbers: [String: Int]) {
        var done: Set<String> = []
        for entity in model.entitiesInStoreOrder {
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                let key = "\(entity.name).\(relationship.name)"
                guard !done.contains(key) else { continue }
                let inverse = model.inverse(of: relationship)
                if let inverse, !inverse.isToMany { continue }  // one-to-many: the foreign key holds it
                var owner = (entity: entity.name, relationship: relationship)
                var other: (entity: String, relationship: Relationship)?
                if let inverse {
                    let inverseOwner = model.entityDeclaring(relationship: inverse.name, from: relationship.destination)
                    other = (inverseOwner, inverse)
                    done.insert("\(inverseOwner).\(inverse.name)")
                    if !inverse.name.utf8.lexicographicallyPrecedes(relationship.name.utf8), inverse.name != relationship.name {
                        swap(&owner, &other!)
                    }
                }
                done.insert(key)
                let ownerNumber = numbers[owner.entity]!
                let destinationNumber = numbers[owner.relationship.destination]!
                let table = "Z_\(ownerNumber)\(owner.relationship.name.uppercased())"
                let destinationColumn = "Z_\(destinationNumber)\(owner.relationship.name.uppercased())"
                let ownerColumn = "Z_\(ownerNumber)\((other?.relationship.name ?? owner.entity).uppercased())"
                var join = JoinTable(
                    table: table, entity: owner.entity, relationship: owner.relationship.name, ownerColumn: ownerColumn,
                    destinationColumn: destinationColumn, inverseEntity: other?.entity, inverseRelationship: other?.relationship.name)
                if owner.relationship.isOrdered { join.orderColumn = "Z_FOK_\(destinationNumber)\(owner.relationship.name.uppercased())" }
                if let other, other.relationship.isOrdered { join.inverseOrderColumn = "Z_FOK_\(ownerNumber)\(other.relationship.name.uppercased())" }
                add(join, index: "\(table)_\(destinationColumn)_INDEX")
            }
        }
    }
}
