import TernSQLite
import TernModel

/// Rows Core Data never writes, which a migration would otherwise drop or change without a word:
/// keys of 0 or below (batches start above 0), keys so large no new key fits after them, rows of
/// no entity or of an entity the table does not hold, references to objects that do not exist,
/// and keys that repeat. Tern refuses to migrate a store that has any, before writing anything,
/// the same way whichever path a mapping takes; `tern check` lists them too.
public struct StoreAnomaly: Sendable, Equatable, CustomStringConvertible {
    /// The table, or "table.column" for references.
    public var place: String
    /// What is wrong with the rows, in words ("with a Z_PK of 0 or below").
    public var problem: String
    /// How many rows have the problem; at least 1.
    public var count: Int64
    /// One key at fault (the smallest), to look at.
    public var example: Int64?
    /// What Core Data reads all the same, and so a migration carries (a value as it is) or
    /// drops as Core Data drops it (a link to no object): reported, refused only when asked to
    /// be strict. Other anomalies would be lost or changed silently, and are always refused.
    public var isTolerated = false

    /// An anomaly found `count` times at `place`.
    public init(place: String, problem: String, count: Int64, example: Int64?, isTolerated: Bool = false) {
        self.place = place
        self.problem = problem
        self.count = count
        self.example = example
        self.isTolerated = isTolerated
    }

    public var description: String {
        "\(place): \(count) \(count == 1 ? "row" : "rows") \(problem)\(example.map { " (first: Z_PK \($0))" } ?? "")"
    }
}

/// Finds `StoreAnomaly`s in a store: the scan a migration runs before writing anything, stopping if it
/// finds one.
public enum StoreAnomalies {
    /// Keys above this leave no room for the keys a migration gives new objects.
    public static let largestKey: Int64 = 1 << 62

    /// Where, what is wrong, the query giving a count and the first key at fault, where that
    /// query is slow a cheaper count (`detect`) run first, and whether Core Data reads past it
    /// (`StoreAnomaly.isTolerated`).
    private typealias Check = (place: String, problem: String, query: String, detect: String?, tolerated: Bool)

    /// Scans the store at `path` (a path or an SQLite URI) of `model`'s layout (by Core Data's
    /// rules, or an earlier Tern's), on up to `workers` threads.
    ///
    /// `rowsFlagged` is given when a scan of every row has already counted the rows meeting
    /// each table's `rowConditions` (the start checks' digest does, so each row is read once):
    /// the tables where some did, whose rows are then counted by kind. Nil scans every row here.
    public static func find(
        in path: String, model: ObjectModel, rules: StoreLayout.Rules = .coreData, workers: Int = 2, rowsFlagged: Set<String>? = nil,
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) throws -> [StoreAnomaly] {
        try find(
            in: path, model: model, rules: rules, workers: workers, rowidsPerScan: RowidRanges.rowidsPerScan, rowsFlagged: rowsFlagged,
            shouldStop: shouldStop)
    }

    /// Each root table's checks of every row (in words, and as a condition on a row).
    /// A condition's `tolerated`: Core Data reads such rows all the same (text where bytes belong).
    private static func rowChecks(of model: ObjectModel, _ layout: StoreLayout) -> [(
        table: String, conditions: [(problem: String, condition: String, tolerated: Bool)]
    )] {
        model.entities.filter { $0.parent == nil }.map { root in
            let numbers = model.descendants(of: root.name).map { String(layout.entities[$0.name]!.number) }.joined(separator: ", ")
            var conditions = [("whose Z_ENT is not one of the table's entities (\(numbers))", "Z_ENT IS NULL OR Z_ENT NOT IN (\(numbers))", false)]
            /// Rows where a column of a `type` attribute holds a value of storage class `foreign`.
            func holding(_ foreign: String, in type: AttributeType, _ what: String, tolerated: Bool) {
                let columns = model.descendants(of: root.name).flatMap { entity in
                    entity.attributes.filter { $0.type == type && !$0.isTransient }.map { layout.entities[entity.name]!.attributeColumns[$0.name]! }
                }
                guard !columns.isEmpty else { return }
                conditions.append(
                    (
                        "holding \(what) (\(columns.joined(separator: ", ")))",
                        columns.map { "typeof(\(quoteIdentifier($0))) = '\(foreign)'" }.joined(separator: " OR "), tolerated
                    ))
            }
            // A string attribute's column holds text (numbers become text as they are stored):
            // binary data there is not Core Data's, and no text function can read it.
            holding("blob", in: .string, "binary data in a string attribute", tolerated: false)
            // And a binary attribute's column holds blobs; text there Core Data reads as its
            // bytes, and a migration carries it so.
            holding("text", in: .binary, "text in a binary attribute", tolerated: true)
            return (layout.entities[root.name]!.table, conditions)
        }
    }

