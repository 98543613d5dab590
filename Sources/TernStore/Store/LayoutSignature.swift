import TernSQLite
import TernModel

/// The shape of a store's data tables, compared to recognise which model version wrote a store
/// that carries no usable version hashes, and to check that hashes agree with the tables.
///
/// It holds each entity table's columns with their declared types (a String and an Integer 64
/// attribute of the same name differ: `VARCHAR` against `INTEGER`), and each join table's column
/// names under its name: Tern names join tables as Core Data does (proven on the corpora), and the
/// engine reads them by name, so a store whose join tables an earlier Tern named otherwise is not
/// taken for the version. Core Data's bookkeeping tables (`Z_PRIMARYKEY`, `Z_METADATA`, `Z_MODELCACHE`), persistent
/// history (`A…`), Tern's own (`TERN_…`) and an app's own `Z…` tables (no root entity's in
/// `Z_PRIMARYKEY`) are left out.
public struct LayoutSignature: Sendable, Equatable, CustomStringConvertible {
    /// Entity table name → its columns, each with its declared type (`INTEGER`, `VARCHAR`, …).
    public var entityTables: [String: [String: String]]
    /// Join table name → its columns.
    public var joinTables: [String: Set<String>]

    /// A signature with these tables, as a test or a saved signature gives them.
    public init(entityTables: [String: [String: String]], joinTables: [String: Set<String>]) {
        self.entityTables = entityTables
        self.joinTables = joinTables
    }

    /// The signature a store laid out as `layout` has: what a store of that version would show.
    public init(layout: StoreLayout) {
        entityTables = [:]
        joinTables = [:]
        let joinNames = Set(layout.joinTables.map(\.table))
        for table in layout.tables {
            if joinNames.contains(table.name) {
                joinTables[table.name] = Set(table.columns.map(\.name))
            } else {
                entityTables[table.name] = Dictionary(table.columns.map { ($0.name, Self.declaredType($0.declaration)) }) { first, _ in first }
            }
        }
    }

    /// Reads the signature of an open store.
    public init(connection: Connection) throws {
        entityTables = [:]
        joinTables = [:]
        let statement = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        var rows = statement.rows()
        var names: [String] = []
        while let row = try rows.next() { names.append(row.text(at: 0) ?? "") }
        // An entity table is the table of a root entity `Z_PRIMARYKEY` names: another `Z…` table
        // is an app's own (`ZAPPSTUFF`), kept beside the store like any app table.
        var roots: Set<String>?
        if names.contains("Z_PRIMARYKEY") {
            let entities = try connection.prepare("SELECT Z_NAME, Z_ENT FROM Z_PRIMARYKEY WHERE Z_SUPER = 0")
            var entityRows = entities.rows()
            var found: Set<String> = []
            while let row = try entityRows.next() {
                found.insert(CoreDataNames.table(forRoot: row.text(at: 0) ?? "", number: Int(row.int64(at: 1))))
            }
            roots = found
        }
        for name in names where Self.isDataTable(name) && (name.hasPrefix("Z_") || roots?.contains(name) != false) {
            let info = try connection.prepare("SELECT name, type FROM pragma_table_info(?)")
            try info.bind(name, at: 1)
            var columns: [String: String] = [:]
            var columnRows = info.rows()
            while let row = try columnRows.next() { columns[row.text(at: 0) ?? ""] = Self.declaredType(row.text(at: 1) ?? "") }
            if name.hasPrefix("Z_") { joinTables[name] = Set(columns.keys) } else { entityTables[name] = columns }
        }
    }

    /// The type word of a column declaration (`INTEGER` of `INTEGER PRIMARY KEY`), uppercased.
    private static func declaredType(_ declaration: String) -> String {
        String(declaration.split(separator: " ").first ?? "").uppercased()
    }

    static func isDataTable(_ name: String) -> Bool {
        guard name.hasPrefix("Z") else { return false }
        return !bookkeepingTables.contains(name)
    }

    /// Core Data's bookkeeping tables: in every store, holding no objects.
    package static let bookkeepingTables: Set<String> = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]

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
            let missing = Set(expected.keys).subtracting(actual.keys).sorted()
            let extra = Set(actual.keys).subtracting(expected.keys).sorted()
            if !missing.isEmpty { lines.append("\(table) lacks column\(missing.count == 1 ? "" : "s") \(missing.joined(separator: ", "))") }
            if !extra.isEmpty { lines.append("\(table) has unexpected column\(extra.count == 1 ? "" : "s") \(extra.joined(separator: ", "))") }
            for (column, type) in expected.sorted(by: { $0.key < $1.key }) {
                if let found = actual[column], found != type {
                    lines.append("\(table).\(column) is declared \(found), the version declares \(type)")
                }
            }
        }
        for (name, columns) in joinTables.sorted(by: { $0.key < $1.key }) where store.joinTables[name] != columns {
            lines.append("the store has no join table \(name) with columns \(columns.sorted().joined(separator: ", "))")
        }
        for (name, columns) in store.joinTables.sorted(by: { $0.key < $1.key }) where joinTables[name] != columns {
            lines.append("the store has a join table \(name) with columns \(columns.sorted().joined(separator: ", ")) the version does not")
        }
        return lines
    }

    public var description: String {
        let tables = entityTables.keys.sorted().map { table in
            "\(table)(\(entityTables[table]!.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ",")))"
        }
        let joins = joinTables.map { "\($0.key)[\($0.value.sorted().joined(separator: ","))]" }.sorted()
        return (tables + joins).joined(separator: " ")
    }
}
