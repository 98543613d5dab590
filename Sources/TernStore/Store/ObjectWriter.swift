import TernSQLite
import TernModel

/// Writes objects into a store through its model: keys, entity numbers, columns and join rows
/// are worked out from the layout, never written by hand.
///
/// Use it inside a transaction; call `finish()` once at the end to record the key counters in
/// `Z_PRIMARYKEY` and build the indexes.
public final class ObjectWriter {
    /// The layout of the model version the store was created for.
    public let layout: StoreLayout
    private let connection: Connection
    /// Next `Z_PK` per root table.
    private var nextKey: [String: Int64] = [:]
    private var inserts: [String: (statement: Statement, columns: [String])] = [:]
    /// Per entity, the statement inserting `rowsPerInsert(columns:)` objects at once.
    private var groupInserts: [String: Statement] = [:]
    private var links: [String: Statement] = [:]

    /// - Parameters:
    ///   - connection: a store created for `layout.model` (see `StoreFile.create`).
    ///   - layout: the store's tables and columns for its model version.
    public init(connection: Connection, layout: StoreLayout) throws {
        self.connection = connection
        self.layout = layout
        let statement = try connection.prepare("SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY WHERE Z_SUPER = 0")
        var rows = statement.rows()
        while let row = try rows.next() {
            nextKey[CoreDataNames.table(forRoot: row.text(at: 0) ?? "")] = row.int64(at: 1) + 1
        }
    }

    /// Reserves `count` consecutive keys in the entity's root table and returns the first.
    public func reserveKeys(for entity: String, count: Int) throws -> Int64 {
        let table = try entityLayout(entity).table
        let first = nextKey[table, default: 1]
        nextKey[table] = first + Int64(count)
        return first
    }

    /// The columns `insert` binds for an entity, in order: attributes (by name), then each to-one
    /// relationship's key, entity-number and order columns.
    public func insertColumns(for entity: String) throws -> [String] {
        try insertStatement(for: entity).columns
    }

    /// Inserts one object with the given key and column values (`insertColumns` order).
    public func insert(_ entity: String, key: Int64, values: [SQLiteValue]) throws {
        let (statement, columns) = try insertStatement(for: entity)
        guard values.count == columns.count else {
            throw TernError(.badInput, "entity \(entity): \(values.count) values for \(columns.count) columns")
        }
        try statement.bind(key, at: 1)
        for (index, value) in values.enumerated() {
            try value.bind(to: statement, at: index + 2)
        }
        try statement.run()
    }

    /// Objects one statement inserts: as many as keep its parameters within 999, SQLite's
    /// smallest limit, and at most 64 — beyond that the statement's own work, paid once per
    /// run, is a small part of its rows' already.
    public static func rowsPerInsert(columns: Int) -> Int {
        max(1, min(64, 999 / (columns + 1)))
    }

    /// Inserts objects of one entity: `keys[i]` with `values[i * n ..< (i + 1) * n]`, `n` being
    /// the entity's `insertColumns` count. Groups of `rowsPerInsert` objects go in one
    /// multi-row `INSERT`, the rest one by one: a writer of many small objects spends much of
    /// its time starting and ending statements otherwise.
    public func insert(_ entity: String, keys: ArraySlice<Int64>, values: ArraySlice<SQLiteValue>) throws {
        let (single, columns) = try insertStatement(for: entity)
        let width = columns.count
        guard values.count == keys.count * width else {
            throw TernError(.badInput, "entity \(entity): \(values.count) values for \(keys.count) objects of \(width) columns")
        }
        let group = Self.rowsPerInsert(columns: width)
        var key = keys.startIndex
        var value = values.startIndex
        if keys.count >= group {
            let statement = try groupInsertStatement(for: entity, rows: group, columns: columns)
            while keys.endIndex - key >= group {
                var parameter = 1
                for _ in 0..<group {
                    try statement.bind(keys[key], at: parameter)
                    parameter += 1
                    key += 1
                    for _ in 0..<width {
                        try values[value].bind(to: statement, at: parameter)
                        parameter += 1
                        value += 1
                    }
                }
                try statement.run()
            }
        }
        while key < keys.endIndex {
            try single.bind(keys[key], at: 1)
            for column in 0..<width { try values[value + column].bind(to: single, at: column + 2) }
            try single.run()
            key += 1
            value += width
        }
    }

    /// Inserts one object from property values (attribute name → value, to-one relationship
    /// name → destination key), allocating its key. Unset attributes take their defaults.
    @discardableResult
    public func insert(_ entity: String, _ properties: [String: SQLiteValue]) throws -> Int64 {
        let key = try reserveKeys(for: entity, count: 1)
        let entityLayout = try entityLayout(entity)
        let attributes = Dictionary(uniqueKeysWithValues: layout.model.allAttributes(of: entity).map { ($0.name, $0) })
        let relationships = Dictionary(uniqueKeysWithValues: layout.model.allRelationships(of: entity).map { ($0.name, $0) })
        for name in properties.keys where attributes[name] == nil && relationships[name] == nil {
            throw TernError(.badInput, "entity \(entity) has no property \(name)")
        }
        var values: [SQLiteValue] = []
        for column in try insertColumns(for: entity) {
            if let name = entityLayout.attributeColumns.first(where: { $0.value == column })?.key {
                values.append(properties[name] ?? attributes[name]?.defaultValue ?? .null)
            } else if let name = entityLayout.foreignKeyColumns.first(where: { $0.value == column })?.key {
                values.append(properties[name] ?? .null)
            } else if let name = entityLayout.entityColumns.first(where: { $0.value == column })?.key {
                values.append(
                    properties[name] == nil || properties[name] == .null
                        ? .null
                        : .integer(Int64(layout.entities[relationships[name]!.destination]!.number)))
            } else {
                values.append(.null)
            }
        }
        try insert(entity, key: key, values: values)
        return key
    }

