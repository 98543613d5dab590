import Foundation
import Logging
import TernSQLite

/// Migrates one step, source store → new destination store, in Core Data's three stages per
/// entity mapping: create instances, recreate relationships, validate.
///
/// The destination connection attaches the source read-only as `src`. Everything a mapping says
/// in value expressions runs as SQL inside SQLite, batch by batch in source key order: each
/// batch's destination rows, association rows and checkpoint commit in one transaction of the
/// destination file. Foreign keys whose targets are already known are computed in the same
/// INSERT … SELECT (a join through the association table); the rest are set afterwards with
/// set-based SQL over the source's relationship pairs.
final class StepMigrator {
    let step: MigrationStep
    let options: MigrationOptions
    let logger: Logger
    let connection: Connection
    let sourceLayout: StoreLayout
    let destinationLayout: StoreLayout
    let associations: AssociationTables
    /// Next destination key per destination root table.
    var nextKeys: [String: Int64] = [:]
    /// Destination storage already written ("table.column" or a join table).
    private var writtenStorage: Set<String> = []
    /// Relationship mappings left for stage 2, per entity mapping number.
    private var pending: [Int: [String]] = [:]
    var completed: Set<Int> = []
    /// The policy of each entity mapping that runs in Swift, by mapping name.
    private let policies: [String: any EntityMigrationPolicy]
    var report = StepReport()

    init(step: MigrationStep, connection: Connection, sourceAttachURI: String, options: MigrationOptions, logger: Logger) throws {
        self.step = step
        self.options = options
        self.logger = logger
        self.connection = connection
        sourceLayout = StoreLayout(model: step.source)
        destinationLayout = StoreLayout(model: step.destination)
        var policies: [String: any EntityMigrationPolicy] = [:]
        for pass in step.passes {
            for entity in pass.entities where entity.mapping.sourceEntity != nil && entity.mapping.destinationEntity != nil {
                if let name = entity.mapping.policy {
                    guard let policy = options.registry.policy(named: name) else {
                        let known = options.registry.names
                        throw TernError(.badInput, "entity mapping \(entity.mapping.name) names the migration policy \(name), which is not registered (registered: \(known.isEmpty ? "none" : known.joined(separator: ", ")))")
                    }
                    policies[entity.mapping.name] = policy
                } else if options.registry.delegate?.observes(entity.mapping) == true {
                    policies[entity.mapping.name] = DefaultMigrationPolicy()
                }
            }
        }
        self.policies = policies
        associations = AssociationTables(step: step, source: sourceLayout, destination: destinationLayout, swiftMappings: Set(policies.keys))
        try SQLCompiler.prepare(connection)
        try connection.execute("ATTACH DATABASE \(quoteLiteral(sourceAttachURI)) AS src")
        for statement in associations.createStatements {
            try connection.execute(statement)
        }
        if !policies.isEmpty {
            // Links policies make, applied in stage 2; a target_mapping means `target` is a source
            // key to look up in that entity mapping's associations.
            try connection.execute("CREATE TABLE IF NOT EXISTS TERN_LINKS (owner INTEGER NOT NULL, owner_entity TEXT NOT NULL, relationship TEXT NOT NULL, target INTEGER NOT NULL, target_entity TEXT NOT NULL, target_mapping TEXT)")
            // Objects made with findOrCreate, by entity and identifying values.
            try connection.execute("CREATE TABLE IF NOT EXISTS TERN_UNIQUE (entity TEXT NOT NULL, identity TEXT NOT NULL, destination INTEGER NOT NULL, PRIMARY KEY (entity, identity))")
        }
    }