    /// Per root table, the condition a row Core Data never writes meets (any of its checks of
    /// every row): for a scan that reads every row anyway to count them (`StoreDigest`).
    public static func rowConditions(of model: ObjectModel, rules: StoreLayout.Rules = .coreData) -> [String: String] {
        Dictionary(
            rowChecks(of: model, StoreLayout(model: model, rules: rules)).map { table, conditions in
                (table, anyOf(conditions))
            }, uniquingKeysWith: { first, _ in first })
    }

    /// The condition a row meets when it meets any of `conditions`.
    private static func anyOf(_ conditions: [(problem: String, condition: String, tolerated: Bool)]) -> String {
        conditions.map { "(\($0.condition))" }.joined(separator: " OR ")
    }

    static func find(
        in path: String, model: ObjectModel, rules: StoreLayout.Rules = .coreData, workers: Int, rowidsPerScan: Int64, rowsFlagged: Set<String>? = nil,
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) throws -> [StoreAnomaly] {
        var checks: [Check] = []
        /// A table's checks of every row, and the scans (one per rowid range) that find any.
        var rowScans: [(table: String, checks: [Check], scans: [String])] = []
        var flagged: [Check] = []
        let connection = try Connection(path: path, configuration: .init(mode: .readOnly))
        let columns = Dictionary(try connection.tableColumns().map { ($0.table, $0.columns) }, uniquingKeysWith: { first, _ in first })
        // Join tables are read under the names the store gives them.
        let flipped = StoreLayout.joinTablesNamedByInverse(of: model, rules: rules, in: Set(columns.keys))
        let layout = StoreLayout(model: model, rules: rules, namedByInverse: flipped)
        for (table, conditions) in rowChecks(of: model, layout) {
            let quoted = quoteIdentifier(table)
            checks.append((table, "with a Z_PK of 0 or below", "SELECT count(*), min(Z_PK) FROM \(quoted) WHERE Z_PK <= 0", nil, false))
            checks.append((table, "with a Z_PK above \(largestKey)", "SELECT count(*), min(Z_PK) FROM \(quoted) WHERE Z_PK > \(largestKey)", nil, false))
            // Checks of every row, as one scan of the table cut into rowid ranges (the workers
            // share a large table); each is counted on its own only if that scan finds anything.
            let counted = conditions.map { problem, condition, tolerated in
                (table, problem, "SELECT count(*), min(Z_PK) FROM \(quoted) WHERE \(condition)", nil as String?, tolerated)
            }
            if let rowsFlagged {
                if rowsFlagged.contains(table) { flagged += counted }
            } else {
                let any = anyOf(conditions)
                let ranges = try RowidRanges.conditions(of: table, columns: columns[table] ?? [], in: connection, rowidsPerScan: rowidsPerScan)
                rowScans.append((table, counted, ranges.map { "SELECT count(*), NULL FROM \(quoted) WHERE (\($0)) AND (\(any))" }))
            }
            if try !hasIntegerPrimaryKey(table, connection) {
                checks.append(
                    (
                        table, "sharing their Z_PK with another row",
                        "SELECT count(*), min(Z_PK) FROM \(quoted) WHERE Z_PK IN (SELECT Z_PK FROM \(quoted) GROUP BY Z_PK HAVING count(*) > 1)", nil, false
                    ))
            }
        }
        // References: every to-one key, and both columns of every join table.
        var seen: Set<String> = []
        for entity in model.entities {
            let own = layout.entities[entity.name]!
            for relationship in entity.relationships where !relationship.isToMany && !relationship.isTransient {
                guard let column = own.foreignKeyColumns[relationship.name], seen.insert("\(own.table).\(column)").inserted else { continue }
                let holders = model.descendants(of: entity.name).map { String(layout.entities[$0.name]!.number) }.joined(separator: ", ")
                let key = quoteIdentifier(column)
                checks.append(
                    (
                        "\(own.table).\(column)", "referring to a \(relationship.destination) that does not exist",
                        "SELECT count(*), min(s.Z_PK) FROM \(quoteIdentifier(own.table)) s WHERE s.Z_ENT IN (\(holders)) AND s.\(key) IS NOT NULL AND NOT \(exists(relationship.destination, key: "s.\(key)", layout))",
                        distinctMissing(key, from: own.table, entity: relationship.destination, layout), false
                    ))
            }
        }
        // And every hidden key of a to-many with no inverse.
        for entity in model.entities {
            let table = layout.entities[entity.name]!.table
            for hidden in layout.entities[entity.name]!.hiddenKeys where seen.insert("\(table).\(hidden.column)").inserted {
                let key = quoteIdentifier(hidden.column)
                checks.append(
                    (
                        "\(table).\(hidden.column)", "referring to a \(hidden.owner) that does not exist",
                        "SELECT count(*), min(s.Z_PK) FROM \(quoteIdentifier(table)) s WHERE s.\(key) IS NOT NULL AND NOT \(exists(hidden.owner, key: "s.\(key)", layout))",
                        distinctMissing(key, from: table, entity: hidden.owner, layout), false
                    ))
            }
        }
        for join in layout.joinTables {
            // A link with a missing end links nothing: Core Data never writes one.
            let (owner, destination) = (quoteIdentifier(join.ownerColumn), quoteIdentifier(join.destinationColumn))
            checks.append(
                (
                    join.table, "with a NULL key (\(join.ownerColumn) or \(join.destinationColumn))",
                    "SELECT count(*), NULL FROM \(quoteIdentifier(join.table)) WHERE \(owner) IS NULL OR \(destination) IS NULL", nil, false
                ))
            let target = model.allRelationships(of: join.entity).first { $0.name == join.relationship }!.destination
            for (column, entity) in [(join.ownerColumn, join.entity), (join.destinationColumn, target)] {
                checks.append(
                    (
                        "\(join.table).\(column)", "referring to a \(entity) that does not exist",
                        "SELECT count(*), min(j.\(quoteIdentifier(column))) FROM \(quoteIdentifier(join.table)) j WHERE NOT \(exists(entity, key: "j.\(quoteIdentifier(column))", layout))",
                        // A join row naming no object links nothing: Core Data never sees it.
                        distinctMissing(quoteIdentifier(column), from: join.table, entity: entity, layout), true
                    ))
            }
        }
        let rowScanQueries = rowScans.flatMap(\.scans)
        let detected = try ParallelScans.run(
            (checks.map { $0.detect ?? $0.query } + rowScanQueries).map { SQLFragment($0) }, store: path, workers: workers, shouldStop: shouldStop)
        var found = zip(checks, detected).filter { $1.count > 0 }.map(\.0) + flagged
        var rowResults = detected.dropFirst(checks.count)
        for table in rowScans {
            let scanned = rowResults.prefix(table.scans.count)
            rowResults = rowResults.dropFirst(table.scans.count)
            if scanned.contains(where: { $0.count > 0 }) { found += table.checks }
        }
        let results = try ParallelScans.run(found.map { SQLFragment($0.query) }, store: path, workers: workers, shouldStop: shouldStop)
        return zip(found, results).compactMap { check, result in
            result.count == 0
                ? nil
                : StoreAnomaly(place: check.place, problem: check.problem, count: result.count, example: result.value, isTolerated: check.tolerated)
        }
    }

