import TernSQLite

extension StepMigrator {
    // MARK: Verification by content

    /// Proves the step's result by content before anything may be swapped, per entity mapping:
    /// one destination object per selected source object, every value equal to its value
    /// expression evaluated again over the source (or its default), and every relationship
    /// mapping's links equal to the source's pairs carried through the association tables, in
    /// order where ordered. A policy's own values cannot be re-derived: for those mappings the
    /// associations must point at written objects, and what was not proven is said.
    ///
    /// Each comparison is two sequential scans, one per side, reduced to a count and an
    /// order-independent checksum (`tern_checksum`); only when they differ do joins find the first
    /// difference to name.
    func verify() throws {
        try options.beforeVerification?(connection)
        let policyLinked = policyLinkedRelationships()
        func touchedByPolicy(_ entry: AssociationTables.Entry, _ relationship: Relationship) -> Bool {
            policyLinked.contains("\(entry.mapping.mapping.destinationEntity!).\(relationship.name)")
                || relationship.inverse.map { policyLinked.contains("\(relationship.destination).\($0)") } == true
        }
        var proven: [Int: [String]] = [:]
        var provenRelationships: [Int: [String]] = [:]
        // Link sets already compared: a relationship and its mapped inverse are one set of links.
        var comparedLinks: Set<String> = []
        for entry in associations.entries {
            let mapping = entry.mapping.mapping
            if options.registry.valuesFollowExpressions(mapping) {
                let (attributes, toOnes) = try verifyObjects(entry, skipping: { touchedByPolicy(entry, $0) })
                proven[entry.number] = ["count", attributes == 1 ? "values of 1 attribute" : "values of \(attributes) attributes"]
                provenRelationships[entry.number] = toOnes.map(\.name)
                comparedLinks.formUnion(toOnes.compactMap { linkSet(entry, $0) })
            } else {
                try verifyAssociations(entry)
                proven[entry.number] = ["associations", "values not verified (set by \(mapping.policy.map { "policy \($0)" } ?? "the manager hook"))"]
            }
        }
        for entry in associations.entries {
            let mapping = entry.mapping.mapping
            var exact = provenRelationships[entry.number] ?? []
            var included: [String] = []
            for relationship in step.destination.allRelationships(of: mapping.destinationEntity!)
            where entry.mapping.relationships[relationship.name] != nil && !exact.contains(relationship.name) {
                let touched = touchedByPolicy(entry, relationship)
                let links = touched ? nil : linkSet(entry, relationship)
                if let links, comparedLinks.contains(links) {
                    exact.append(relationship.name)
                    continue
                }
                guard try verifyRelationship(relationship, of: entry, allowingMore: touched) else { continue }
                if touched { included.append(relationship.name) } else { exact.append(relationship.name) }
                if let links { comparedLinks.insert(links) }
            }
            var lines = proven[entry.number] ?? []
            if !exact.isEmpty { lines.append("relationships \(exact.joined(separator: ", "))") }
            if !included.isEmpty { lines.append("links of \(included.joined(separator: ", ")) present (policies add more)") }
            if let index = report.mappings.firstIndex(where: { $0.name == mapping.name && $0.pass == entry.pass }) {
                report.mappings[index].verified = lines
            }
        }
        report.verified.append("every entity mapping without a policy: one destination object per selected source object, every value equal to its value expression over the source")
        report.verified.append("every relationship mapping: the destination's links equal the source's, carried through the associations, in order where ordered")
        if associations.entries.contains(where: { !options.registry.valuesFollowExpressions($0.mapping.mapping) }) {
            report.verified.append("every association a policy made points at an object that was written; a policy's own values are not re-derived")
        }
    }