    /// Runs every pass: stage 1 for all entity mappings, then stage 2, then stage 3.
    func run() throws {
        let started = ContinuousClock.now
        for pass in step.passes.indices {
            let entries = associations.entries.filter { $0.pass == pass }
            for entry in entries {
                try policies[entry.mapping.mapping.name]?.beginEntityMapping(entry.mapping.mapping)
                if let policy = policies[entry.mapping.mapping.name] {
                    try createInstancesInSwift(entry, policy: policy)
                } else {
                    try createInstances(entry)
                }
                try policies[entry.mapping.mapping.name]?.endInstanceCreation(entry.mapping.mapping)
            }
            for entry in entries {
                try recreateRelationships(entry)
                if let policy = policies[entry.mapping.mapping.name] {
                    try createPolicyRelationships(entry, policy: policy)
                    try policy.endRelationshipCreation(entry.mapping.mapping)
                }
            }
            var violations: [ValidationViolation] = []
            for entry in entries where violations.count < options.violationLimit {
                violations += try validate(entry, limit: options.violationLimit - violations.count)
                if let policy = policies[entry.mapping.mapping.name] {
                    let context = ValidationContext(mapping: entry.mapping.mapping, connection: connection, layout: destinationLayout)
                    try policy.performCustomValidation(context)
                    violations += context.violations.prefix(options.violationLimit - violations.count)
                }
            }
            if !violations.isEmpty {
                throw MigrationFailure.validation(violations)
            }
            for entry in entries {
                try policies[entry.mapping.mapping.name]?.endEntityMapping(entry.mapping.mapping)
            }
        }
        try verify()
        try finish()
        report.duration = ContinuousClock.now - started
    }

    // MARK: Stage 1: create destination instances

    func sourceSelection(_ entry: AssociationTables.Entry, compiler: inout SQLCompiler) -> SQLFragment {
        let sourceEntity = sourceLayout.entities[entry.mapping.mapping.sourceEntity!]!
        var selection = SQLFragment("s.\"Z_ENT\" = \(sourceEntity.number)")
        if let filter = entry.mapping.filter {
            selection = selection + SQLFragment(" AND ") + compiler.sql(filter, alias: "s")
        }
        return selection
    }

    private func createInstances(_ entry: AssociationTables.Entry) throws {
        let mapping = entry.mapping.mapping
        let sourceEntity = sourceLayout.entities[mapping.sourceEntity!]!
        let destinationEntity = destinationLayout.entities[mapping.destinationEntity!]!
        var compiler = SQLCompiler(layout: sourceLayout, schema: "src")
        let selection = sourceSelection(entry, compiler: &compiler)

        // Columns: attributes, then foreign keys whose targets are known now.
        var columns: [String] = ["Z_PK", "Z_ENT", "Z_OPT"]
        var values: [SQLFragment] = [SQLFragment(entry.keepsKeys ? "s.\"Z_PK\"" : "a.destination"), SQLFragment("\(destinationEntity.number)"), SQLFragment("1")]
        for attribute in step.destination.allAttributes(of: mapping.destinationEntity!) where !attribute.isTransient {
            columns.append(destinationEntity.attributeColumns[attribute.name]!)
            if let compiled = entry.mapping.attributes[attribute.name] {
                values.append(compiler.sql(compiled, alias: "s"))
            } else {
                values.append(SQLFragment("?", [attribute.defaultValue ?? .null]))
            }
        }
        var deferred: [String] = []
        for relationship in step.destination.allRelationships(of: mapping.destinationEntity!) {
            guard let source = entry.mapping.relationships[relationship.name] else { continue }
            if let fused = fusedForeignKey(relationship, source: source, entry: entry, destination: destinationEntity) {
                columns += fused.columns
                values += fused.values
                writtenStorage.formUnion(fused.storage)
            } else {
                deferred.append(relationship.name)
            }
        }
        pending[entry.number] = deferred

        let table = quoteIdentifier(destinationEntity.table)
        let root = destinationEntity.table
        if nextKeys[root] == nil { nextKeys[root] = 1 }
        let from = entry.keepsKeys
            ? "FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s"
            : "FROM \(quoteIdentifier(entry.table)) a JOIN \"src\".\(quoteIdentifier(sourceEntity.table)) s ON s.\"Z_PK\" = a.source"
        let insert = SQLFragment("INSERT INTO \(table) (\(columns.map(quoteIdentifier).joined(separator: ", "))) SELECT ")
            + values.dropFirst().reduce(values[0]) { $0 + SQLFragment(", ") + $1 }
            + SQLFragment(" \(from) WHERE ") + selection + SQLFragment(" AND s.\"Z_PK\" > ? AND s.\"Z_PK\" <= ?")
        let insertStatement = try connection.prepare(insert.sql)
        let batchEnd = try connection.prepare((SQLFragment("SELECT max(k) FROM (SELECT s.\"Z_PK\" AS k FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s WHERE ") + selection
            + SQLFragment(" AND s.\"Z_PK\" > ? ORDER BY s.\"Z_PK\" LIMIT ?)")).sql)
        let associate = entry.keepsKeys ? nil : try connection.prepare((SQLFragment("INSERT INTO \(quoteIdentifier(entry.table)) (source, destination) SELECT s.\"Z_PK\", ? + row_number() OVER (ORDER BY s.\"Z_PK\") - 1 FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s WHERE ")
            + selection + SQLFragment(" AND s.\"Z_PK\" > ? AND s.\"Z_PK\" <= ? ORDER BY s.\"Z_PK\"")).sql)

        var last: Int64 = 0
        var selected = 0
        while true {
            try batchEnd.bind(selection.arguments + [SQLiteValue.integer(last), .integer(Int64(options.batchSize))])
            guard try batchEnd.step(), let end = batchEnd.row.value(at: 0).int64 else {
                batchEnd.reset()
                break
            }
            batchEnd.reset()
            try connection.transaction(.immediate) {
                if let associate {
                    try associate.bind([SQLiteValue.integer(nextKeys[root]!)] + selection.arguments + [.integer(last), .integer(end)])
                    try associate.run()
                    nextKeys[root]! += Int64(connection.changes)
                }
                try insertStatement.bind(values.flatMap(\.arguments) + selection.arguments + [.integer(last), .integer(end)])
                try insertStatement.run()
                selected += connection.changes
            }
            last = end
        }
        if entry.keepsKeys {
            nextKeys[root] = max(nextKeys[root]!, (try connection.scalar("SELECT max(Z_PK) FROM \(table)")?.int64 ?? 0) + 1)
        }
        if let index = associations.indexStatement(entry) {
            try connection.execute(index)
        }
        completed.insert(entry.number)
        report.mappings.append(StepReport.Mapping(name: mapping.name, pass: entry.pass, selected: selected, created: selected, keptKeys: entry.keepsKeys))
        logger.debug("created instances", metadata: ["mapping": "\(mapping.name)", "objects": "\(selected)", "keptKeys": "\(entry.keepsKeys)"])
    }

