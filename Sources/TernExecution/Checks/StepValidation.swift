import TernSQLite
import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability

/// Stage 3: the destination model's rules — required values, ranges, lengths, patterns, to-many
/// counts — checked in SQL over the objects one entity mapping created.
struct StepValidation {
    let inputs: StepInputs
    /// The entity mappings that wrote objects in Swift, by root table.
    let swiftWriters: [String: Set<Int>]
    /// Catching up a live store: only the objects whose keys this SQL lists are checked (the
    /// others were, in an earlier round or pass).
    var onlyKeys: String?
    /// Whether the destination's indexes are being built beside, asked as the scans start: they
    /// then take only the cores the build leaves (`StepVerification.besideIndexBuild`).
    var besideIndexBuild: () -> Bool = { false }

    /// Rules checked by one scan: each is a result column and a term of its `OR`, within
    /// SQLite's default limits of 2,000 columns and an expression depth of 1,000.
    static let rulesPerScan = 500

    private var step: MigrationStep { inputs.step }
    private var connection: Connection { inputs.connection }
    private var destinationLayout: StoreLayout { inputs.destinationLayout }

    /// What an integer or Boolean column must hold to be a value of its attribute's type: the
    /// column's INTEGER affinity has already made whole REALs and numeric text integers, so
    /// anything else — a fraction, text, a number out of the type's range — is a value an app
    /// would read truncated (an Integer 16 of 70000, a Boolean of 2): a violation, never stored.
    static func typeRule(_ type: AttributeType, _ column: String) -> (condition: String, rule: String)? {
        let notInteger = "\(column) IS NOT NULL AND (typeof(\(column)) <> 'integer'"
        switch type {
        case .integer16: return ("\(notInteger) OR \(column) NOT BETWEEN -32768 AND 32767)", "does not fit Integer 16 (a whole number from -32768 to 32767)")
        case .integer32:
            return (
                "\(notInteger) OR \(column) NOT BETWEEN -2147483648 AND 2147483647)", "does not fit Integer 32 (a whole number from -2147483648 to 2147483647)"
            )
        case .integer64: return ("\(notInteger))", "does not fit Integer 64 (a whole number)")
        case .boolean: return ("\(notInteger) OR \(column) NOT IN (0, 1))", "does not fit Boolean (0 or 1)")
        default: return nil
        }
    }

    /// Per entry, up to `limit` violations among the objects it created: the objects with the
    /// lowest keys first, each with every rule it breaks.
    ///
    /// Most stores break no rule. So first the objects breaking any rule are counted, every
    /// entry's table cut into key ranges and all ranges run on the workers at once; only an
    /// entry whose objects break one is read again, in key order, to name them.
    func violations(of entries: [PlannedMapping], limit: Int) throws -> [[ValidationViolation]] {
        var scans: [(entry: Int, query: SQLFragment)] = []
        let checks = entries.map { (rules(of: $0), objects(of: $0)) }
        for (index, (rules, objects)) in checks.enumerated() {
            let table = quoteIdentifier(destinationLayout.entities[entries[index].destinationEntity]!.table)
            // Only some objects: one scan finds them by key.
            let ranges =
                onlyKeys != nil
                ? ["1"]
                : try RowidRanges.conditions(
                    on: "d.\"Z_PK\"", of: table, in: connection, rowidsPerScan: inputs.options.keysPerScan ?? RowidRanges.rowidsPerScan)
            for group in Self.scans(of: rules) {
                let broken = group.map { "coalesce((\($0.condition)), 0)" }.joined(separator: " OR ")
                for range in ranges {
                    scans.append((index, SQLFragment("SELECT count(*), NULL FROM \(table) d WHERE (\(objects)) AND (\(broken)) AND (\(range))")))
                }
            }
        }
        let counts = try ParallelScans.run(
            scans.map(\.query), store: connection.path, attach: inputs.sourceAttachURI, workers: inputs.options.workers,
            externalData: inputs.externalData, yieldingCores: besideIndexBuild(), preparing: { try SQLCompiler.prepare($0, externalData: $1) },
            shouldStop: inputs.options.shouldStop)
        let breaking = Set(zip(scans, counts).filter { $1.count > 0 }.map(\.0.entry))
        return try checks.indices.map { index in
            breaking.contains(index) ? try named(entries[index], rules: checks[index].0, objects: checks[index].1, limit: limit) : []
        }
    }