    /// Names the set of links a relationship mapping stands for: where the destination and the
    /// source keep them, and the entity mappings on both ends. A relationship and its inverse,
    /// both mapped, name the same set.
    private func linkSet(_ entry: AssociationTables.Entry, _ relationship: Relationship) -> String? {
        let mapping = entry.mapping.mapping
        let (sourceName, targets) = targets(entry.mapping.relationships[relationship.name]!, sourceEntity: mapping.sourceEntity!, pass: entry.pass)
        guard let destination = destinationLayout.storage(ofRelationship: relationship.name, of: mapping.destinationEntity!),
              let source = sourceLayout.storage(ofRelationship: sourceName, of: mapping.sourceEntity!) else { return nil }
        func place(_ storage: RelationshipStorage, ownTable: String) -> String {
            switch storage {
            case .foreignKey(let column): "\(ownTable).\(column)"
            case .inverseForeignKey(let table, let column, _): "\(table).\(column)"
            case .joinTable(let table, _, _, _): table
            }
        }
        let ends = Set([entry.number] + targets.map(\.number)).sorted().map(String.init).joined(separator: ",")
        return place(destination, ownTable: destinationLayout.entities[mapping.destinationEntity!]!.table) + " ← src."
            + place(source, ownTable: sourceLayout.entities[mapping.sourceEntity!]!.table) + " | " + ends
    }

    /// Destination rows of the entry's objects, as a condition on alias `d`. Where the entry is
    /// the only writer of its table, that is every row: strays are then counted too.
    private func objectsCondition(_ entry: AssociationTables.Entry) -> String {
        soleWriter(entry) ? "1" : created(entry)
    }

    private func soleWriter(_ entry: AssociationTables.Entry) -> Bool {
        let table = destinationLayout.entities[entry.mapping.mapping.destinationEntity!]!.table
        // A policy may create objects of any entity, in any table.
        guard associations.entries.allSatisfy({ options.registry.valuesFollowExpressions($0.mapping.mapping) }) else { return false }
        return associations.entries.filter { destinationLayout.entities[$0.mapping.mapping.destinationEntity!]!.table == table }.count == 1
    }

    /// The checksums of what the source says and of what the store holds, computed side by side.
    private func compare(expected: SQLFragment, actual: SQLFragment) throws -> (want: RowChecksum, have: RowChecksum) {
        let both = try ParallelChecksums.compute([expected, actual], store: connection.path, sourceAttachURI: sourceAttachURI)
        return (both[0], both[1])
    }

    // MARK: Objects and values