    /// A destination to-one relationship computed inside the INSERT, when every possible target
    /// is known: its targets keep their keys, or were created already.
    private func fusedForeignKey(_ relationship: Relationship, source: ValidatedMapping.RelationshipSource, entry: AssociationTables.Entry,
                                 destination: StoreLayout.EntityLayout) -> (columns: [String], values: [SQLFragment], storage: Set<String>)? {
        guard !relationship.isToMany, let column = destination.foreignKeyColumns[relationship.name] else { return nil }
        let (sourceRelationshipName, targets) = resolve(source, pass: entry.pass)
        guard let sourceRelationship = step.source.allRelationships(of: entry.mapping.mapping.sourceEntity!).first(where: { $0.name == sourceRelationshipName }),
              !sourceRelationship.isToMany,
              let sourceColumn = sourceLayout.entities[entry.mapping.mapping.sourceEntity!]!.foreignKeyColumns[sourceRelationshipName],
              !targets.isEmpty, targets.allSatisfy({ $0.keepsKeys || completed.contains($0.number) }) else { return nil }
        let key = "s.\(quoteIdentifier(sourceColumn))"
        var columns = [column]
        var values = [SQLFragment(associations.lookup(targets, key: key))]
        if let entityColumn = destination.entityColumns[relationship.name] {
            columns.append(entityColumn)
            values.append(SQLFragment(associations.entityNumber(targets, key: key)))
        }
        var written: Set<String> = ["\(destination.table).\(column)"]
        if let orderColumn = destination.orderColumns[relationship.name],
           let sourceOrder = sourceLayout.entities[entry.mapping.mapping.sourceEntity!]!.orderColumns[sourceRelationshipName] {
            // The inverse to-many is ordered and so was the source's: keep its order. Otherwise
            // the to-many side's mapping numbers them in stage 2.
            columns.append(orderColumn)
            values.append(SQLFragment("s.\(quoteIdentifier(sourceOrder))"))
            written.insert("\(destination.table).\(column)#order")
        }
        return (columns, values, written)
    }

