import TernSQLite

/// The shape of a store's data tables, compared to recognise which model version wrote a store
/// whose version hashes Tern cannot recompute (stores written by Core Data).
///
/// It holds each entity table's column names and each join table's column names; join tables are
/// compared by their columns alone, since which relationship names a join table is not a public
/// rule. Core Data's bookkeeping tables (`Z_PRIMARYKEY`, `Z_METADATA`, `Z_MODELCACHE`), persistent
/// history (`A…`) and Tern's own (`TERN_…`) are left out.
public struct LayoutSignature: Sendable, Equatable, CustomStringConvertible {
    /// Entity table name → its columns.
    public var entityTables: [String: Set<String>]
    /// Each join table's columns.
    public var joinTables: Set<Set<String>>

    /// A signature with these tables, as a test or a saved signature gives them.
    public init(entityTables: [String: Set<String>], joinTables: Set<Set<String>>) {
        self.entityTables = entityTables
        self.joinTables = joinTables
    }

    /// The signature a store laid out as `layout` has: what a store of that version would show.
    public init(layout: StoreLayout) {
        entityTables = [:]
        joinTables = []
        let joinNames = Set(layout.joinTables.map(\.table))
        for table in layout.tables {
            let columns = Set(table.columns.map(\.name))
            if joinNames.contains(table.name) { joinTables.insert(columns) } else { entityTables[table.name] = columns }
        }
    }

    /// Reads the signature of an open store.
    public init(connection: Connection) throws {
        entityTables = [:]
        joinTables = []
        let statement = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        var rows = statement.rows()
        var names: [String] = []
        while let row = try rows.next() { names.append(row.text(at: 0) ?? "") }
        for name in names where Self.isDataTable(name) {
            let info = try connection.prepare("SELECT name FROM pragma_table_info(?)")
            try info.bind(name, at: 1)
            var columns: Set<String> = []
            var columnRows = info.rows()
            while let row = try columnRows.next() { columns.insert(row.text(at: 0) ?? "") }
            if name.hasPrefix("Z_") { joinTables.insert(columns) } else { entityTables[name] = columns }
        }
    }

    static func isDataTable(_ name: String) -> Bool {
        guard name.hasPrefix("Z") else { return false }
        return !bookkeepingTables.contains(name)
    }

    /// Core Data's bookkeeping tables: in every store, holding no objects.
    static let bookkeepingTables: Set<String> = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]

    /// How `store` differs from this (expected) layout, in words about the store.
    public func differences(from store: LayoutSignature) -> [String] {
        var lines: [String] = []
        for table in Set(entityTables.keys).union(store.entityTables.keys).sorted() {
            guard let expected = entityTables[table] else {
                lines.append("the store has a table \(table) the version does not"); continue
            }
            guard let actual = store.entityTables[table] else {
                lines.append("the store has no table \(table)"); continue
            }
            let missing = expected.subtracting(actual).sorted()
            let extra = actual.subtracting(expected).sorted()
            if !missing.isEmpty { lines.append("\(table) lacks column\(missing.count == 1 ? "" : "s") \(missing.joined(separator: ", "))") }
            if !extra.isEmpty { lines.append("\(table) has unexpected column\(extra.count == 1 ? "" : "s") \(extra.joined(separator: ", "))") }
        }
        for join in joinTables.subtracting(store.joinTables).map({ $0.sorted().joined(separator: ", ") }).sorted() {
            lines.append("the store has no join table with columns \(join)")
        }
        for join in store.joinTables.subtracting(joinTables).map({ $0.sorted().joined(separator: ", ") }).sorted() {
            lines.append("the store has a join table with columns \(join) the version does not")
        }
        return lines
    }

    public var description: String {
        let tables = entityTables.keys.sorted().map { "\($0)(\(entityTables[$0]!.sorted().joined(separator: ",")))" }
        let joins = joinTables.map { "[\($0.sorted().joined(separator: ","))]" }.sorted()
        return (tables + joins).joined(separator: " ")
    }
}