    /// Counts and every value of a mapping whose values are its expressions', with the links of
    /// its to-ones that hold one link per object in its own row (compared like values, in the
    /// same scan). Returns how many attributes were compared, and those to-ones.
    private func verifyObjects(_ entry: AssociationTables.Entry, skipping: (Relationship) -> Bool) throws -> (attributes: Int, toOnes: [Relationship]) {
        let mapping = entry.mapping.mapping
        let sourceTable = quoteIdentifier(sourceLayout.entities[mapping.sourceEntity!]!.table)
        let destination = destinationLayout.entities[mapping.destinationEntity!]!
        var compiler = SQLCompiler(layout: sourceLayout, schema: "src")
        let selection = sourceSelection(entry, compiler: &compiler)
        var columns: [(name: String, column: String, value: SQLFragment)] = []
        var affinities = "N"
        for attribute in step.destination.allAttributes(of: mapping.destinationEntity!) where !attribute.isTransient {
            let value = entry.mapping.attributes[attribute.name].map { compiler.sql($0, alias: "s") } ?? SQLFragment("?", [attribute.defaultValue ?? .null])
            columns.append((attribute.name, destination.attributeColumns[attribute.name]!, value))
            affinities.append(ColumnAffinity(declaredType: attribute.type.columnDeclaration).rawValue)
        }
        let attributeCount = columns.count
        let toOnes = step.destination.allRelationships(of: mapping.destinationEntity!).filter { relationship in
            guard entry.mapping.relationships[relationship.name] != nil, !skipping(relationship),
                  let column = destination.foreignKeyColumns[relationship.name], destination.orderColumns[relationship.name] == nil,
                  let link = foreignKeyValue(entry, relationship) else { return false }
            columns.append((relationship.name, column, SQLFragment(link.target)))
            affinities.append("N")
            if let entityColumn = destination.entityColumns[relationship.name] {
                columns.append((relationship.name, entityColumn, SQLFragment(link.entity)))
                affinities.append("N")
            }
            return true
        }
        // Source side: the key each object should have, then each value as its expression gives it.
        let key = entry.keepsKeys ? "s.\"Z_PK\"" : "a.destination"
        let association = entry.keepsKeys ? "" : " LEFT JOIN \(quoteIdentifier(entry.table)) a ON a.source = s.\"Z_PK\""
        let values = columns.reduce(SQLFragment("")) { $0 + SQLFragment(", ") + $1.value }
        let expected = SQLFragment("SELECT count(*), tern_checksum(\(quoteLiteral(affinities)), \(key)") + values
            + SQLFragment(") FROM \"src\".\(sourceTable) s\(association) WHERE ") + selection
        let actual = "SELECT count(*), tern_checksum(\(quoteLiteral(affinities)), d.\"Z_PK\"\(columns.map { ", d.\(quoteIdentifier($0.column))" }.joined())) FROM \(quoteIdentifier(destination.table)) d WHERE \(objectsCondition(entry))"
        let (want, have) = try compare(expected: expected, actual: SQLFragment(actual))
        if let index = report.mappings.firstIndex(where: { $0.name == mapping.name && $0.pass == entry.pass }) {
            report.mappings[index].selected = Int(want.count)
        }
        guard want != have else { return (attributeCount, toOnes) }

        // Name the first difference: a source object without its destination object, then the
        // first attribute whose value differs.
        let joined = SQLFragment("SELECT s.\"Z_PK\" FROM \"src\".\(sourceTable) s\(association) LEFT JOIN \(quoteIdentifier(destination.table)) d ON d.\"Z_PK\" = \(key) WHERE ") + selection
        let missing = try firstKey(joined + SQLFragment(" AND d.\"Z_PK\" IS NULL ORDER BY s.\"Z_PK\" LIMIT 1"))
        if let missing {
            throw MigrationFailure.verification("\(mapping.name): source \(mapping.sourceEntity!) \(missing) has no destination \(mapping.destinationEntity!) (\(want.count) selected, \(have.count) written)")
        }
        for column in columns {
            let differing = joined + SQLFragment(" AND d.\(quoteIdentifier(column.column)) IS NOT (") + column.value + SQLFragment(") ORDER BY s.\"Z_PK\" LIMIT 1")
            if let key = try firstKey(differing) {
                let what = columns.firstIndex { $0.column == column.column }! < attributeCount ? "the destination value differs from its value expression" : "the link differs from the source's"
                throw MigrationFailure.verification("\(mapping.name).\(column.name): \(what) over source \(mapping.sourceEntity!) \(key)")
            }
        }
        guard want.count == have.count else {
            throw MigrationFailure.verification("\(mapping.name): \(want.count) source objects selected, \(have.count) destination objects of \(mapping.destinationEntity!) written")
        }
        throw MigrationFailure.verification("\(mapping.name): the destination objects' checksum differs from the source's, though no single value compares unequal")
    }

    /// For a to-one read from a source to-one: SQL (over source rows `s`) for the destination
    /// key and entity number its link must hold — what stage 1 or 2 wrote. Nil where links are
    /// chosen among several (a to-many read into a to-one).
    private func foreignKeyValue(_ entry: AssociationTables.Entry, _ relationship: Relationship) -> (target: String, entity: String)? {
        let mapping = entry.mapping.mapping
        let (sourceName, targets) = targets(entry.mapping.relationships[relationship.name]!, sourceEntity: mapping.sourceEntity!, pass: entry.pass)
        guard let source = step.source.allRelationships(of: mapping.sourceEntity!).first(where: { $0.name == sourceName }), !source.isToMany,
              let sourceColumn = sourceLayout.entities[mapping.sourceEntity!]!.foreignKeyColumns[sourceName] else { return nil }
        guard !targets.isEmpty else { return ("NULL", "NULL") }
        let key = "s.\(quoteIdentifier(sourceColumn))"
        return (associations.lookup(targets, key: key), associations.entityNumber(targets, key: key))
    }