    /// The source relationship a relationship mapping reads, and the entity mappings whose
    /// objects it links to.
    private func resolve(_ source: ValidatedMapping.RelationshipSource, pass: Int) -> (String, [AssociationTables.Entry]) {
        switch source {
        case .entityMapping(let name, let relationship):
            return (relationship, associations.entry(named: name, pass: pass).map { [$0] } ?? [])
        case .sourceRelationship(let relationship):
            return (relationship, [])
        }
    }

    private func targets(_ source: ValidatedMapping.RelationshipSource, sourceEntity: String, pass: Int) -> (String, [AssociationTables.Entry]) {
        switch source {
        case .entityMapping:
            return resolve(source, pass: pass)
        case .sourceRelationship(let name):
            let destination = step.source.allRelationships(of: sourceEntity).first { $0.name == name }!.destination
            return (name, associations.entries(coveringSourceEntity: destination, pass: pass))
        }
    }

    // MARK: Stage 2: recreate relationships

    private func recreateRelationships(_ entry: AssociationTables.Entry) throws {
        let mapping = entry.mapping.mapping
        for name in pending[entry.number] ?? [] {
            let relationship = step.destination.allRelationships(of: mapping.destinationEntity!).first { $0.name == name }!
            let (sourceRelationship, targets) = targets(entry.mapping.relationships[name]!, sourceEntity: mapping.sourceEntity!, pass: entry.pass)
            guard !targets.isEmpty, let storage = destinationLayout.storage(ofRelationship: name, of: mapping.destinationEntity!) else { continue }
            // Both sides of a relationship may be mapped and are stored in one place: write the
            // links once, and their order from the side that is ordered.
            let links: String
            var order: String?
            switch storage {
            case .foreignKey(let column):
                links = "\(destinationLayout.entities[mapping.destinationEntity!]!.table).\(column)"
            case .inverseForeignKey(let table, let column, let orderColumn):
                links = "\(table).\(column)"
                order = orderColumn.map { _ in links + "#order" }
            case .joinTable(let table, _, _, let orderColumn):
                links = table
                order = orderColumn.map { "\(table)#order\($0)" }
            }
            let linksWritten = writtenStorage.contains(links)
            guard !linksWritten || (order.map { !writtenStorage.contains($0) } ?? false) else { continue }
            writtenStorage.insert(links)
            if let order { writtenStorage.insert(order) }
            let linked = try writeRelationship(relationship, storage: storage, entry: entry, sourceRelationship: sourceRelationship, targets: targets, orderOnly: linksWritten)
            report.links["\(mapping.name).\(name)"] = linked
        }
    }

    /// The source's links of `relationship` as (owner source key, target source key, order):
    /// the same rows whatever way the source stores them.
    private func sourcePairs(_ relationship: String, of entity: String) -> String? {
        let owner = sourceLayout.entities[entity]!
        switch sourceLayout.storage(ofRelationship: relationship, of: entity) {
        case .foreignKey(let column):
            return "SELECT s.\"Z_PK\" AS owner, s.\(quoteIdentifier(column)) AS target, NULL AS ord FROM \"src\".\(quoteIdentifier(owner.table)) s WHERE s.\"Z_ENT\" = \(owner.number) AND s.\(quoteIdentifier(column)) IS NOT NULL"
        case .inverseForeignKey(let table, let column, let order):
            return "SELECT d.\(quoteIdentifier(column)) AS owner, d.\"Z_PK\" AS target, \(order.map { "d.\(quoteIdentifier($0))" } ?? "NULL") AS ord FROM \"src\".\(quoteIdentifier(table)) d WHERE d.\(quoteIdentifier(column)) IS NOT NULL"
        case .joinTable(let table, let own, let destination, let order):
            return "SELECT j.\(quoteIdentifier(own)) AS owner, j.\(quoteIdentifier(destination)) AS target, \(order.map { "j.\(quoteIdentifier($0))" } ?? "NULL") AS ord FROM \"src\".\(quoteIdentifier(table)) j"
        case nil:
            return nil
        }
    }