    /// The rules of one scan: each is a result column and a term of its `OR`.
    private static func scans(of rules: [(condition: String, rule: String)]) -> [ArraySlice<(condition: String, rule: String)>] {
        stride(from: 0, to: rules.count, by: rulesPerScan).map { rules[$0..<min($0 + rulesPerScan, rules.count)] }
    }

    /// The rules of `entry` as counts a scan of its objects' table adds, one per group of rules
    /// (`count(*) FILTER (WHERE …)` of the objects breaking any rule of the group): what
    /// verification's scan of the same rows counts along (`StepVerification.rulesCountedAlong`).
    func countedAlong(_ entry: PlannedMapping) -> [String] {
        let objects = objects(of: entry)
        return Self.scans(of: rules(of: entry)).map { group in
            "count(*) FILTER (WHERE (\(objects)) AND (\(group.map { "coalesce((\($0.condition)), 0)" }.joined(separator: " OR "))))"
        }
    }

    /// The objects `entry` created, as a condition on `d`. The sole writer of its table with the
    /// source's keys created exactly its entity's rows there: no lookup into the source's keys
    /// (a 3,000,000-object entity: 1.5 s → 0.65 s).
    private func objects(of entry: PlannedMapping) -> String {
        guard let onlyKeys else { return allObjects(of: entry) }
        return "(\(allObjects(of: entry))) AND d.\"Z_PK\" IN (\(onlyKeys))"
    }

    private func allObjects(of entry: PlannedMapping) -> String {
        guard inputs.associations.keepsKeys(entry), inputs.soleWriter(entry, swiftWriters: swiftWriters) else { return inputs.created(entry) }
        return "d.\"Z_ENT\" = \(destinationLayout.entities[entry.destinationEntity]!.number)"
    }

