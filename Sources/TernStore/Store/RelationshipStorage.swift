import TernModel
/// Where a relationship's links are kept in a store.
public enum RelationshipStorage: Sendable, Equatable {
    /// A to-one: a foreign-key column in the object's own table.
    case foreignKey(column: String)
    /// A to-many whose inverse is a to-one: the destinations' table holds the inverse's foreign
    /// key back to the object, and a sort key when the relationship is ordered.
    case inverseForeignKey(table: String, column: String, orderColumn: String?)
    /// A to-many with no inverse: the destinations' table holds a hidden key back to the object
    /// (`Z<n><NAME>`), and a sort key when it is ordered. A hidden key holds one owner per
    /// destination object: where several would link one object, the smallest key is the one kept.
    case hiddenKey(table: String, column: String, orderColumn: String?)
    /// A many-to-many: rows of a join table.
    case joinTable(table: String, ownColumn: String, destinationColumn: String, orderColumn: String?)
}

extension StoreLayout {
    /// How relationship `name` of `entity` (its own or inherited) is stored; nil for transient
    /// or unknown relationships.
    public func storage(ofRelationship name: String, of entity: String) -> RelationshipStorage? {
        guard let relationship = model.allRelationships(of: entity).first(where: { $0.name == name }), !relationship.isTransient,
            let own = entities[entity]
        else { return nil }
        if !relationship.isToMany {
            return own.foreignKeyColumns[name].map { .foreignKey(column: $0) }
        }
        let owners = Set(model.lineage(of: entity).map(\.name))
        if let join = joinTables.first(where: { owners.contains($0.entity) && $0.relationship == name }) {
            return .joinTable(table: join.table, ownColumn: join.ownerColumn, destinationColumn: join.destinationColumn, orderColumn: join.orderColumn)
        }
        if let join = joinTables.first(where: { $0.inverseEntity.map(owners.contains) == true && $0.inverseRelationship == name }) {
            return .joinTable(table: join.table, ownColumn: join.destinationColumn, destinationColumn: join.ownerColumn, orderColumn: join.inverseOrderColumn)
        }
        guard let destination = entities[relationship.destination] else { return nil }
        guard let inverse = relationship.inverse else {
            let declaring = model.entityDeclaring(relationship: name, from: entity)
            return destination.hiddenKeys.first { $0.owner == declaring && $0.relationship == name }
                .map { .hiddenKey(table: destination.table, column: $0.column, orderColumn: $0.orderColumn) }
        }
        guard let column = destination.foreignKeyColumns[inverse] else { return nil }
        return .inverseForeignKey(table: destination.table, column: column, orderColumn: destination.orderColumns[inverse])
    }
}

extension RelationshipStorage {
    /// The column that keeps the links' order, where the relationship is ordered.
    public var orderColumn: String? {
        switch self {
        case .foreignKey: nil
        case .inverseForeignKey(_, _, let column), .hiddenKey(_, _, let column), .joinTable(_, _, _, let column): column
        }
    }

    /// For a to-many kept as a key in its destinations' rows (the inverse's, or a hidden one):
    /// that table, the key's column and the sort key's.
    public var keyInDestinations: (table: String, column: String, orderColumn: String?)? {
        switch self {
        case .inverseForeignKey(let table, let column, let order), .hiddenKey(let table, let column, let order): (table, column, order)
        case .foreignKey, .joinTable: nil
        }
    }

    /// Whether each destination object has at most one owner through this storage because of how
    /// it is stored (a hidden key), whatever the links given.
    public var holdsOneOwnerPerDestination: Bool {
        if case .hiddenKey = self { return true }
        return false
    }
}

extension StoreLayout {
    /// For a relationship kept in a join table: the column ordering its inverse, when the inverse
    /// is ordered (the same rows, the other side's order).
    public func inverseOrderColumn(ofRelationship name: String, of entity: String) -> String? {
        guard case .joinTable(let table, let own, _, _) = storage(ofRelationship: name, of: entity),
            let join = joinTables.first(where: { $0.table == table })
        else { return nil }
        return own == join.ownerColumn ? join.inverseOrderColumn : join.orderColumn
    }
}

extension StoreLayout {
    /// Both foreign keys of a one-to-one (a to-one whose inverse is a to-one): Core Data keeps a
    /// column on each side. Nil for any other relationship.
    public struct OneToOne: Sendable {
        /// This side's foreign-key column.
        public var column: String
        /// The layout of the relationship's destination entity.
        public var target: EntityLayout
        /// The inverse relationship's name on the destination.
        public var inverse: String
        /// The destination's foreign-key column for the inverse.
        public var inverseColumn: String
    }

    /// Both columns of relationship `name` of `entity` when it is a one-to-one; nil otherwise.
    public func oneToOne(_ name: String, of entity: String) -> OneToOne? {
        guard let relationship = model.allRelationships(of: entity).first(where: { $0.name == name }), !relationship.isToMany,
            let inverse = relationship.inverse,
            model.allRelationships(of: relationship.destination).first(where: { $0.name == inverse })?.isToMany == false,
            let column = entities[entity]?.foreignKeyColumns[name], let target = entities[relationship.destination],
            let inverseColumn = target.foreignKeyColumns[inverse]
        else { return nil }
        return OneToOne(column: column, target: target, inverse: inverse, inverseColumn: inverseColumn)
    }
}
