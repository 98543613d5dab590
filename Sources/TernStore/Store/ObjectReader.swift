import TernSQLite
import TernModel

/// One stored object: its key, its entity, and its attribute and to-one values by property name.
public struct StoredObject: Sendable, Equatable {
    /// The object's `Z_PK`.
    public var key: Int64
    /// The object's own entity (a subentity's name when read through its parent).
    public var entity: String
    /// Attribute name → value; to-one relationship name → destination key (or NULL).
    public var values: [String: SQLiteValue]
}

/// Reads objects from a store through its model.
public struct ObjectReader {
    /// The layout of the model version the store was written for.
    public let layout: StoreLayout
    private let connection: Connection

    /// A reader for the store open on `connection`, laid out as `layout`.
    public init(connection: Connection, layout: StoreLayout) {
        self.connection = connection
        self.layout = layout
    }

    /// Every object of `entity` (and of its subentities when asked), in key order.
    public func objects(of entity: String, includingSubentities: Bool = false) throws -> [StoredObject] {
        guard let entityLayout = layout.entities[entity] else {
            throw TernError(.badInput, "no entity \(entity) in model version \(layout.model.versionName)")
        }
        let numbers = includingSubentities ? layout.model.descendants(of: entity).compactMap { layout.entities[$0.name]?.number } : [entityLayout.number]
        let sql = "SELECT * FROM \(quoteIdentifier(entityLayout.table)) WHERE Z_ENT IN (\(numbers.map(String.init).joined(separator: ", "))) ORDER BY Z_PK"
        let statement = try connection.prepare(sql)
        let columnIndex = Dictionary(uniqueKeysWithValues: statement.columnNames.enumerated().map { ($1, $0) })
        let numberToName = Dictionary(uniqueKeysWithValues: layout.entities.values.map { ($0.number, $0.name) })
        var objects: [StoredObject] = []
        var rows = statement.rows()
        while let row = try rows.next() {
            let concrete = numberToName[Int(row.int64(at: columnIndex["Z_ENT"]!))] ?? entity
            let concreteLayout = layout.entities[concrete]!
            var values: [String: SQLiteValue] = [:]
            for (name, column) in concreteLayout.attributeColumns.merging(concreteLayout.foreignKeyColumns, uniquingKeysWith: { a, _ in a }) {
                if let index = columnIndex[column] { values[name] = row.value(at: index) }
            }
            objects.append(StoredObject(key: row.int64(at: columnIndex["Z_PK"]!), entity: concrete, values: values))
        }
        return objects
    }

    /// The keys `owner` reaches through a to-many relationship, in the relationship's order.
    public func destinations(_ entity: String, _ relationship: String, owner: Int64) throws -> [Int64] {
        guard layout.model.allRelationships(of: entity).contains(where: { $0.name == relationship && $0.isToMany }) else {
            throw TernError(.badInput, "entity \(entity) has no to-many relationship \(relationship)")
        }
        let sql: String
        switch layout.storage(ofRelationship: relationship, of: entity) {
        case .joinTable(let table, let own, let destination, let order):
            sql =
                "SELECT \(quoteIdentifier(destination)) FROM \(quoteIdentifier(table)) WHERE \(quoteIdentifier(own)) = ? ORDER BY \(order.map(quoteIdentifier) ?? "1"), 1"
        case .inverseForeignKey(let table, let column, let order), .hiddenKey(let table, let column, let order):
            sql = "SELECT Z_PK FROM \(quoteIdentifier(table)) WHERE \(quoteIdentifier(column)) = ? ORDER BY \(order.map(quoteIdentifier) ?? "Z_PK"), Z_PK"
        case .foreignKey, nil:
            throw TernError(.badInput, "entity \(entity), relationship \(relationship): no storage found")
        }
        let statement = try connection.prepare(sql)
        try statement.bind(owner, at: 1)
        var keys: [Int64] = []
        var rows = statement.rows()
        while let row = try rows.next() { keys.append(row.int64(at: 0)) }
        return keys
    }
}