    /// Counts the distinct keys in `column` of `table` that name no object of `entity`: a walk
    /// down the column's index, probing the target in key order — far cheaper than probing once
    /// per row in row order.
    private static func distinctMissing(_ column: String, from table: String, entity: String, _ layout: StoreLayout) -> String {
        "SELECT count(*), NULL FROM (SELECT DISTINCT \(column) AS k FROM \(quoteIdentifier(table)) WHERE \(column) IS NOT NULL) WHERE NOT \(exists(entity, key: "k", layout))"
    }

    private static func exists(_ entity: String, key: String, _ layout: StoreLayout) -> String {
        let numbers = layout.model.descendants(of: entity).map { String(layout.entities[$0.name]!.number) }.joined(separator: ", ")
        return "EXISTS (SELECT 1 FROM \(quoteIdentifier(layout.entities[entity]!.table)) t WHERE t.Z_PK = \(key) AND t.Z_ENT IN (\(numbers)))"
    }

    private static func hasIntegerPrimaryKey(_ table: String, _ connection: Connection) throws -> Bool {
        let statement = try connection.prepare("SELECT type, pk FROM pragma_table_info(?) WHERE name = 'Z_PK'")
        try statement.bind([SQLiteValue.text(table)])
        guard try statement.step() else { return false }
        return statement.row.text(at: 0)?.uppercased() == "INTEGER" && statement.row.int64(at: 1) == 1
    }
}
