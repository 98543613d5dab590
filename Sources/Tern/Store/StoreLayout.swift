import TernSQLite

/// How one model version is laid out in SQLite, following Core Data's conventions
/// (STORE-LAYOUT.md §3): one table per inheritance root, `Z` + uppercased names, foreign keys for
/// to-one relationships, join tables for many-to-many ones, `Z_FOK_` sort keys for ordered ones.
///
/// Where Core Data's rule is not public (which side names a join table), Tern picks one and says
/// so; when reading a store Core Data wrote, compare layouts with `StoreLayout.Signature`, which
/// ignores join-table names.
public struct StoreLayout: Sendable {
    /// One column of a table.
    public struct Column: Sendable, Equatable {
        /// The column's name (`Z_PK`, `ZTITLE`, …).
        public var name: String
        /// What follows the name in `CREATE TABLE`: its declared type (`INTEGER`, `VARCHAR`, …) and
        /// constraints.
        public var declaration: String
    }

    /// One table a store of the version has, with its columns in creation order.
    public struct Table: Sendable, Equatable {
        /// The table's name (`Z` + uppercased root entity name for an entity table).
        public var name: String
        /// The columns in the order `CREATE TABLE` lists them.
        public var columns: [Column]
        /// Extra table constraints (a join table's primary key).
        public var constraints: [String] = []
    }

    /// Where one entity's values live.
    public struct EntityLayout: Sendable, Equatable {
        /// The entity's name.
        public var name: String
        /// `Z_ENT`.
        public var number: Int
        /// The root's table.
        public var table: String
        /// Attribute name → column, inherited attributes included; transient ones have none.
        public var attributeColumns: [String: String]
        /// To-one relationship name → its foreign-key column, inherited ones included.
        public var foreignKeyColumns: [String: String]
        /// To-one relationship name → the column holding the destination's `Z_ENT`, when the
        /// destination has subentities.
        public var entityColumns: [String: String]
        /// To-one relationship name → the `Z_FOK_` column ordering this object in its owner's
        /// ordered to-many inverse.
        public var orderColumns: [String: String]
    }

    /// A many-to-many (or inverse-less to-many) relationship's join table.
    public struct JoinTable: Sendable, Equatable {
        /// The join table's name.
        public var table: String
        /// The entity owning `relationship`, and the relationship stored here.
        public var entity: String
        /// The relationship whose links the table's rows hold.
        public var relationship: String
        /// The column with the owners' keys, and the one with the destinations' keys.
        public var ownerColumn: String
        /// The column with the destinations' keys (`Z_PK`).
        public var destinationColumn: String
        /// The destinations' order, for an ordered relationship.
        public var orderColumn: String?
        /// The inverse relationship stored in the same rows, if any.
        public var inverseEntity: String?
        /// The inverse relationship's name on `inverseEntity`, when the inverse shares these rows.
        public var inverseRelationship: String?
        /// The column ordering the same rows for the inverse, when the inverse is ordered.
        public var inverseOrderColumn: String?
    }

    /// The model version laid out.
    public let model: ObjectModel
    /// The entity tables (one per inheritance root) and join tables; Core Data's bookkeeping tables
    /// are not here.
    public private(set) var tables: [Table] = []
    /// Entity name → where its values live, for every entity of the model.
    public private(set) var entities: [String: EntityLayout] = [:]
    /// One per relationship kept in a join table; a relationship and its inverse share one.
    public private(set) var joinTables: [JoinTable] = []
    /// `CREATE INDEX` statements, to run after bulk loading.
    public private(set) var indexStatements: [String] = []

    /// Lays out `model`, which must be valid (no `problems()`); model loaders return only valid ones.
    public init(model: ObjectModel) {
        self.model = model
        let numbers = model.entityNumbers
        for root in model.entities.filter({ $0.parent == nil }) {
            layOutTree(root: root, numbers: numbers)
        }
        layOutJoinTables(numbers: numbers)
    }

    // MARK: Entity tables