    private func writeRelationship(_ relationship: Relationship, storage: RelationshipStorage, entry: AssociationTables.Entry,
                                   sourceRelationship: String, targets: [AssociationTables.Entry], orderOnly: Bool = false) throws -> Int {
        guard let pairs = sourcePairs(sourceRelationship, of: entry.mapping.mapping.sourceEntity!) else { return 0 }
        // Destination pairs, with Core Data's sparse order keys per owner.
        let mapped = """
            SELECT owner, target, target_entity, 1024 * (row_number() OVER (PARTITION BY owner ORDER BY ord, source_target) + 1) AS ord FROM (
              SELECT \(associations.lookup(entry, key: "p.owner")) AS owner, \(associations.lookup(targets, key: "p.target")) AS target,
                     \(associations.entityNumber(targets, key: "p.target")) AS target_entity, p.ord AS ord, p.target AS source_target
              FROM (\(pairs)) p) WHERE owner IS NOT NULL AND target IS NOT NULL
            """
        return try apply(pairs: mapped, relationship: relationship, ownerEntity: entry.mapping.mapping.destinationEntity!, storage: storage, orderOnly: orderOnly)
    }

    /// Writes destination links `(owner, target, target_entity, ord)` into wherever the
    /// relationship is stored, in one transaction; returns how many there were. With
    /// `orderOnly`, the links exist already (the other side wrote them) and only their order is set.
    private func apply(pairs: String, relationship: Relationship, ownerEntity: String, storage: RelationshipStorage, orderOnly: Bool = false) throws -> Int {
        try connection.execute("DROP TABLE IF EXISTS temp.tern_pairs")
        try connection.execute("CREATE TEMP TABLE tern_pairs AS \(pairs)")
        defer { try? connection.execute("DROP TABLE IF EXISTS temp.tern_pairs") }
        let destinationEntity = destinationLayout.entities[ownerEntity]!
        try connection.transaction(.immediate) {
            switch storage {
            case .foreignKey(let column):
                var sets = ["\(quoteIdentifier(column)) = p.target"]
                if let entityColumn = destinationEntity.entityColumns[relationship.name] { sets.append("\(quoteIdentifier(entityColumn)) = p.target_entity") }
                try connection.execute("UPDATE \(quoteIdentifier(destinationEntity.table)) SET \(sets.joined(separator: ", ")) FROM (SELECT owner, target, target_entity FROM temp.tern_pairs WHERE ord = 2048) p WHERE \(quoteIdentifier(destinationEntity.table)).\"Z_PK\" = p.owner")
            case .inverseForeignKey(let table, let column, let order):
                let target = destinationLayout.entities.values.first { $0.table == table && $0.foreignKeyColumns.values.contains(column) }
                var sets = orderOnly ? [] : ["\(quoteIdentifier(column)) = p.owner"]
                if let order { sets.append("\(quoteIdentifier(order)) = p.ord") }
                if !orderOnly, let inverse = relationship.inverse, let entityColumn = target?.entityColumns[inverse] {
                    sets.append("\(quoteIdentifier(entityColumn)) = \(destinationEntity.number)")
                }
                guard !sets.isEmpty else { break }
                try connection.execute("UPDATE \(quoteIdentifier(table)) SET \(sets.joined(separator: ", ")) FROM temp.tern_pairs p WHERE \(quoteIdentifier(table)).\"Z_PK\" = p.target")
            case .joinTable(let table, let own, let destination, let order):
                let columns = [own, destination] + (order.map { [$0] } ?? [])
                let values = ["owner", "target"] + (order == nil ? [] : ["ord"])
                // `WHERE true` lets SQLite parse the upsert after INSERT … SELECT.
                let upsert = order.map { " ON CONFLICT DO UPDATE SET \(quoteIdentifier($0)) = excluded.\(quoteIdentifier($0))" } ?? " ON CONFLICT DO NOTHING"
                try connection.execute("INSERT INTO \(quoteIdentifier(table)) (\(columns.map(quoteIdentifier).joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM temp.tern_pairs WHERE true\(upsert)")
            }
        }
        return Int(try connection.scalar("SELECT count(*) FROM temp.tern_pairs")?.int64 ?? 0)
    }