    private func firstKey(_ query: SQLFragment) throws -> Int64? {
        let statement = try connection.prepare(query.sql)
        try statement.bind(query.arguments)
        return try statement.step() ? statement.row.value(at: 0).int64 : nil
    }

    /// A policy may make any number of objects and set any value; what must hold is that every
    /// association points at an object that was written.
    private func verifyAssociations(_ entry: AssociationTables.Entry) throws {
        let mapping = entry.mapping.mapping
        let destination = destinationLayout.entities[mapping.destinationEntity!]!
        let dangling = try connection.scalar("SELECT a.source FROM \(quoteIdentifier(entry.table)) a WHERE NOT EXISTS (SELECT 1 FROM \(quoteIdentifier(destination.table)) d WHERE d.\"Z_PK\" = a.destination) LIMIT 1")?.int64
        if let dangling {
            throw MigrationFailure.verification("\(mapping.name): the association of source \(mapping.sourceEntity!) \(dangling) points at an object that was not written")
        }
    }

    // MARK: Relationships

    /// "Entity.relationship" of every relationship a policy linked objects through in this step
    /// (their checkpoint units say so, across resumes).
    private func policyLinkedRelationships() -> Set<String> {
        Set(checkpoint.units.keys.compactMap { unit -> String? in
            let parts = unit.split(separator: ":", maxSplits: 2)
            return parts.count == 3 && parts[0] == "policylinks" ? String(parts[2]) : nil
        })
    }

    /// Compares the links of one relationship mapping with the source's pairs carried through the
    /// associations: owner, target and, for ordered relationships, position. With `allowingMore`
    /// (policies also link through it), every expected link must be there, and others may be.
    /// Returns false where there is nothing to compare (no storage, no source pairs).
    private func verifyRelationship(_ relationship: Relationship, of entry: AssociationTables.Entry, allowingMore: Bool) throws -> Bool {
        let mapping = entry.mapping.mapping
        guard let storage = destinationLayout.storage(ofRelationship: relationship.name, of: mapping.destinationEntity!),
              let pairs = mappedPairs(entry, relationship: relationship, storage: storage) else { return false }
        // Positions: in an ordered to-many, per owner; for a to-one whose inverse is ordered, the
        // object's place among its target's.
        let inverseOrdered = destinationLayout.entities[mapping.destinationEntity!]!.orderColumns[relationship.name] != nil
        let position = relationship.isOrdered ? "row_number() OVER (PARTITION BY owner ORDER BY ord)"
            : inverseOrdered ? "row_number() OVER (PARTITION BY target ORDER BY source_ord, owner)" : "NULL"
        let expected = "SELECT owner, target, \(position) AS position FROM (\(pairs))"
        let actual = actualLinks(relationship, of: entry, storage: storage)
        if !allowingMore {
            let (want, have) = try compare(expected: SQLFragment("SELECT count(*), tern_checksum('NNN', owner, target, position) FROM (\(expected))"),
                                           actual: SQLFragment("SELECT count(*), tern_checksum('NNN', owner, target, position) FROM (\(actual))"))
            guard want != have else { return true }
        }
        let name = "\(mapping.name).\(relationship.name)"
        let missing = try connection.prepare("SELECT owner, target, position FROM (\(expected)) EXCEPT SELECT owner, target, position FROM (\(actual)) ORDER BY 1, 2 LIMIT 1")
        if try missing.step() {
            let owner = missing.row.int64(at: 0)
            throw MigrationFailure.verification("\(name): the link of source \(mapping.sourceEntity!) \(try sourceKey(of: owner, entry)) (destination \(owner)) to destination \(relationship.destination) \(missing.row.int64(at: 1))\(missing.row.value(at: 2).int64.map { " at position \($0)" } ?? "") is missing")
        }
        guard !allowingMore else { return true }
        let extra = try connection.prepare("SELECT owner, target, position FROM (\(actual)) EXCEPT SELECT owner, target, position FROM (\(expected)) ORDER BY 1, 2 LIMIT 1")
        if try extra.step() {
            let owner = extra.row.int64(at: 0)
            throw MigrationFailure.verification("\(name): destination \(mapping.destinationEntity!) \(owner) (source \(try sourceKey(of: owner, entry))) links to \(relationship.destination) \(extra.row.int64(at: 1))\(extra.row.value(at: 2).int64.map { " at position \($0)" } ?? ""), which the source does not")
        }
        throw MigrationFailure.verification("\(name): links are duplicated in the destination")
    }

