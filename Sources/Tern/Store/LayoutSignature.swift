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

    public init(entityTables: [String: Set<String>], joinTables: Set<Set<String>>) {
        self.entityTables = entityTables
        self.joinTables = joinTables
    }

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
        return !["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"].contains(name)
    }

    /// What differs, for messages: tables or columns only one side has.
    public func differences(from other: LayoutSignature) -> [String] {
        var lines: [String] = []
        for table in Set(entityTables.keys).union(other.entityTables.keys).sorted() {
            let mine = entityTables[table] ?? []
            let theirs = other.entityTables[table] ?? []
            if entityTables[table] == nil { lines.append("table \(table) is missing"); continue }
            if other.entityTables[table] == nil { lines.append("table \(table) is unexpected"); continue }
            let missing = theirs.subtracting(mine).sorted()
            let extra = mine.subtracting(theirs).sorted()
            if !missing.isEmpty { lines.append("\(table) lacks \(missing.joined(separator: ", "))") }
            if !extra.isEmpty { lines.append("\(table) has extra \(extra.joined(separator: ", "))") }
        }
        if joinTables != other.joinTables {
            lines.append("join tables differ: \(joinTables.map { $0.sorted().joined(separator: "+") }.sorted()) vs \(other.joinTables.map { $0.sorted().joined(separator: "+") }.sorted())")
        }
        return lines
    }

    public var description: String {
        let tables = entityTables.keys.sorted().map { "\($0)(\(entityTables[$0]!.sorted().joined(separator: ",")))" }
        let joins = joinTables.map { "[\($0.sorted().joined(separator: ","))]" }.sorted()
        return (tables + joins).joined(separator: " ")
    }
}
