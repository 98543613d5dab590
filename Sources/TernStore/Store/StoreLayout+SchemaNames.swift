import TernModel

/// A table, index or trigger a layout makes: its name, the table it belongs to, its statement.
public struct SchemaStatement: Sendable, Equatable {
    public var name: String
    public var table: String
    public var sql: String
}

/// A name in a store's schema and, in words, what holds it ("the table of entity Item").
public struct SchemaName: Sendable, Hashable {
    public var name: String
    public var holder: String

    public init(name: String, holder: String) {
        self.name = name
        self.holder = holder
    }
}

/// Two or more things a store would hold under one name: SQLite keeps tables, indexes, views and
/// triggers in one namespace and compares names without regard to ASCII case, so `Item` beside
/// `ITEM`, an entity `_MODELCACHE` beside Core Data's `Z_MODELCACHE`, or an entity `_1TAGS`
/// beside a join table would land on one table — and a migration would copy into it, or drop it.
public struct NameClash: Sendable, Equatable, CustomStringConvertible {
    /// The name as the first holder spells it.
    public var name: String
    /// What holds it, each once, in the order met.
    public var holders: [String]

    public var description: String {
        "\(holders.joined(separator: " and ")) would both be named \(name) (SQLite names ignore case)"
    }
}

extension StoreLayout {
    /// Core Data's own tables, in every store it writes.
    public static let coreDataTableNames: [SchemaName] = LayoutSignature.bookkeepingTables.sorted().map {
        SchemaName(name: $0, holder: "Core Data's own table \($0)")
    }

    /// Every name this layout gives a table, index or trigger, with what holds it.
    public var schemaNames: [SchemaName] {
        let entityTables = model.entities.filter { $0.parent == nil }.map { root in
            SchemaName(name: CoreDataNames.table(forRoot: root.name), holder: "the table of entity \(root.name)")
        }
        let joinTableNames = joinTables.map { SchemaName(name: $0.table, holder: "the join table of \($0.entity).\($0.relationship)") }
        let indexNames = indexes.map { SchemaName(name: $0.name, holder: "the index \($0.name) on \($0.table)") }
        let triggerNames = triggers.map { SchemaName(name: $0.name, holder: "the trigger \($0.name) on \($0.table)") }
        return entityTables + joinTableNames + indexNames + triggerNames
    }

    /// The names this layout would give two things at once, among its own names, Core Data's own
    /// tables and `others` (a store's objects the layout does not make).
    public func nameClashes(besides others: [SchemaName] = []) -> [NameClash] {
        var clashes: [String: NameClash] = [:]
        var order: [String] = []
        for name in Self.coreDataTableNames + schemaNames + others {
            let key = String(name.name.map { $0.isASCII ? Character($0.uppercased()) : $0 })
            if var clash = clashes[key] {
                if !clash.holders.contains(name.holder) { clash.holders.append(name.holder) }
                clashes[key] = clash
            } else {
                clashes[key] = NameClash(name: name.name, holders: [name.holder])
                order.append(key)
            }
        }
        return order.compactMap { clashes[$0] }.filter { $0.holders.count > 1 }
    }

    /// Refuses a layout that gives two things one name (see `NameClash`), naming both.
    public func refuseNameClashes(besides others: [SchemaName] = [], store: String? = nil) throws {
        guard let clash = nameClashes(besides: others).first else { return }
        throw TernError(
            .badInput,
            "model version \(model.versionName): \(clash); one store cannot hold both: rename one of them", path: store)
    }
}
