import Tern

/// Fills a `TestStore`: objects by entity and values, relationships by reference. Keys, entity
/// numbers, foreign keys, join rows and order columns are worked out from the model, as Core
/// Data lays them out.
public final class TestStoreBuilder {
    /// An object inserted into the store, to relate others to.
    public struct Reference: Sendable, Hashable {
        /// The object's entity (the concrete one: a subentity's name when it is one).
        public let entity: String
        /// Its `Z_PK`.
        public let key: Int64
    }

    private let connection: Connection
    private let layout: StoreLayout
    private let writer: ObjectWriter

    init(connection: Connection, layout: StoreLayout) throws {
        self.connection = connection
        self.layout = layout
        writer = try ObjectWriter(connection: connection, layout: layout)
    }

    /// Inserts an object of `entity` with attribute `values` (unset ones take their defaults),
    /// related through to-one relationships to `relating`.
    @discardableResult
    public func insert(_ entity: String, _ values: [String: SQLiteValue] = [:], relating: [String: Reference] = [:]) throws -> Reference {
        let relationships = Set(layout.model.allRelationships(of: entity).map(\.name))
        if let name = values.keys.sorted().first(where: relationships.contains) {
            throw TernError(.badInput, "entity \(entity): \(name) is a relationship; relate it to a reference (relating: or relate(_:_:to:))")
        }
        let object = Reference(entity: entity, key: try writer.insert(entity, values))
        for (name, target) in relating.sorted(by: { $0.key < $1.key }) { try relate(object, name, to: [target]) }
        return object
    }

    /// Relates `owner` through `relationship` to `targets`, in order (a to-one takes one). Call it
    /// once per owner and relationship: an ordered relationship numbers its targets from 1.
    public func relate(_ owner: Reference, _ relationship: String, to targets: [Reference]) throws {
        guard let declared = layout.model.allRelationships(of: owner.entity).first(where: { $0.name == relationship }) else {
            throw TernError(.badInput, "entity \(owner.entity) has no relationship \(relationship)")
        }
        for target in targets where !layout.model.lineage(of: target.entity).contains(where: { $0.name == declared.destination }) {
            throw TernError(.badInput, "\(owner.entity).\(relationship) leads to \(declared.destination), not to \(target.entity)")
        }
        switch layout.storage(ofRelationship: relationship, of: owner.entity) {
        case .foreignKey(let column):
            guard targets.count <= 1 else { throw TernError(.badInput, "\(owner.entity).\(relationship) is a to-one: relate it to one object") }
            guard let target = targets.first else { return }
            try pointTo(
                target, from: owner, column: column, entityColumn: entityLayout(owner.entity).entityColumns[relationship],
                orderColumn: entityLayout(owner.entity).orderColumns[relationship])
        case .inverseForeignKey(_, let column, let orderColumn), .hiddenKey(_, let column, let orderColumn):
            for (index, target) in targets.enumerated() {
                let entityColumn = try declared.inverse.flatMap { try entityLayout(target.entity).entityColumns[$0] }
                try pointTo(
                    owner, from: target, column: column, entityColumn: entityColumn, order: orderColumn.map { _ in Int64(index + 1) },
                    orderColumn: orderColumn)
            }
        case .joinTable(let table, let own, let destination, let orderColumn):
            let columns = [own, destination] + (orderColumn.map { [$0] } ?? [])
            let insert = try connection.prepare(
                "INSERT INTO \(quoteIdentifier(table)) (\(columns.map(quoteIdentifier).joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
            )
            for (index, target) in targets.enumerated() {
                try insert.bind([.integer(owner.key), .integer(target.key)] + (orderColumn.map { _ in [SQLiteValue.integer(Int64(index + 1))] } ?? []))
                try insert.run()
            }
        case nil:
            throw TernError(.badInput, "\(owner.entity).\(relationship) is not stored (transient)")
        }
    }

    /// Sets `object`'s foreign key `column` to `target` (and the target's entity number, and its
    /// place in an ordered inverse: after the ones already there unless `order` is given).
    private func pointTo(_ target: Reference, from object: Reference, column: String, entityColumn: String?, order: Int64? = nil, orderColumn: String?) throws {
        let table = try entityLayout(object.entity).table
        var assignments = ["\(quoteIdentifier(column)) = \(target.key)"]
        if let entityColumn { assignments.append("\(quoteIdentifier(entityColumn)) = \(try entityLayout(target.entity).number)") }
        if let orderColumn {
            let place =
                order.map(String.init)
                ?? "(SELECT coalesce(max(\(quoteIdentifier(orderColumn))), 0) + 1 FROM \(quoteIdentifier(table)) WHERE \(quoteIdentifier(column)) = \(target.key))"
            assignments.append("\(quoteIdentifier(orderColumn)) = \(place)")
        }
        try connection.execute("UPDATE \(quoteIdentifier(table)) SET \(assignments.joined(separator: ", ")) WHERE Z_PK = \(object.key)")
    }

    private func entityLayout(_ entity: String) throws -> StoreLayout.EntityLayout {
        guard let found = layout.entities[entity] else {
            throw TernError(.badInput, "no entity \(entity) in \(layout.model.versionName)")
        }
        return found
    }

    func finish() throws {
        try writer.finish()
    }
}
