import TernSQLite
import TernModel

/// How one model version is laid out in SQLite, following Core Data's conventions
/// (the rules, each with its evidence: `Sources/Tern/Tern.docc/VersionHashesAndStoreLayout.md`): one table per inheritance root, `Z` + uppercased names, foreign keys for
/// to-one relationships and inverse-less to-manys, join tables for many-to-many ones, `Z_FOK_`
/// sort keys for ordered ones.
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
        /// The to-manys with no inverse that reach this entity (or an ancestor): each keeps its
        /// owner's key in a column of this entity's table.
        public var hiddenKeys: [HiddenKey] = []
    }

    /// A to-many with no inverse, which Core Data keeps as a foreign key in the destination's
    /// table (`Z2MODIFIERS`, CartKit's store): each destination object has at most one owner.
    public struct HiddenKey: Sendable, Equatable {
        /// The entity declaring the relationship.
        public var owner: String
        /// The relationship's name.
        public var relationship: String
        /// The owner's key.
        public var column: String
        /// The destinations' order, for an ordered relationship.
        public var orderColumn: String?
    }

    /// A many-to-many relationship's join table.
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
        /// The entity declaring the inverse, whose links are the same rows; nil only in a store
        /// an earlier Tern laid out, which kept a to-many with no inverse in a join table.
        public var inverseEntity: String?
        /// The inverse relationship's name on `inverseEntity`.
        public var inverseRelationship: String?
        /// The column ordering the same rows for the inverse, when the inverse is ordered.
        public var inverseOrderColumn: String?
    }

    /// The model version laid out.
    public let model: ObjectModel
    /// The entity tables (one per inheritance root) and join tables; Core Data's bookkeeping tables
    /// are not here.
    public internal(set) var tables: [Table] = []
    /// Entity name → where its values live, for every entity of the model.
    public private(set) var entities: [String: EntityLayout] = [:]
    /// One per relationship kept in a join table; a relationship and its inverse share one.
    public internal(set) var joinTables: [JoinTable] = []
    /// Entity table name → the name of the inheritance root it holds (`Z_PRIMARYKEY`'s row
    /// with `Z_SUPER` 0 that counts the table's keys).
    public private(set) var rootEntities: [String: String] = [:]
    /// The indexes, to make after bulk loading.
    public internal(set) var indexes: [SchemaStatement] = []
    /// The triggers keeping derived attributes current, as Core Data makes them; to make last,
    /// after `derivedValueStatements` (their bodies call functions only Core Data has).
    public internal(set) var triggers: [SchemaStatement] = []
    /// `CREATE INDEX` statements, to run after bulk loading.
    public var indexStatements: [String] { indexes.map(\.sql) }
    /// `CREATE TRIGGER` statements, to run last.
    public var triggerStatements: [String] { triggers.map(\.sql) }
    /// `UPDATE` statements giving every derived attribute the value its triggers would keep.
    public internal(set) var derivedValueStatements: [String] = []
    /// Derived attributes kept by triggers, named on the entity declaring them.
    public internal(set) var triggeredDerivations: Set<PropertyIdentity> = []
    /// Derived attributes Tern makes no triggers for, as "Entity.attribute (expression)": their
    /// values are what the mapping gives.
    public internal(set) var untriggeredDerivations: [String] = []

    /// Whose naming rules laid the store out: Core Data's, or an earlier Tern's.
    public let rules: Rules

    /// Many-to-many relationships ("Entity.relationship", on the entity declaring it) whose join
    /// table Core Data's rule would name after them but a store names after their inverse: read
    /// from the store as it has them (`joinTablesNamedByInverse(of:in:)`), never derived.
    public let namedByInverse: Set<String>

    /// Whether uniqueness constraints are `CONSTRAINT … UNIQUE` clauses of `CREATE TABLE` (Core
    /// Data 637, the objc.io stores) rather than unique indexes (Core Data 1044 and later).
    public let uniquenessInTable: Bool

    /// Lays out `model`, which must be valid (no `problems()`); model loaders return only valid ones.
    ///
    /// - Parameter model: the model whose tables, columns and indexes are derived.
    /// - Parameter frameworkVersion: the Core Data release to match (`NSPersistenceFrameworkVersion`);
    ///   nil for today's. Releases before 1000 keep uniqueness constraints inside `CREATE TABLE`.
    /// - Parameter rules: Core Data's (what every store Tern writes has), or an earlier Tern's,
    ///   to read a store that release wrote.
    /// - Parameter namedByInverse: join tables a store names from the other side (see the property).
    public init(model: ObjectModel, frameworkVersion: Int? = nil, rules: Rules = .coreData, namedByInverse: Set<String> = []) {
        self.model = model
        self.rules = rules
        self.namedByInverse = namedByInverse
        self.uniquenessInTable = (frameworkVersion ?? Int.max) < 1000
        let numbers = model.entityNumbers
        for root in model.entities.filter({ $0.parent == nil }) {
            layOutTree(root: root, numbers: numbers)
        }
        switch rules {
        case .coreData: layOutJoinTables(numbers: numbers)
        case .earlierTern: layOutEarlierTernJoinTables(numbers: numbers)
        }
        layOutDerivedAttributes()
    }

    // MARK: Entity tables

    /// Where a column goes in `CREATE TABLE`: Core Data groups columns by kind of value first,
    /// then by entity (in `Z_ENT` order), then by name; integers come first, and within an
    /// entity its integer attributes come before its to-one keys, which come before sort keys.
    private struct Placement: Comparable {
        var group: Int
        var entity: Int
        var kind: Int
        var sequence: Int

        static func < (a: Placement, b: Placement) -> Bool {
            (a.group, a.entity, a.kind, a.sequence) < (b.group, b.entity, b.kind, b.sequence)
        }
    }

    private mutating func layOutTree(root: Entity, numbers: [String: Int]) {
        let table = CoreDataNames.table(forRoot: root.name)
        rootEntities[table] = root.name
        let tree = model.descendants(of: root.name).sorted { numbers[$0.name]! < numbers[$1.name]! }
        var used: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
        var placed: [(Placement, Column)] = []
        var own: [String: EntityLayout] = [:]

        for (position, entity) in tree.enumerated() {
            var layout = EntityLayout(
                name: entity.name, number: numbers[entity.name]!, table: table,
                attributeColumns: [:], foreignKeyColumns: [:], entityColumns: [:], orderColumns: [:])
            func place(_ column: String, _ declaration: String, group: Int, kind: Int) {
                placed.append((Placement(group: group, entity: position, kind: kind, sequence: placed.count), Column(name: column, declaration: declaration)))
            }
            for attribute in entity.attributes.sorted(by: { $0.name < $1.name }) where !attribute.isTransient {
                let column = CoreDataNames.unique(CoreDataNames.column(forProperty: attribute.name), in: &used)
                layout.attributeColumns[attribute.name] = column
                place(column, attribute.type.columnDeclaration, group: Self.group(attribute.type), kind: 0)
            }
            for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) where !relationship.isToMany && !relationship.isTransient {
                let column = CoreDataNames.unique(CoreDataNames.column(forProperty: relationship.name), in: &used)
                layout.foreignKeyColumns[relationship.name] = column
                place(column, "INTEGER", group: 0, kind: 1)
                indexes.append(Self.createIndex(CoreDataNames.columnIndex(table: table, column: column), on: table, [quoteIdentifier(column)]))
                if model.children(of: relationship.destination).isEmpty == false, let destination = numbers[relationship.destination] {
                    let entityColumn = CoreDataNames.unique(CoreDataNames.entityColumn(forToOne: relationship.name, destinationNumber: destination), in: &used)
                    layout.entityColumns[relationship.name] = entityColumn
                    place(entityColumn, "INTEGER", group: 0, kind: 1)
                }
                if let inverseName = relationship.inverse,
                    let inverse = model.allRelationships(of: relationship.destination).first(where: { $0.name == inverseName }),
                    inverse.isOrdered
                {
                    let orderColumn = CoreDataNames.unique(CoreDataNames.orderColumn(forToOne: relationship.name), in: &used)
                    layout.orderColumns[relationship.name] = orderColumn
                    place(orderColumn, "INTEGER", group: 0, kind: 2)
                }
            }
            for (owner, relationship) in inverselessToManys(reaching: entity.name) where rules == .coreData {
                let ownerNumber = numbers[owner]!
                let column = CoreDataNames.unique(CoreDataNames.hiddenForeignKey(forToMany: relationship.name, ownerNumber: ownerNumber), in: &used)
                place(column, "INTEGER", group: 0, kind: 1)
                indexes.append(Self.createIndex(CoreDataNames.columnIndex(table: table, column: column), on: table, [quoteIdentifier(column)]))
                var key = HiddenKey(owner: owner, relationship: relationship.name, column: column)
                if relationship.isOrdered {
                    key.orderColumn = CoreDataNames.unique(CoreDataNames.hiddenOrderColumn(forToMany: relationship.name, ownerNumber: ownerNumber), in: &used)
                    place(key.orderColumn!, "INTEGER", group: 0, kind: 2)
                }
                layout.hiddenKeys.append(key)
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
                layout.hiddenKeys += inherited.hiddenKeys
            }
            entities[entity.name] = layout
        }
        let fixed = [
            Column(name: "Z_PK", declaration: "INTEGER PRIMARY KEY"), Column(name: "Z_ENT", declaration: "INTEGER"),
            Column(name: "Z_OPT", declaration: "INTEGER"),
        ]
        var constraints: [String] = []
        if uniquenessInTable {
            for entity in tree {
                for constraint in entity.uniquenessConstraints {
                    let names = constraint.compactMap { entities[entity.name]!.attributeColumns[$0] ?? entities[entity.name]!.foreignKeyColumns[$0] }
                    guard names.count == constraint.count, !names.isEmpty else { continue }
                    constraints.append(
                        "CONSTRAINT \(quoteIdentifier(CoreDataNames.uniqueConstraint(columns: names))) UNIQUE (\(names.map(quoteIdentifier).joined(separator: ", ")))"
                    )
                }
            }
        }
        tables.append(Table(name: table, columns: fixed + placed.sorted { $0.0 < $1.0 }.map(\.1), constraints: constraints))
        if tree.count > 1 {
            indexes.append(Self.createIndex(CoreDataNames.entityIndex(table: table), on: table, ["\"Z_ENT\""]))
        }
        for entity in tree {
            indexes += constraintIndexes(entity, table: table, columns: entities[entity.name]!)
        }
    }

    /// The stored to-manys with no inverse whose destination is `entity`, with the entities
    /// declaring them, in entity-name then relationship-name order.
    private func inverselessToManys(reaching entity: String) -> [(owner: String, relationship: Relationship)] {
        model.entities.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }.flatMap { owner in
            owner.relationships
                .filter { $0.isToMany && !$0.isTransient && $0.inverse == nil && $0.destination == entity }
                .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
                .map { (owner.name, $0) }
        }
    }

    /// Core Data's column groups: integers (attributes, keys, sort keys), then dates and
    /// floating-point numbers together, decimals, text, UUIDs, transformable values, binary data.
    private static func group(_ type: AttributeType) -> Int {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: 0
        case .date, .double, .float: 1
        case .decimal: 2
        case .string, .uri: 3
        case .uuid: 4
        case .transformable: 5
        case .binary, .undefined: 6  // an undefined type is transient: never a column
        }
    }

    /// Adds `join`'s table — its two key columns, together its primary key, then the order
    /// column of each ordered side — and its index named `index` on the destination column,
    /// whichever rules named them.
    mutating func add(_ join: JoinTable, index: String) {
        let orders = [join.orderColumn, join.inverseOrderColumn].compactMap { $0 }
        let columns = ([join.ownerColumn, join.destinationColumn] + orders).map { Column(name: $0, declaration: "INTEGER") }
        let key = [join.ownerColumn, join.destinationColumn].map(quoteIdentifier).joined(separator: ", ")
        tables.append(Table(name: join.table, columns: columns, constraints: ["PRIMARY KEY (\(key))"]))
        indexes.append(Self.createIndex(index, on: join.table, [quoteIdentifier(join.destinationColumn), quoteIdentifier(join.ownerColumn)]))
        joinTables.append(join)
    }

    private static func createIndex(_ name: String, unique: Bool = false, on table: String, _ columns: [String]) -> SchemaStatement {
        SchemaStatement(
            name: name, table: table,
            sql: "CREATE \(unique ? "UNIQUE " : "")INDEX \(quoteIdentifier(name)) ON \(quoteIdentifier(table)) (\(columns.joined(separator: ", ")))")
    }

    private func constraintIndexes(_ entity: Entity, table: String, columns: EntityLayout) -> [SchemaStatement] {
        func column(_ property: String) -> String? {
            columns.attributeColumns[property] ?? columns.foreignKeyColumns[property]
        }
        var statements: [SchemaStatement] = []
        // Xcode 7's indexed attributes and compound indexes (objc.io's Moody stores).
        for attribute in entity.attributes.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) where attribute.isIndexed {
            guard let name = columns.attributeColumns[attribute.name] else { continue }
            statements.append(Self.createIndex(CoreDataNames.columnIndex(table: table, column: name), on: table, [quoteIdentifier(name)]))
        }
        for compound in entity.compoundIndexes {
            let names = compound.compactMap(column)
            guard names.count == compound.count, !names.isEmpty else { continue }
            statements.append(Self.createIndex(CoreDataNames.compoundIndex(table: table, columns: names), on: table, names.map(quoteIdentifier)))
        }
        for index in entity.fetchIndexes {
            let names = index.properties.compactMap(column)
            guard names.count == index.properties.count, !names.isEmpty else { continue }
            let list = names.map { "\(quoteIdentifier($0)) COLLATE BINARY ASC" }
            statements.append(Self.createIndex(CoreDataNames.fetchIndex(entity: entity.name, name: index.name), on: table, list))
            // Xcode turns an attribute's "Indexed" box into a fetch index `by<Property>` and
            // Core Data indexes the property under its own name as well (DuckDuckGo's
            // `Z_BookmarkEntity_isPendingDeletion` beside `byIsPendingDeletion`); a fetch index
            // of another name gets no second index (`Z_HTTPSExcludedDomain_domainIndex`).
            if index.properties.count == 1, let property = index.properties.first,
                index.name == "by" + property.prefix(1).uppercased() + property.dropFirst()
            {
                statements.append(Self.createIndex(CoreDataNames.fetchIndex(entity: entity.name, name: property), on: table, list))
            }
        }
        guard !uniquenessInTable else { return statements }
        for constraint in entity.uniquenessConstraints {
            let names = constraint.compactMap(column)
            guard names.count == constraint.count, !names.isEmpty else { continue }
            let list = names.map { "\(quoteIdentifier($0)) COLLATE BINARY ASC" }
            statements.append(Self.createIndex(CoreDataNames.uniqueIndex(entity: entity.name, properties: constraint), unique: true, on: table, list))
        }
        return statements
    }

    // MARK: Join tables

    /// Many-to-many join tables. Core Data visits entities in name order, each with its
    /// relationships (inherited ones included) from the last name to the first; the first
    /// side of a pair it meets names the table after itself (`Z_<its entity's number><NAME>`);
    /// both sides of a reflexive pair are on one entity, and there the hash-ordered walk of its
    /// properties (`CoreDataPropertyWalk`) decides which it meets first.
    /// Join columns are unique across all join tables, later ones taking a numeric suffix in
    /// the order the tables are made. Evidence: CareKit 2.1 (`Z_1TAGS`, `Z_3TAGS` … with
    /// `Z_13TAGS`, `Z_13TAGS1`, `Z_13TAGS2` for the subentity `OCKCDHealthKitTask`'s inherited
    /// `tags`, met before `OCKCDOutcome`), `Z_1PREVIOUS` (`previous` before `next`) and
    /// DuckDuckGo's `Z_1FAVORITES` (`favorites` before `favoriteFolders`).
    private mutating func layOutJoinTables(numbers: [String: Int]) {
        var done: Set<String> = []
        var takenColumns: Set<String> = []
        var walks: [String: [String]?] = [:]
        for entity in model.entities {
            let relationships = model.allRelationships(of: entity.name)
                .sorted { $1.name.utf8.lexicographicallyPrecedes($0.name.utf8) }
            for relationship in relationships where relationship.isToMany && !relationship.isTransient {
                let declaring = model.entityDeclaring(relationship: relationship.name, from: entity.name)
                let key = "\(declaring).\(relationship.name)"
                guard !done.contains(key) else { continue }
                let inverse = relationship.inverse.flatMap { name in
                    model.allRelationships(of: relationship.destination).first { $0.name == name }
                }
                // One-to-many, or no inverse: a foreign key in the destination's table holds it.
                guard let inverse, inverse.isToMany else { continue }
                var owner = (entity: declaring, relationship: relationship)
                let inverseOwner = model.entityDeclaring(relationship: inverse.name, from: relationship.destination)
                var other = (entity: inverseOwner, relationship: inverse)
                // A reflexive pair: the side Core Data's property walk meets first names the table.
                if relationship.destination == entity.name, inverseOwner == declaring {
                    if walks[entity.name] == nil { walks[entity.name] = CoreDataPropertyWalk.order(of: entity.name, in: model, numbers: numbers) }
                    if let walk = walks[entity.name] ?? nil, let mine = walk.firstIndex(of: relationship.name),
                        let theirs = walk.firstIndex(of: inverse.name), theirs < mine
                    {
                        swap(&owner, &other)
                    }
                }
                if namedByInverse.contains("\(owner.entity).\(owner.relationship.name)") { swap(&owner, &other) }
                done.insert("\(inverseOwner).\(inverse.name)")
                done.insert(key)
                let ownerNumber = numbers[owner.entity]!
                let destinationNumber = numbers[owner.relationship.destination]!
                let table = CoreDataNames.joinTable(forRelationship: owner.relationship.name, ownerNumber: ownerNumber)
                let ownerColumn = CoreDataNames.unique(
                    CoreDataNames.joinColumn(forRelationship: other.relationship.name, destinationNumber: ownerNumber), in: &takenColumns)
                let destinationColumn = CoreDataNames.unique(
                    CoreDataNames.joinColumn(forRelationship: owner.relationship.name, destinationNumber: destinationNumber), in: &takenColumns)
                var join = JoinTable(
                    table: table, entity: owner.entity, relationship: owner.relationship.name,
                    ownerColumn: ownerColumn, destinationColumn: destinationColumn,
                    inverseEntity: other.entity, inverseRelationship: other.relationship.name)
                if owner.relationship.isOrdered { join.orderColumn = CoreDataNames.joinOrderColumn(ordering: destinationColumn) }
                if other.relationship.isOrdered { join.inverseOrderColumn = CoreDataNames.joinOrderColumn(ordering: ownerColumn) }
                add(join, index: CoreDataNames.columnIndex(table: table, column: destinationColumn))
            }
        }
    }

    /// The reflexive many-to-many relationships of `model` whose join table `tables` (a store's)
    /// holds under the name of the other side, where the table Core Data's rule names is not there:
    /// which side names a reflexive many-to-many's table is not derivable for every model, and
    /// a store's own tables are the truth for reading it.
    public static func joinTablesNamedByInverse(of model: ObjectModel, rules: Rules = .coreData, in tables: Set<String>) -> Set<String> {
        guard rules == .coreData else { return [] }
        let derived = StoreLayout(model: model)
        let numbers = model.entityNumbers
        var found: Set<String> = []
        // Only a reflexive pair (both sides on one entity): elsewhere the rule is proven on the
        // corpora, and a table of the other side's name is not Core Data's.
        for join in derived.joinTables where !tables.contains(join.table) && join.inverseEntity == join.entity {
            guard let inverseEntity = join.inverseEntity, let inverse = join.inverseRelationship, let number = numbers[inverseEntity],
                tables.contains(CoreDataNames.joinTable(forRelationship: inverse, ownerNumber: number))
            else { continue }
            found.insert("\(join.entity).\(join.relationship)")
        }
        return found
    }

    // MARK: SQL

    /// `CREATE TABLE` for one of the layout's tables, under another name if given (a table
    /// rebuilt beside the one it replaces).
    public func createStatement(_ table: Table, named name: String? = nil) -> String {
        let columns = table.columns.map { "\(quoteIdentifier($0.name)) \($0.declaration)" } + table.constraints
        return "CREATE TABLE \(quoteIdentifier(name ?? table.name)) ( \(columns.joined(separator: ", ")) )"
    }

    /// `CREATE TABLE` statements for the entity and join tables, and Core Data's two system tables.
    public var createTableStatements: [String] {
        tables.map { createStatement($0) } + [
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
            "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
        ]
    }
}