    /// The destination model's rules for the objects of `entry`: a condition each object must
    /// not meet, and the rule in words.
    private func rules(of entry: PlannedMapping) -> [(condition: String, rule: String)] {
        let entityName = entry.destinationEntity
        let destination = destinationLayout.entities[entityName]!
        var rules: [(condition: String, rule: String)] = []
        for attribute in step.destination.allAttributes(of: entityName) where !attribute.isTransient {
            let column = "d.\(quoteIdentifier(destination.attributeColumns[attribute.name]!))"
            if !attribute.isOptional { rules.append(("\(column) IS NULL", "\(attribute.name) is required")) }
            if let fits = Self.typeRule(attribute.type, column) { rules.append((fits.condition, "\(attribute.name) \(fits.rule)")) }
            let v = attribute.validation
            if let low = v.minimumValue { rules.append(("\(column) < \(low)", "\(attribute.name) is below its minimum \(low)")) }
            if let high = v.maximumValue { rules.append(("\(column) > \(high)", "\(attribute.name) is above its maximum \(high)")) }
            if attribute.type == .string {
                // Text's length as NSString counts it (UTF-16 units), which is what Core Data
                // validates. SQLite's `length` (characters, up to a NUL) is never above it, and
                // the bytes never below it: they settle most rows, and only the others are counted.
                // CASE, not AND: a rule is a value here, and SQLite computes both sides of an AND.
                let units = "\(SQLCompiler.lengthFunction.name)(\(column))"
                if let low = v.minimumLength {
                    rules.append(("CASE WHEN length(\(column)) < \(low) THEN \(units) < \(low) ELSE 0 END", "\(attribute.name) is shorter than \(low)"))
                }
                if let high = v.maximumLength {
                    rules.append(
                        ("CASE WHEN length(CAST(\(column) AS BLOB)) > \(high) THEN \(units) > \(high) ELSE 0 END", "\(attribute.name) is longer than \(high)"))
                }
            } else {
                // Binary data's length is its bytes', wherever they are stored.
                let bytes = attribute.allowsExternalStorage ? "length(tern_external_bytes(\(column)))" : "length(\(column))"
                if let low = v.minimumLength { rules.append(("\(bytes) < \(low)", "\(attribute.name) is shorter than \(low)")) }
                if let high = v.maximumLength { rules.append(("\(bytes) > \(high)", "\(attribute.name) is longer than \(high)")) }
            }
            if let pattern = v.pattern {
                rules.append(("tern_matches(\(column), \(quoteLiteral(pattern)), 0) = 0", "\(attribute.name) does not match \(pattern)"))
            }
        }
        for relationship in step.destination.allRelationships(of: entityName) where !relationship.isTransient {
            switch destinationLayout.storage(ofRelationship: relationship.name, of: entityName) {
            case .foreignKey(let column):
                if !relationship.isOptional { rules.append(("d.\(quoteIdentifier(column)) IS NULL", "\(relationship.name) is required")) }
            case .inverseForeignKey(let table, let column, _), .hiddenKey(let table, let column, _):
                let count = "(SELECT count(*) FROM \(quoteIdentifier(table)) x WHERE x.\(quoteIdentifier(column)) = d.\"Z_PK\")"
                if relationship.minCount > 0 {
                    rules.append(("\(count) < \(relationship.minCount)", "\(relationship.name) has fewer than \(relationship.minCount)"))
                }
                if relationship.maxCount > 0 {
                    rules.append(("\(count) > \(relationship.maxCount)", "\(relationship.name) has more than \(relationship.maxCount)"))
                }
            case .joinTable(let table, let own, _, _):
                let count = "(SELECT count(*) FROM \(quoteIdentifier(table)) x WHERE x.\(quoteIdentifier(own)) = d.\"Z_PK\")"
                if relationship.minCount > 0 {
                    rules.append(("\(count) < \(relationship.minCount)", "\(relationship.name) has fewer than \(relationship.minCount)"))
                }
                if relationship.maxCount > 0 {
                    rules.append(("\(count) > \(relationship.maxCount)", "\(relationship.name) has more than \(relationship.maxCount)"))
                }
            case nil:
                break
            }
        }
        return rules
    }

    /// Up to `limit` objects of `entry` that break `rules`, lowest keys first, with each rule
    /// they break. One scan for every rule at once, not one per rule (a 3,000,000-object entity:
    /// 0.73 s → 0.24 s): the objects that break any rule, each with a flag per rule.
    private func named(_ entry: PlannedMapping, rules: [(condition: String, rule: String)], objects: String, limit: Int) throws -> [ValidationViolation] {
        let entityName = entry.destinationEntity
        let destination = destinationLayout.entities[entityName]!
        var violations: [ValidationViolation] = []
        for group in Self.scans(of: rules) where violations.count < limit {
            let flags = group.map { "coalesce((\($0.condition)), 0)" }.joined(separator: ", ")
            let broken = group.map { "coalesce((\($0.condition)), 0)" }.joined(separator: " OR ")
            let statement = try connection.prepare(
                "SELECT d.\"Z_PK\", \(flags) FROM \(quoteIdentifier(destination.table)) d WHERE (\(objects)) AND (\(broken)) ORDER BY d.\"Z_PK\" LIMIT \(limit - violations.count)"
            )
            var rows = statement.rows()
            while let row = try rows.next(), violations.count < limit {
                for (index, rule) in group.enumerated() where row.int64(at: index + 1) != 0 && violations.count < limit {
                    violations.append(ValidationViolation(entity: entityName, key: row.int64(at: 0), rule: rule.rule))
                }
            }
        }
        return violations
    }
}