    private mutating func layOutTree(root: Entity, numbers: [String: Int]) {
        let table = "Z" + root.name.uppercased()
        let tree = model.descendants(of: root.name).sorted { numbers[$0.name]! < numbers[$1.name]! }
        var used: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
        var groups: [String: [Column]] = [:]  // by storage group, filled in Z_ENT order
        var own: [String: EntityLayout] = [:]

        func claim(_ base: String) -> String {
            var name = base
            var suffix = 1
            while used.contains(name) {
                name = base + String(suffix)
                suffix += 1
            }
            used.insert(name)
            return name
        }

        for entity in tree {
            var layout = EntityLayout(name: entity.name, number: numbers[entity.name]!, table: table,
                                      attributeColumns: [:], foreignKeyColumns: [:], entityColumns: [:], orderColumns: [:])
            for attribute in entity.attributes.sorted(by: { $0.name < $1.name }) where !attribute.isTransient {
                let column = claim("Z" + attribute.name.uppercased())
                layout.attributeColumns[attribute.name] = column
                groups[attribute.type.columnDeclaration == "INTEGER" ? "1" : Self.group(attribute.type), default: []]
                    .append(Column(name: column, declaration: attribute.type.columnDeclaration))
            }
            for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) where !relationship.isToMany && !relationship.isTransient {
                let column = claim("Z" + relationship.name.uppercased())
                layout.foreignKeyColumns[relationship.name] = column
                groups["2", default: []].append(Column(name: column, declaration: "INTEGER"))
                indexStatements.append("CREATE INDEX \(quoteIdentifier("\(table)_\(column)_INDEX")) ON \(quoteIdentifier(table)) (\(quoteIdentifier(column)))")
                if model.children(of: relationship.destination).isEmpty == false, let destination = numbers[relationship.destination] {
                    let entityColumn = claim("Z\(destination)_" + relationship.name.uppercased())
                    layout.entityColumns[relationship.name] = entityColumn
                    groups["2", default: []].append(Column(name: entityColumn, declaration: "INTEGER"))
                }
                if let inverseName = relationship.inverse,
                   let inverse = model.allRelationships(of: relationship.destination).first(where: { $0.name == inverseName }),
                   inverse.isOrdered {
                    let orderColumn = claim("Z_FOK_" + relationship.name.uppercased())
                    layout.orderColumns[relationship.name] = orderColumn
                    groups["3", default: []].append(Column(name: orderColumn, declaration: "INTEGER"))
                }
            }
            own[entity.name] = layout
        }
        // Inherited columns: each entity sees its ancestors' columns too.
        for entity in tree {
            var layout = own[entity.name]!
            for ancestor in model.lineage(of: entity.name).dropFirst() {
                let inherited = own[ancestor.name]!
                layout.attributeColumns.merge(inherited.attributeColumns) { mine, _ in mine }
                layout.foreignKeyColumns.merge(inherited.foreignKeyColumns) { mine, _ in mine }
                layout.entityColumns.merge(inherited.entityColumns) { mine, _ in mine }
                layout.orderColumns.merge(inherited.orderColumns) { mine, _ in mine }
            }
            entities[entity.name] = layout
        }
        let fixed = [Column(name: "Z_PK", declaration: "INTEGER PRIMARY KEY"), Column(name: "Z_ENT", declaration: "INTEGER"), Column(name: "Z_OPT", declaration: "INTEGER")]
        let ordered = ["1", "2", "3", "4", "5", "6"].flatMap { groups[$0] ?? [] }
        tables.append(Table(name: table, columns: fixed + ordered))
        if tree.count > 1 {
            indexStatements.append("CREATE INDEX \(quoteIdentifier("\(table)_Z_ENT_INDEX")) ON \(quoteIdentifier(table)) (\"Z_ENT\")")
        }
        for entity in tree {
            indexStatements += constraintIndexes(entity, table: table, columns: entities[entity.name]!)
        }
    }

    /// Core Data's column order: integers, then to-one keys, then sort keys, then dates and
    /// numbers, text, and blobs.
    private static func group(_ type: AttributeType) -> String {
        switch type.columnDeclaration {
        case "TIMESTAMP", "FLOAT", "DECIMAL": "4"
        case "VARCHAR": "5"
        default: "6"
        }
    }

    private func constraintIndexes(_ entity: Entity, table: String, columns: EntityLayout) -> [String] {
        func column(_ property: String) -> String? {
            columns.attributeColumns[property] ?? columns.foreignKeyColumns[property]
        }
        var statements: [String] = []
        for index in entity.fetchIndexes {
            let names = index.properties.compactMap(column)
            guard names.count == index.properties.count, !names.isEmpty else { continue }
            let list = names.map { "\(quoteIdentifier($0)) COLLATE BINARY ASC" }.joined(separator: ", ")
            statements.append("CREATE INDEX \(quoteIdentifier("Z_\(entity.name)_\(index.name)")) ON \(quoteIdentifier(table)) (\(list))")
            // Core Data also indexes a one-property fetch index under the property's name; when
            // the index is named like its property, that is the same index, made once.
            if index.properties.count == 1, index.properties[0] != index.name {
                statements.append("CREATE INDEX \(quoteIdentifier("Z_\(entity.name)_\(index.properties[0])")) ON \(quoteIdentifier(table)) (\(list))")
            }
        }
        for constraint in entity.uniquenessConstraints {
            let names = constraint.compactMap(column)
            guard names.count == constraint.count, !names.isEmpty else { continue }
            let list = names.map { "\(quoteIdentifier($0)) COLLATE BINARY ASC" }.joined(separator: ", ")
            statements.append("CREATE UNIQUE INDEX \(quoteIdentifier("Z_\(entity.name)_UNIQUE_\(constraint.joined(separator: "_"))")) ON \(quoteIdentifier(table)) (\(list))")
        }
        return statements
    }

    // MARK: Join tables

    private mutating func layOutJoinTables(numbers: [String: Int]) {
        var done: Set<String> = []
        for entity in model.entitiesInStoreOrder {
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                let key = "\(entity.name).\(relationship.name)"
                guard !done.contains(key) else { continue }
                let inverse = relationship.inverse.flatMap { name in
                    model.allRelationships(of: relationship.destination).first { $0.name == name }
                }
                if let inverse, !inverse.isToMany { continue }  // one-to-many: the foreign key holds it
                // Both sides of a many-to-many share one table. Tern names it after the relationship
                // whose name sorts last, which matches four of the five Apple stores examined.
                var owner = (entity: entity.name, relationship: relationship)
                var other: (entity: String, relationship: Relationship)?
                if let inverse {
                    let inverseOwner = model.lineage(of: relationship.destination).first { $0.relationship(named: inverse.name) != nil }?.name ?? relationship.destination
                    other = (inverseOwner, inverse)
                    done.insert("\(inverseOwner).\(inverse.name)")
                    if inverse.name.utf8.lexicographicallyPrecedes(relationship.name.utf8) == false, inverse.name != relationship.name {
                        swap(&owner, &other!)
                    }
                }
                done.insert(key)
                let ownerNumber = numbers[owner.entity]!
                let destinationNumber = numbers[owner.relationship.destination]!
                let table = "Z_\(ownerNumber)\(owner.relationship.name.uppercased())"
                let destinationColumn = "Z_\(destinationNumber)\(owner.relationship.name.uppercased())"
                let ownerColumn = other.map { "Z_\(ownerNumber)\($0.relationship.name.uppercased())" } ?? "Z_\(ownerNumber)\(owner.entity.uppercased())"
                var columns = [Column(name: ownerColumn, declaration: "INTEGER"), Column(name: destinationColumn, declaration: "INTEGER")]
                var join = JoinTable(table: table, entity: owner.entity, relationship: owner.relationship.name,
                                     ownerColumn: ownerColumn, destinationColumn: destinationColumn,
                                     inverseEntity: other?.entity, inverseRelationship: other?.relationship.name)
                if owner.relationship.isOrdered {
                    join.orderColumn = "Z_FOK_\(destinationNumber)\(owner.relationship.name.uppercased())"
                    columns.append(Column(name: join.orderColumn!, declaration: "INTEGER"))
                }
                if let other, other.relationship.isOrdered {
                    join.inverseOrderColumn = "Z_FOK_\(ownerNumber)\(other.relationship.name.uppercased())"
                    columns.append(Column(name: join.inverseOrderColumn!, declaration: "INTEGER"))
                }
                tables.append(Table(name: table, columns: columns,
                                    constraints: ["PRIMARY KEY (\(quoteIdentifier(ownerColumn)), \(quoteIdentifier(destinationColumn)))"]))
                indexStatements.append("CREATE INDEX \(quoteIdentifier("\(table)_\(destinationColumn)_INDEX")) ON \(quoteIdentifier(table)) (\(quoteIdentifier(destinationColumn)), \(quoteIdentifier(ownerColumn)))")
                joinTables.append(join)
            }
        }
    }

    // MARK: SQL

    /// `CREATE TABLE` statements for the entity and join tables, and Core Data's two system tables.
    public var createTableStatements: [String] {
        tables.map { table in
            let columns = table.columns.map { "\(quoteIdentifier($0.name)) \($0.declaration)" } + table.constraints
            return "CREATE TABLE \(quoteIdentifier(table.name)) ( \(columns.joined(separator: ", ")) )"
        } + [
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
            "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
        ]
    }
}