    /// Applies the links policies made (`relate`), and calls `createRelationships` when a policy
    /// asks for it.
    private func createPolicyRelationships(_ entry: AssociationTables.Entry, policy: any EntityMigrationPolicy) throws {
        let mapping = entry.mapping.mapping
        if policy.createsRelationships {
            let context = RelationshipContext(mapping: mapping) { [connection, associations] name, key in
                guard let target = associations.entry(named: name, pass: entry.pass) else { return [] }
                let value = try connection.scalar("SELECT \(associations.lookup(target, key: "?"))", key)
                return value?.int64.map { [$0] } ?? []
            }
            let statement = try connection.prepare(entry.keepsKeys ? "SELECT 0, 0" : "SELECT source, destination FROM \(quoteIdentifier(entry.table)) ORDER BY source, destination")
            var rows = statement.rows()
            while let row = try rows.next() {
                try policy.createRelationships(forDestination: row.int64(at: 1), source: row.int64(at: 0), in: context)
            }
            try connection.transaction(.immediate) {
                let insert = try connection.prepare("INSERT INTO TERN_LINKS (owner, owner_entity, relationship, target, target_entity) VALUES (?, ?, ?, ?, ?)")
                for link in context.links {
                    try insert.bind([link.owner, link.ownerEntity, link.relationship, link.target, link.targetEntity])
                    try insert.run()
                }
            }
        }
        let groups = try rowsOf("SELECT DISTINCT owner_entity, relationship FROM TERN_LINKS ORDER BY 1, 2")
        for group in groups {
            guard let ownerEntity = group[0].text, let name = group[1].text,
                  let relationship = step.destination.allRelationships(of: ownerEntity).first(where: { $0.name == name }),
                  let storage = destinationLayout.storage(ofRelationship: name, of: ownerEntity) else {
                throw TernError(.badInput, "entity mapping \(mapping.name): a policy related objects through \(group[1].text ?? "?"), which \(group[0].text ?? "?") does not have")
            }
            let targetNumbers = destinationLayout.entities.values.map { "WHEN \(quoteLiteral($0.name)) THEN \($0.number)" }.joined(separator: " ")
            let resolved = associations.entries.filter { $0.pass <= entry.pass }.map {
                "WHEN \(quoteLiteral($0.mapping.mapping.name)) THEN \(associations.lookup($0, key: "l.target"))"
            }.joined(separator: " ")
            let pairs = """
                SELECT owner, target, CASE target_entity \(targetNumbers) END AS target_entity,
                       1024 * (row_number() OVER (PARTITION BY owner ORDER BY link) + 1) AS ord
                FROM (SELECT l.rowid AS link, l.owner AS owner, l.target_entity AS target_entity,
                             CASE WHEN l.target_mapping IS NULL THEN l.target ELSE (CASE l.target_mapping \(resolved) END) END AS target
                      FROM TERN_LINKS l WHERE l.owner_entity = \(quoteLiteral(ownerEntity)) AND l.relationship = \(quoteLiteral(name)))
                WHERE target IS NOT NULL
                """
            report.links["\(mapping.name): \(ownerEntity).\(name)", default: 0] += try apply(pairs: pairs, relationship: relationship, ownerEntity: ownerEntity, storage: storage)
        }
        try connection.execute("DELETE FROM TERN_LINKS")
    }

    private func rowsOf(_ sql: String) throws -> [[SQLiteValue]] {
        let statement = try connection.prepare(sql)
        var rows = statement.rows()
        var result: [[SQLiteValue]] = []
        while let row = try rows.next() { result.append(row.values) }
        return result
    }

    // MARK: Stage 3: validate

    /// The destination rows `entry` created, as an SQL condition on alias `d`.
    private func created(_ entry: AssociationTables.Entry) -> String {
        let destination = destinationLayout.entities[entry.mapping.mapping.destinationEntity!]!
        if entry.keepsKeys {
            let source = sourceLayout.entities[entry.mapping.mapping.sourceEntity!]!
            return "d.\"Z_ENT\" = \(destination.number) AND d.\"Z_PK\" IN (SELECT \"Z_PK\" FROM \"src\".\(quoteIdentifier(source.table)) WHERE \"Z_ENT\" = \(source.number))"
        }
        return "d.\"Z_PK\" IN (SELECT destination FROM \(quoteIdentifier(entry.table)))"
    }