    /// Records that `owner` reaches `destination` through a to-many stored in a join table, or
    /// in a hidden key of the destination's row (a to-many with no inverse: the destination,
    /// already inserted, gets `owner` as its one owner).
    public func link(_ entity: String, _ relationship: String, owner: Int64, destination: Int64, order: Int64? = nil, inverseOrder: Int64? = nil) throws {
        guard let join = layout.joinTables.first(where: { ($0.entity == entity && $0.relationship == relationship) }) else {
            guard case .hiddenKey(let table, let column, let orderColumn)? = layout.storage(ofRelationship: relationship, of: entity)
            else {
                throw TernError(.badInput, "entity \(entity), relationship \(relationship) is not a to-many stored in a join table or a hidden key")
            }
            let statement =
                try links["\(table).\(column)"]
                ?? {
                    let sets = [column] + (orderColumn.map { [$0] } ?? [])
                    let prepared = try connection.prepare(
                        "UPDATE \(quoteIdentifier(table)) SET \(sets.map { "\(quoteIdentifier($0)) = ?" }.joined(separator: ", ")) WHERE Z_PK = ?")
                    links["\(table).\(column)"] = prepared
                    return prepared
                }()
            let values: [SQLiteValue] = [.integer(owner)] + (orderColumn.map { _ in [order.map { .integer($0) } ?? .null] } ?? []) + [.integer(destination)]
            try statement.bind(values)
            try statement.run()
            return
        }
        let statement =
            try links[join.table]
            ?? {
                var columns = [join.ownerColumn, join.destinationColumn]
                if let order = join.orderColumn { columns.append(order) }
                if let order = join.inverseOrderColumn { columns.append(order) }
                let sql =
                    "INSERT INTO \(quoteIdentifier(join.table)) (\(columns.map(quoteIdentifier).joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
                let prepared = try connection.prepare(sql)
                links[join.table] = prepared
                return prepared
            }()
        try statement.bind(owner, at: 1)
        try statement.bind(destination, at: 2)
        var index = 3
        if join.orderColumn != nil {
            try (order.map { SQLiteValue.integer($0) } ?? .null).bind(to: statement, at: index)
            index += 1
        }
        if join.inverseOrderColumn != nil {
            try (inverseOrder.map { SQLiteValue.integer($0) } ?? .null).bind(to: statement, at: index)
        }
        try statement.run()
    }

    /// Records key counters, builds indexes, gives derived attributes their values and Core
    /// Data's triggers, and releases the writer's statements. Call once, after the last insert.
    ///
    /// - Parameter derivingValues: false keeps the derived values inserted (a writer whose links
    ///   are not in the store computed them itself).
    public func finish(derivingValues: Bool = true) throws {
        inserts.values.forEach { $0.statement.finalize() }
        groupInserts.values.forEach { $0.finalize() }
        links.values.forEach { $0.finalize() }
        inserts.removeAll()
        groupInserts.removeAll()
        links.removeAll()
        let update = try connection.prepare("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_SUPER = 0 AND Z_NAME = ?")
        for (table, next) in nextKey.sorted(by: { $0.key < $1.key }) {
            guard let root = layout.rootEntities[table] else { continue }
            try update.bind([next - 1, root])
            try update.run()
        }
        for statement in layout.indexStatements + (derivingValues ? layout.derivedValueStatements : []) + layout.triggerStatements {
            try connection.execute(statement)
        }
    }

    private func entityLayout(_ entity: String) throws -> StoreLayout.EntityLayout {
        guard let entityLayout = layout.entities[entity] else {
            throw TernError(.badInput, "no entity \(entity) in model version \(layout.model.versionName)")
        }
        return entityLayout
    }

    private func insertStatement(for entity: String) throws -> (statement: Statement, columns: [String]) {
        if let cached = inserts[entity] { return cached }
        let entityLayout = try entityLayout(entity)
        var columns = layout.model.allAttributes(of: entity).compactMap { entityLayout.attributeColumns[$0.name] }
        for relationship in layout.model.allRelationships(of: entity) {
            for map in [entityLayout.foreignKeyColumns, entityLayout.entityColumns, entityLayout.orderColumns] {
                if let column = map[relationship.name] { columns.append(column) }
            }
        }
        let prepared = (try connection.prepare(insertSQL(entityLayout, columns: columns, rows: 1)), columns)
        inserts[entity] = prepared
        return prepared
    }

    private func groupInsertStatement(for entity: String, rows: Int, columns: [String]) throws -> Statement {
        if let cached = groupInserts[entity] { return cached }
        let prepared = try connection.prepare(insertSQL(try entityLayout(entity), columns: columns, rows: rows))
        groupInserts[entity] = prepared
        return prepared
    }

    /// `INSERT` of `rows` objects of the entity: each its key, then `columns`.
    private func insertSQL(_ entityLayout: StoreLayout.EntityLayout, columns: [String], rows: Int) -> String {
        let all = ["Z_PK", "Z_ENT", "Z_OPT"] + columns
        let row = "(" + (["?", String(entityLayout.number), "1"] + columns.map { _ in "?" }).joined(separator: ", ") + ")"
        return
            "INSERT INTO \(quoteIdentifier(entityLayout.table)) (\(all.map(quoteIdentifier).joined(separator: ", "))) VALUES \(Array(repeating: row, count: rows).joined(separator: ", "))"
    }
}