    /// The destination's links of `relationship` held by the entry's objects: `(owner, target,
    /// position)`, wherever the layout stores them.
    private func actualLinks(_ relationship: Relationship, of entry: AssociationTables.Entry, storage: RelationshipStorage) -> String {
        let owner = destinationLayout.entities[entry.mapping.mapping.destinationEntity!]!
        let ownerTable = quoteIdentifier(owner.table)
        let ownedBy: (String) -> String = { [self] key in
            soleWriter(entry) ? "1" : "EXISTS (SELECT 1 FROM \(ownerTable) d WHERE d.\"Z_PK\" = \(key) AND \(created(entry)))"
        }
        let position: (String, String) -> String = { owner, order in relationship.isOrdered ? "row_number() OVER (PARTITION BY \(owner) ORDER BY \(order))" : "NULL" }
        switch storage {
        case .foreignKey(let column):
            let position = owner.orderColumns[relationship.name].map {
                "row_number() OVER (PARTITION BY d.\(quoteIdentifier(column)) ORDER BY d.\(quoteIdentifier($0)), d.\"Z_PK\")"
            } ?? "NULL"
            return "SELECT d.\"Z_PK\" AS owner, d.\(quoteIdentifier(column)) AS target, \(position) AS position FROM \(ownerTable) d WHERE d.\(quoteIdentifier(column)) IS NOT NULL AND \(objectsCondition(entry))"
        case .inverseForeignKey(let table, let column, let orderColumn):
            let targets = step.destination.descendants(of: relationship.destination).compactMap { destinationLayout.entities[$0.name]?.number }
            let order = orderColumn.map { "t.\(quoteIdentifier($0)), t.\"Z_PK\"" } ?? "t.\"Z_PK\""
            return "SELECT t.\(quoteIdentifier(column)) AS owner, t.\"Z_PK\" AS target, \(position("t.\(quoteIdentifier(column))", order)) AS position FROM \(quoteIdentifier(table)) t WHERE t.\(quoteIdentifier(column)) IS NOT NULL AND t.\"Z_ENT\" IN (\(targets.map(String.init).joined(separator: ", "))) AND \(ownedBy("t.\(quoteIdentifier(column))"))"
        case .joinTable(let table, let own, let destination, let orderColumn):
            let order = orderColumn.map { "j.\(quoteIdentifier($0)), j.\(quoteIdentifier(destination))" } ?? "j.\(quoteIdentifier(destination))"
            return "SELECT j.\(quoteIdentifier(own)) AS owner, j.\(quoteIdentifier(destination)) AS target, \(position("j.\(quoteIdentifier(own))", order)) AS position FROM \(quoteIdentifier(table)) j WHERE \(ownedBy("j.\(quoteIdentifier(own))"))"
        }
    }

    /// The source key an entry made a destination object from, to name it in a message.
    private func sourceKey(of destination: Int64, _ entry: AssociationTables.Entry) throws -> Int64 {
        guard !entry.keepsKeys else { return destination }
        return try connection.scalar("SELECT source FROM \(quoteIdentifier(entry.table)) WHERE destination = ? ORDER BY source LIMIT 1", destination)?.int64 ?? destination
    }
}