    private func validate(_ entry: AssociationTables.Entry, limit: Int) throws -> [ValidationViolation] {
        let entityName = entry.mapping.mapping.destinationEntity!
        let destination = destinationLayout.entities[entityName]!
        var rules: [(condition: String, rule: String)] = []
        for attribute in step.destination.allAttributes(of: entityName) where !attribute.isTransient {
            let column = "d.\(quoteIdentifier(destination.attributeColumns[attribute.name]!))"
            if !attribute.isOptional { rules.append(("\(column) IS NULL", "\(attribute.name) is required")) }
            let v = attribute.validation
            if let low = v.minimumValue { rules.append(("\(column) < \(low)", "\(attribute.name) is below its minimum \(low)")) }
            if let high = v.maximumValue { rules.append(("\(column) > \(high)", "\(attribute.name) is above its maximum \(high)")) }
            if let low = v.minimumLength { rules.append(("length(\(column)) < \(low)", "\(attribute.name) is shorter than \(low)")) }
            if let high = v.maximumLength { rules.append(("length(\(column)) > \(high)", "\(attribute.name) is longer than \(high)")) }
            if let pattern = v.pattern { rules.append(("tern_matches(\(column), \(quoteLiteral(pattern)), 0) = 0", "\(attribute.name) does not match \(pattern)")) }
        }
        for relationship in step.destination.allRelationships(of: entityName) where !relationship.isTransient {
            switch destinationLayout.storage(ofRelationship: relationship.name, of: entityName) {
            case .foreignKey(let column):
                if !relationship.isOptional { rules.append(("d.\(quoteIdentifier(column)) IS NULL", "\(relationship.name) is required")) }
            case .inverseForeignKey(let table, let column, _):
                let count = "(SELECT count(*) FROM \(quoteIdentifier(table)) x WHERE x.\(quoteIdentifier(column)) = d.\"Z_PK\")"
                if relationship.minCount > 0 { rules.append(("\(count) < \(relationship.minCount)", "\(relationship.name) has fewer than \(relationship.minCount)")) }
                if relationship.maxCount > 0 { rules.append(("\(count) > \(relationship.maxCount)", "\(relationship.name) has more than \(relationship.maxCount)")) }
            case .joinTable(let table, let own, _, _):
                let count = "(SELECT count(*) FROM \(quoteIdentifier(table)) x WHERE x.\(quoteIdentifier(own)) = d.\"Z_PK\")"
                if relationship.minCount > 0 { rules.append(("\(count) < \(relationship.minCount)", "\(relationship.name) has fewer than \(relationship.minCount)")) }
                if relationship.maxCount > 0 { rules.append(("\(count) > \(relationship.maxCount)", "\(relationship.name) has more than \(relationship.maxCount)")) }
            case nil:
                break
            }
        }
        var violations: [ValidationViolation] = []
        for (condition, rule) in rules where violations.count < limit {
            let statement = try connection.prepare("SELECT d.\"Z_PK\" FROM \(quoteIdentifier(destination.table)) d WHERE \(created(entry)) AND \(condition) ORDER BY d.\"Z_PK\" LIMIT \(limit - violations.count)")
            var rows = statement.rows()
            while let row = try rows.next() {
                violations.append(ValidationViolation(entity: entityName, key: row.int64(at: 0), rule: rule))
            }
        }
        return violations
    }

    // MARK: Verification

    /// Counts and copied values compared between source and destination.
    private func verify() throws {
        for entry in associations.entries {
            let mapping = entry.mapping.mapping
            var compiler = SQLCompiler(layout: sourceLayout, schema: "src")
            let selection = sourceSelection(entry, compiler: &compiler)
            let sourceTable = sourceLayout.entities[mapping.sourceEntity!]!.table
            let count = try connection.prepare("SELECT count(*) FROM \"src\".\(quoteIdentifier(sourceTable)) s WHERE \(selection.sql)")
            try count.bind(selection.arguments)
            _ = try count.step()
            let selected = Int(count.row.int64(at: 0))
            let destination = destinationLayout.entities[mapping.destinationEntity!]!
            let created = Int(try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(destination.table)) d WHERE \(self.created(entry))")?.int64 ?? 0)
            if policies[mapping.name] != nil {
                // A policy may make any number of objects per source object and set any value:
                // what must hold is that every association points at an object that exists.
                let dangling = try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(entry.table)) a WHERE NOT EXISTS (SELECT 1 FROM \(quoteIdentifier(destination.table)) d WHERE d.\"Z_PK\" = a.destination)")?.int64 ?? 0
                guard dangling == 0 else {
                    throw MigrationFailure.verification("\(mapping.name): \(dangling) associations point at objects that were not written")
                }
                continue
            }
            guard selected == created else {
                throw MigrationFailure.verification("\(mapping.name): \(selected) source objects selected, \(created) destination objects created")
            }
            if let index = report.mappings.firstIndex(where: { $0.name == mapping.name && $0.pass == entry.pass }) {
                report.mappings[index].selected = selected
            }
            // Attributes copied as they are must hold the same values.
            for (name, compiled) in entry.mapping.attributes {
                guard case .input(0) = compiled.expression, compiled.inputs.count == 1, compiled.inputs[0].relationships.isEmpty,
                      case .attribute(let sourceName) = compiled.inputs[0].final,
                      let sourceColumn = sourceLayout.entities[mapping.sourceEntity!]!.attributeColumns[sourceName],
                      let destinationColumn = destination.attributeColumns[name] else { continue }
                let join = entry.keepsKeys ? "d.\"Z_PK\" = s.\"Z_PK\"" : "d.\"Z_PK\" = (SELECT a.destination FROM \(quoteIdentifier(entry.table)) a WHERE a.source = s.\"Z_PK\")"
                let statement = try connection.prepare("SELECT count(*) FROM \"src\".\(quoteIdentifier(sourceTable)) s JOIN \(quoteIdentifier(destination.table)) d ON \(join) WHERE \(selection.sql) AND d.\(quoteIdentifier(destinationColumn)) IS NOT s.\(quoteIdentifier(sourceColumn))")
                try statement.bind(selection.arguments)
                _ = try statement.step()
                let differing = statement.row.int64(at: 0)
                guard differing == 0 else {
                    throw MigrationFailure.verification("\(mapping.name).\(name): \(differing) objects differ from the source's \(sourceName)")
                }
            }
        }
        report.verified.append("every entity mapping without a policy created one destination object per selected source object")
        report.verified.append("every attribute copied as it is equals its source value")
        if !policies.isEmpty {
            report.verified.append("every association a policy made points at an object that was written")
        }
    }

    // MARK: Finish

    private func finish() throws {
        try connection.transaction(.immediate) {
            for table in Set(destinationLayout.entities.values.map(\.table)) {
                try connection.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT coalesce(max(Z_PK), 0) FROM \(quoteIdentifier(table))) WHERE Z_SUPER = 0 AND ('Z' || upper(Z_NAME)) = \(quoteLiteral(table))")
            }
            if !options.keepAssociations {
                for entry in associations.entries where !entry.keepsKeys {
                    try connection.execute("DROP TABLE IF EXISTS \(quoteIdentifier(entry.table))")
                }
            }
            try connection.execute("DROP TABLE IF EXISTS TERN_LINKS")
            try connection.execute("DROP TABLE IF EXISTS TERN_UNIQUE")
            for statement in destinationLayout.indexStatements {
                try connection.execute(statement.replacingOccurrences(of: "CREATE INDEX", with: "CREATE INDEX IF NOT EXISTS")
                    .replacingOccurrences(of: "CREATE UNIQUE INDEX", with: "CREATE UNIQUE INDEX IF NOT EXISTS"))
            }
        }
        try connection.execute("DETACH DATABASE src")
    }
}

/// Why a migration stopped.
public enum MigrationFailure: Error, CustomStringConvertible {
    /// Destination objects break the destination model's rules.
    case validation([ValidationViolation])
    /// The migrated store does not match the source as the mapping says it should.
    case verification(String)

    public var description: String {
        switch self {
        case .validation(let violations):
            "validation failed:\n" + violations.map { "  - \($0)" }.joined(separator: "\n")
        case .verification(let message):
            "verification failed: \(message)"
        }
    }
}
