import TernSQLite
import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability

/// Proves a step's result by content before anything may be swapped: what it reads is explicit
/// (the step's inputs, the relationships policies linked through), what it proves goes into the
/// report.
struct StepVerification {
    let inputs: StepInputs
    /// "Entity.relationship" of every relationship a policy linked objects through.
    let policyLinked: Set<PropertyIdentity>
    /// The entity mappings that wrote objects in Swift, by root table.
    let swiftWriters: [String: Set<Int>]
    /// The step's report: each mapping's count and what was proven are added to it.
    var report: StepReport
    /// Expected sides of values scans already read over the source during the pass
    /// (`EarlyExpectations`), by query: a scan built again identically is not run again.
    var readEarly: [SQLFragment: ScanResult] = [:]
    /// Catching up a live store: the objects compared are only those whose keys this SQL lists
    /// (both sides alike; a full comparison proved the others). Links compared apart from their
    /// objects are compared whole.
    var onlyKeys: String?
    /// Whether the destination's indexes are being built beside, asked as each set of scans
    /// starts: they then take only the cores the build leaves, since the step waits for the
    /// build's sort, which nothing shares (measured on the 4M-object all-SQL benchmark: 5.22 s →
    /// 5.02 s).
    var besideIndexBuild: () -> Bool = { false }
    /// The destination model's rules counted in an entity mapping's store-side scan, by entry
    /// number (`StepValidation.countedAlong`): the objects are read once for both stage 3 and
    /// verification (measured on the 4M-object all-SQL benchmark, a scan of its own took 0.33 s
    /// of a 5.3 s run). `rulesBroken` is called with the entries whose objects break one before
    /// any comparison is judged, so a broken rule is reported as validation's, as when it ran first.
    var rulesCountedAlong: [Int: [String]] = [:]
    var rulesBroken: ([PlannedMapping]) throws -> Void = { _ in }

    private var step: MigrationStep { inputs.step }
    private var options: MigrationOptions { inputs.options }
    private var connection: Connection { inputs.connection }
    private var sourceLayout: StoreLayout { inputs.sourceLayout }
    private var destinationLayout: StoreLayout { inputs.destinationLayout }
    private var associations: AssociationTables { inputs.associations }

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
    mutating func run() throws {
        let (contributions, groups, agreed, ordersKeptBySource) = linkPlan()

        // Every values comparison's ranges scanned at once: a table too small to cut in two no
        // longer leaves a worker idle while it is read alone.
        let comparisons = associations.entries.filter(\.valuesFollowExpressions).map {
            objectsComparison($0, contributions: contributions, agreed: agreed, ordersKeptBySource: ordersKeptBySource)
        }
        // In the entries' order, as the loop below takes them.
        let sums = try compare(comparisons.map(\.ranged))
        // The rules' counts follow the folded links' in the store's side.
        let breaking = zip(comparisons, sums).filter { comparison, sums in sums.have.counts.dropFirst(comparison.toOnes.count).contains { $0 > 0 } }
        if !breaking.isEmpty {
            try rulesBroken(breaking.map(\.0.entry))
            // Counted here, not found when read again: the two reads disagree, which no store should.
            throw MigrationFailure.verification(
                "\(breaking.map(\.0.entry.entityMapping.name).joined(separator: ", ")): objects counted breaking the model's rules, none found when read again")
        }
        var compared = zip(comparisons, sums).makeIterator()
        var proven: [Int: [String]] = [:]
        var folded: Set<String> = []
        for entry in associations.entries {
            let mapping = entry.entityMapping
            if entry.valuesFollowExpressions {
                let (comparison, sums) = compared.next()!
                let (attributes, toOnes) = try verifyObjects(comparison, sums: sums)
                proven[entry.number] = ["count", attributes == 1 ? "values of 1 attribute" : "values of \(attributes) attributes"]
                folded.formUnion(places(ofToOnes: toOnes, of: entry, in: contributions))
            } else {
                try verifyAssociations(entry)
                proven[entry.number] = ["associations", "values not verified (set by \(mapping.policy.map { "policy \($0)" } ?? "the manager hook"))"]
            }
        }
        try verifyLinks(groups: groups, agreed: agreed, folded: folded, proven: proven)
    }

    /// The source's side of every values scan, range by range, and of every link comparison, as
    /// `run` will build them: what `EarlyExpectations` can read while the pass writes (those
    /// that read the association tables cannot be prepared there, and are left to verification).
    func expectedScans() throws -> [SQLFragment] {
        let (contributions, groups, agreed, ordersKeptBySource) = linkPlan()
        var folded: Set<String> = []
        let values = try associations.entries.filter(\.valuesFollowExpressions).flatMap { entry in
            let comparison = objectsComparison(entry, contributions: contributions, agreed: agreed, ordersKeptBySource: ordersKeptBySource)
            folded.formUnion(places(ofToOnes: comparison.toOnes.map(\.name), of: entry, in: contributions))
            let ranged = comparison.ranged
            return try ranges(of: ranged.expected, cutBy: ranged.expectedKey, of: ranged.expectedTable)
        }
        // And of every list compared through one side, as `compare` will run it.
        let links = agreed.subtracting(folded).sorted().map { place in
            let listing = expectedLinks(comparedSide(of: groups[place]!))
            return listing.rankedChecksum ?? listing.checksum
        }
        return values + links
    }

    /// Where the links of `entry`'s to-ones compared in its objects' own scan are stored: those
    /// are not compared again as links.
    private func places(ofToOnes toOnes: [String], of entry: PlannedMapping, in contributions: [LinkContribution]) -> [String] {
        contributions.filter { $0.entry.number == entry.number && toOnes.contains($0.relationship.name) }.map(\.ends.place)
    }

    /// Every relationship mapping that links anything, grouped by where its links are stored
    /// (both sides of a relationship write one set of links); the places any one side says all
    /// of; and those whose lists keep the source's order keys.
    private func linkPlan() -> (
        contributions: [LinkContribution], groups: [String: [LinkContribution]], agreed: Set<String>, ordersKeptBySource: Set<String>
    ) {
        var contributions: [LinkContribution] = []
        for entry in associations.entries {
            for relationship in step.destination.allRelationships(of: entry.destinationEntity) where entry.mapping.relationships[relationship.name] != nil {
                // Every pass has run: links reach objects of any pass (see catchUpLinksToLaterPasses).
                let last = step.passes.count - 1
                let (_, targets) = inputs.targets(of: relationship, in: entry, throughPass: last)
                guard let storage = destinationLayout.storage(ofRelationship: relationship.name, of: entry.destinationEntity),
                    let pairs = inputs.mappedPairs(entry, relationship: relationship, storage: storage, throughPass: last)
                else { continue }
                let touched =
                    policyLinked.contains(PropertyIdentity(entity: entry.destinationEntity, property: relationship.name))
                    || relationship.inverse.map { policyLinked.contains(PropertyIdentity(entity: relationship.destination, property: $0)) } == true
                contributions.append(
                    LinkContribution(
                        entry: entry, relationship: relationship, storage: storage, pairs: pairs,
                        ends: inputs.linkEnds(entry, storage: storage, targets: targets), touchedByPolicy: touched))
            }
        }
        let groups = Dictionary(grouping: contributions, by: \.ends.place)
        // A storage whose every writer joins the same entity mappings holds what any one of them
        // says: compared once, through one of them (a to-one in its owner's row, with the values).
        let agreed = Set(groups.filter { _, group in group.allSatisfy { $0.ends.joinsSameObjects(as: group[0].ends) && !$0.touchedByPolicy } }.keys)
        // A list kept in its objects' foreign key, whose every ordered side keeps the source's
        // order keys: each object's key is compared with its source object's, in the same scan.
        let ordersKeptBySource = Set(
            groups.filter { place, group in
                let ordered = group.filter { $0.storage.orderColumn != nil }
                return agreed.contains(place) && !ordered.isEmpty && ordered.allSatisfy(keepsSourceOrderKeys)
            }.keys)
        return (contributions, groups, agreed, ordersKeptBySource)
    }

    /// Every relationship mapping's links not compared with their objects' values, then what
    /// was proven, into the report.
    private mutating func verifyLinks(groups: [String: [LinkContribution]], agreed: Set<String>, folded: Set<String>, proven: [Int: [String]]) throws {
        var exact: [Int: Set<String>] = [:]
        var included: [Int: Set<String>] = [:]
        for place in groups.keys.sorted() {
            let group = groups[place]!
            if group.contains(where: \.touchedByPolicy) {
                for contribution in group {
                    try verifyRelationship(contribution, allowingMore: true)
                    included[contribution.entry.number, default: []].insert(contribution.relationship.name)
                }
                continue
            }
            if agreed.contains(place) {
                // Any side says it all. One comparison at a time: the store's side of each takes
                // one worker (the source's was read beside the pass), and the index build,
                // beside verification, the other, rather than being rolled back once it ends.
                if !folded.contains(place) { try verifyRelationship(comparedSide(of: group), allowingMore: false, sharedWith: group) }
            } else {
                try verifyUnion(group)
            }
            for contribution in group {
                let unordered = !agreed.contains(place) && contribution.storage.orderColumn != nil
                exact[contribution.entry.number, default: []].insert(contribution.relationship.name + (unordered ? " (order not compared)" : ""))
            }
        }
        try verifyOneToOnes()
        try verifyDerivedValues()
        if !destinationLayout.triggeredDerivations.isEmpty {
            report.verified.append("every derived attribute Core Data keeps with triggers: its value equals its derivation over the migrated store")
        }
        for entry in associations.entries {
            var lines = proven[entry.number] ?? []
            if let names = exact[entry.number] { lines.append("relationships \(names.sorted().joined(separator: ", "))") }
            if let names = included[entry.number] { lines.append("links of \(names.sorted().joined(separator: ", ")) present (policies add more)") }
            if let index = report.mappings.firstIndex(where: { $0.name == entry.entityMapping.name && $0.pass == entry.pass + 1 }) {
                report.mappings[index].verified = lines
            }
        }
        report.verified.append(
            "every entity mapping without a policy: one destination object per selected source object, every value equal to its value expression over the source"
        )
        report.verified.append(
            "every relationship mapping: the destination's links equal the source's, carried through the associations, in order where ordered")
        if associations.entries.contains(where: { !$0.valuesFollowExpressions }) {
            report.verified.append("every association a policy made points at an object that was written; a policy's own values are not re-derived")
        }
    }

    /// Both foreign keys of every one-to-one in the destination hold the same links, whichever
    /// side the mapping wrote.
    private func verifyOneToOnes() throws {
        var seen: Set<String> = []
        for entity in step.destination.entities {
            let own = destinationLayout.entities[entity.name]!
            for relationship in entity.relationships {
                guard let pair = destinationLayout.oneToOne(relationship.name, of: entity.name) else { continue }
                let (column, target, inverseName, inverseColumn) = (pair.column, pair.target, pair.inverse, pair.inverseColumn)
                guard seen.insert([own.table + column, target.table + inverseColumn].sorted().joined(separator: "|")).inserted else { continue }
                let forward =
                    "SELECT count(*), tern_checksum('NN', \(quoteIdentifier(column)), \"Z_PK\") FROM \(quoteIdentifier(own.table)) WHERE \(quoteIdentifier(column)) IS NOT NULL"
                let backward =
                    "SELECT count(*), tern_checksum('NN', \"Z_PK\", \(quoteIdentifier(inverseColumn))) FROM \(quoteIdentifier(target.table)) WHERE \(quoteIdentifier(inverseColumn)) IS NOT NULL"
                let (want, have) = try compare(expected: SQLFragment(forward), actual: SQLFragment(backward))
                guard want == have else {
                    throw MigrationFailure.verification(
                        "\(entity.name).\(relationship.name) and \(relationship.destination).\(inverseName): the two sides of the one-to-one disagree (\(want.count) links one way, \(have.count) the other)"
                    )
                }
            }
        }
    }

    /// Records the links a relationship mapping's storage holds, counted where verification
    /// compared them, unless stage 2 counted them as it wrote them: links stage 1 wrote in its
    /// INSERTs (a to-one whose targets were known) are reported too.
    private mutating func countLinks(_ name: String, _ count: Int, sharedWith group: [LinkContribution] = []) {
        let names = [name] + group.map { "\($0.entry.entityMapping.name).\($0.relationship.name)" }
        if names.allSatisfy({ report.links[$0] == nil }) { report.links[name] = count }
    }

    /// One relationship mapping's links, as `mappedPairs` gives them, and where they go.
    struct LinkContribution {
        let entry: PlannedMapping
        let relationship: Relationship
        let storage: RelationshipStorage
        let pairs: String
        let ends: LinkEnds
        let touchedByPolicy: Bool
    }

    /// A storage written from both sides of a relationship by mappings that join different entity
    /// mappings (a subentity mapped apart, a side whose targets come in a later pass): its links
    /// must be exactly the union of what every side says. Positions are not compared here.
    private mutating func verifyUnion(_ group: [LinkContribution]) throws {
        let sides = group.map { c in
            c.ends.ownerHolds ? "SELECT owner AS a, target AS b FROM (\(c.pairs))" : "SELECT target AS a, owner AS b FROM (\(c.pairs))"
        }
        var expected = "SELECT DISTINCT a, b FROM (\(sides.joined(separator: " UNION ALL ")))"
        if group[0].storage.holdsOneOwnerPerDestination {
            // A hidden key holds one owner per target: the smallest of those the sides give.
            expected = "SELECT a, min(b) AS b FROM (\(sides.joined(separator: " UNION ALL "))) GROUP BY a"
        }
        let actual: String
        switch group[0].storage {
        case .foreignKey(let column):
            let table = destinationLayout.entities[group[0].entry.destinationEntity]!.table
            actual = "SELECT \"Z_PK\" AS a, \(quoteIdentifier(column)) AS b FROM \(quoteIdentifier(table)) WHERE \(quoteIdentifier(column)) IS NOT NULL"
        case .inverseForeignKey(let table, let column, _), .hiddenKey(let table, let column, _):
            actual = "SELECT \"Z_PK\" AS a, \(quoteIdentifier(column)) AS b FROM \(quoteIdentifier(table)) WHERE \(quoteIdentifier(column)) IS NOT NULL"
        case .joinTable(let table, let own, let destination, _):
            let (first, second) = own < destination ? (own, destination) : (destination, own)
            actual = "SELECT \(quoteIdentifier(first)) AS a, \(quoteIdentifier(second)) AS b FROM \(quoteIdentifier(table))"
        }
        let (want, have) = try compare(
            expected: SQLFragment("SELECT count(*), tern_checksum('NN', a, b) FROM (\(expected))"),
            actual: SQLFragment("SELECT count(*), tern_checksum('NN', a, b) FROM (\(actual))"))
        guard want != have else {
            countLinks("\(group[0].entry.entityMapping.name).\(group[0].relationship.name)", Int(have.count), sharedWith: group)
            return
        }
        let names = group.map { "\($0.entry.entityMapping.name).\($0.relationship.name)" }.joined(separator: " and ")
        for (from, to, what) in [(expected, actual, "is missing"), (actual, expected, "is not in the source")] {
            let statement = try connection.prepare("SELECT a, b FROM (\(from)) EXCEPT SELECT a, b FROM (\(to)) ORDER BY 1, 2 LIMIT 1")
            if try statement.step() {
                throw MigrationFailure.verification(
                    "\(names): the link between destination objects \(statement.row.int64(at: 0)) and \(statement.row.int64(at: 1)) \(what)")
            }
        }
        throw MigrationFailure.verification("\(names): links are duplicated in the destination")
    }

    /// Destination rows of the entry's objects, as a condition on alias `d`. Where the entry is
    /// the only writer of its table, that is every row: strays are then counted too.
    /// Every derived value equals its derivation over the finished store: the statements that
    /// computed them, run as a comparison.
    private func verifyDerivedValues() throws {
        for entity in step.destination.entities {
            for attribute in entity.attributes
            where destinationLayout.triggeredDerivations.contains(PropertyIdentity(entity: entity.name, property: attribute.name)) {
                guard case .count(let relationship)? = attribute.derivation,
                    case let (table, key, _)? = destinationLayout.storage(ofRelationship: relationship, of: entity.name)?.keyInDestinations,
                    let own = destinationLayout.entities[entity.name], let column = own.attributeColumns[attribute.name]
                else { continue }
                let holders = step.destination.descendants(of: entity.name).compactMap { destinationLayout.entities[$0.name]?.number }.map(String.init).joined(
                    separator: ", ")
                let (t, c, k) = (quoteIdentifier(own.table), quoteIdentifier(column), quoteIdentifier(key))
                let wrong = try connection.scalar(
                    "SELECT d.Z_PK FROM \(t) d WHERE d.Z_ENT IN (\(holders)) AND d.\(c) IS NOT (SELECT count(*) FROM \(quoteIdentifier(table)) x WHERE x.\(k) = d.Z_PK) LIMIT 1"
                )
                if let wrong = wrong?.int64 {
                    throw MigrationFailure.verification("\(entity.name).\(attribute.name): destination object \(wrong) does not hold \(relationship).@count")
                }
            }
        }
    }

    private func objectsCondition(_ entry: PlannedMapping) -> String {
        soleWriter(entry) ? "1" : inputs.created(entry)
    }

    private func soleWriter(_ entry: PlannedMapping) -> Bool {
        inputs.soleWriter(entry, swiftWriters: swiftWriters)
    }

    /// The checksums of what the source says (unless read beside the pass) and of what the store
    /// holds, computed side by side.
    private func compare(expected: SQLFragment, actual: SQLFragment) throws -> (want: ScanResult, have: ScanResult) {
        if let want = readEarly[expected] { return (want, try scanInParallel([actual])[0]) }
        let both = try scanInParallel([expected, actual])
        return (both[0], both[1])
    }

    /// Two listings' counts and checksums (the source's unless read beside the pass), each
    /// ranked as its rows come where it can be (`LinkListing.rankedChecksum`), by window
    /// functions where not, or where rows came out of order after all.
    private func compare(_ expected: LinkListing, _ actual: LinkListing) throws -> (want: ScanResult, have: ScanResult) {
        do {
            return try compare(expected: expected.rankedChecksum ?? expected.checksum, actual: actual.rankedChecksum ?? actual.checksum)
        } catch  where RankedChecksum.isOutOfOrder(error) {
            return try compare(expected: expected.checksum, actual: actual.checksum)
        }
    }

    /// `queries` run side by side over the store, with the source attached and Tern's SQL
    /// functions, as every scan of verification reads.
    private func scanInParallel(_ queries: [SQLFragment]) throws -> [ScanResult] {
        try ParallelScans.run(
            queries, store: connection.path, attach: inputs.sourceAttachURI, externalData: inputs.externalData, yieldingCores: besideIndexBuild(),
            preparing: { try SQLCompiler.prepare($0, externalData: $1) }, shouldStop: options.shouldStop)
    }

    /// Two queries that each end in a parenthesized `WHERE` condition, each cut into ranges of a
    /// table's rowid (`expectedKey` of `expectedTable`, and the actual side's likewise).
    struct RangedComparison {
        var expected: SQLFragment
        var expectedKey: String
        var expectedTable: String
        var actual: SQLFragment
        var actualKey: String
        var actualTable: String
    }

    /// The same two checksums of each comparison, each side cut into ranges and every range of
    /// every comparison run on the workers at once, then added up per side (counts and
    /// checksums add): one side or one table costlier than another no longer leaves a worker
    /// idle, and a large table is read by both.
    private func compare(_ comparisons: [RangedComparison]) throws -> [(want: ScanResult, have: ScanResult)] {
        let cut = try comparisons.map {
            (
                wanted: try ranges(of: $0.expected, cutBy: $0.expectedKey, of: $0.expectedTable),
                had: try ranges(of: $0.actual, cutBy: $0.actualKey, of: $0.actualTable)
            )
        }
        // The source's sides where they were not read early, then the store's, in order.
        let ran = try scanInParallel(cut.flatMap { $0.wanted.filter { readEarly[$0] == nil } } + cut.flatMap(\.had))
        var fresh = ran.makeIterator()
        let wanted = cut.map { $0.wanted.map { readEarly[$0] ?? fresh.next()! } }
        let had = cut.map { $0.had.map { _ in fresh.next()! } }
        func sum(_ parts: [ScanResult]) -> ScanResult {
            parts.reduce(into: ScanResult(count: 0, value: 0, counts: parts.first?.counts.map { _ in 0 } ?? [])) { total, part in
                total.count += part.count
                total.value = total.value! &+ (part.value ?? 0)
                total.counts = zip(total.counts, part.counts).map { $0 + $1 }
            }
        }
        return zip(wanted, had).map { (sum($0), sum($1)) }
    }

    /// `query` (ending in a parenthesized `WHERE` condition) cut into ranges of `key`, the
    /// rowid of `table`, as `compare` runs it.
    private func ranges(of query: SQLFragment, cutBy key: String, of table: String) throws -> [SQLFragment] {
        if let onlyKeys { return [query + SQLFragment(" AND (\(key) IN (\(onlyKeys)))")] }
        return try RowidRanges.conditions(on: key, of: table, in: connection, rowidsPerScan: options.keysPerScan ?? RowidRanges.rowidsPerScan).map {
            query + SQLFragment(" AND (\($0))")
        }
    }

    // MARK: Objects and values

    /// One entity mapping's objects as verification compares them: the source's side and the
    /// store's, each a query ending in a parenthesized `WHERE` condition, and what naming a
    /// difference needs.
    struct ObjectsComparison {
        let entry: PlannedMapping
        /// Source rows `s`: the count and checksum of each object's key and expected values.
        let expected: SQLFragment
        /// The source table, with its schema, and the destination table, quoted.
        let sourceTable: String
        let destinationTable: String
        /// Destination rows `d`: the same of the objects written, then each folded link's count,
        /// then the count of each group of rules counted along.
        let actual: String
        /// Each value as the source gives it, and the destination column compared with it.
        let columns: [(name: String, column: String, value: SQLFragment)]
        let attributeCount: Int
        /// The to-ones compared with the values, in the objects' own rows.
        let toOnes: [Relationship]
        /// The destination key each source object should have, and the join that gives it.
        let key: String
        let association: String
        let selection: SQLFragment

        /// Both sides, cut by their tables' keys, as `compare` scans them.
        var ranged: RangedComparison {
            RangedComparison(
                expected: expected, expectedKey: "s.\"Z_PK\"", expectedTable: sourceTable, actual: SQLFragment(actual), actualKey: "d.\"Z_PK\"",
                actualTable: destinationTable)
        }
    }

    /// The comparison of an entity mapping whose values are its expressions': its objects,
    /// every value, and the to-ones among its `agreed` links held in its own rows (with their
    /// list places where the source's order keys are kept).
    private func objectsComparison(
        _ entry: PlannedMapping, contributions: [LinkContribution], agreed: Set<String>, ordersKeptBySource: Set<String>
    ) -> ObjectsComparison {
        let own = contributions.filter { $0.entry.number == entry.number && agreed.contains($0.ends.place) }
        let folding = Set(own.map(\.relationship.name))
        let withSourceOrder = Set(own.filter { ordersKeptBySource.contains($0.ends.place) }.map(\.relationship.name))
        let sourceTable = quoteIdentifier(sourceLayout.entities[entry.sourceEntity]!.table)
        let destination = destinationLayout.entities[entry.destinationEntity]!
        var compiler = SQLCompiler(layout: sourceLayout, schema: "src")
        let selection = inputs.sourceSelection(entry, compiler: &compiler)
        // Each value as the source gives it, and the destination column as compared with it.
        var columns: [(name: String, column: String, value: SQLFragment)] = []
        var affinities = "N"
        // A derived attribute Core Data keeps with triggers holds its derivation, whatever the
        // mapping says: `verifyDerivedValues` checks it.
        for attribute in step.destination.allAttributes(of: entry.destinationEntity)
        where !attribute.isTransient
            && !destinationLayout.isKeptByTriggers(attribute.name, of: entry.destinationEntity)
        {
            columns.append((attribute.name, inputs.comparedColumn(attribute, in: entry), inputs.expectedValue(attribute, in: entry, compiler: &compiler)))
            affinities.append(ColumnAffinity(declaredType: attribute.type.columnDeclaration).rawValue)
        }
        let attributeCount = columns.count
        let toOnes = step.destination.allRelationships(of: entry.destinationEntity).filter { relationship in
            guard folding.contains(relationship.name), let column = destination.foreignKeyColumns[relationship.name],
                let link = foreignKeyValue(entry, relationship)
            else { return false }
            // The object's place in the list its inverse keeps: the source object's order key,
            // where every side of the list keeps the source's keys (`keepsSourceOrderKeys`).
            var place: (actual: String, expected: String)?
            if let orderColumn = destination.orderColumns[relationship.name] {
                let sourceName = inputs.targets(of: relationship, in: entry, throughPass: step.passes.count - 1).0
                guard withSourceOrder.contains(relationship.name),
                    let sourceOrder = sourceLayout.entities[entry.sourceEntity]!.orderColumns[sourceName]
                else { return false }
                place = (
                    "CASE WHEN d.\(quoteIdentifier(column)) IS NOT NULL THEN d.\(quoteIdentifier(orderColumn)) END",
                    "CASE WHEN (\(link.target)) IS NOT NULL THEN s.\(quoteIdentifier(sourceOrder)) END"
                )
            }
            columns.append((relationship.name, "d.\(quoteIdentifier(column))", SQLFragment(link.target)))
            affinities.append("N")
            if let entityColumn = destination.entityColumns[relationship.name] {
                columns.append((relationship.name, "d.\(quoteIdentifier(entityColumn))", SQLFragment(link.entity)))
                affinities.append("N")
            }
            if let place {
                columns.append((relationship.name, place.actual, SQLFragment(place.expected)))
                affinities.append("N")
            }
            return true
        }
        // Source side: the key each object should have, then each value as its expression gives it.
        let key = entry.keepsKeys ? "s.\"Z_PK\"" : "a.destination"
        let association = entry.keepsKeys ? "" : " LEFT JOIN \(quoteIdentifier(entry.table)) a ON a.source = s.\"Z_PK\""
        let expectedArguments = ChecksumArguments.of(
            affinities: affinities, values: [SQLFragment(key)] + columns.map(\.value),
            text: { SQLFragment($0) }, join: { $0.reduce(SQLFragment(""), +) })
        let expected =
            SQLFragment("SELECT count(*), tern_checksum(") + expectedArguments
            + SQLFragment(") FROM \"src\".\(sourceTable) s\(association) WHERE (") + selection + SQLFragment(")")
        let actualArguments = ChecksumArguments.of(affinities: affinities, values: ["d.\"Z_PK\""] + columns.map(\.column))
        // The folded to-ones' links, counted in the same scan for the report; then the rules.
        let linkCounts = toOnes.map { ", count(d.\(quoteIdentifier(destination.foreignKeyColumns[$0.name]!)))" }.joined()
        let ruleCounts = (rulesCountedAlong[entry.number] ?? []).map { ", " + $0 }.joined()
        let actual =
            "SELECT count(*), tern_checksum(\(actualArguments))\(linkCounts)\(ruleCounts) FROM \(quoteIdentifier(destination.table)) d WHERE (\(objectsCondition(entry)))"
        return ObjectsComparison(
            entry: entry, expected: expected, sourceTable: "\"src\".\(sourceTable)", destinationTable: quoteIdentifier(destination.table), actual: actual,
            columns: columns, attributeCount: attributeCount, toOnes: toOnes, key: key, association: association, selection: selection)
    }

    /// Counts and every value of a mapping whose values are its expressions', with the links of
    /// its to-ones that hold one link per object in its own row (compared like values, in the
    /// same scan). Returns how many attributes were compared, and those to-ones.
    private mutating func verifyObjects(_ comparison: ObjectsComparison, sums: (want: ScanResult, have: ScanResult)) throws -> (
        attributes: Int, toOnes: [String]
    ) {
        let (entry, columns, attributeCount, toOnes) = (comparison.entry, comparison.columns, comparison.attributeCount, comparison.toOnes)
        let (key, association, selection) = (comparison.key, comparison.association, comparison.selection)
        let mapping = entry.entityMapping
        let sourceTable = comparison.sourceTable
        let destinationTable = comparison.destinationTable
        let (want, have) = sums
        if let index = report.mappings.firstIndex(where: { $0.name == mapping.name && $0.pass == entry.pass + 1 }) {
            report.mappings[index].selected = Int(want.count)
        }
        guard want.count != have.count || want.value != have.value else {
            for (relationship, count) in zip(toOnes, have.counts) { countLinks("\(mapping.name).\(relationship.name)", Int(count)) }
            return (attributeCount, toOnes.map(\.name))
        }

        // Name the first difference: a source object without its destination object, then the
        // first attribute whose value differs.
        let joined =
            SQLFragment(
                "SELECT s.\"Z_PK\" FROM \(sourceTable) s\(association) LEFT JOIN \(destinationTable) d ON d.\"Z_PK\" = \(key) WHERE ")
            + selection
        let missing = try firstKey(joined + SQLFragment(" AND d.\"Z_PK\" IS NULL ORDER BY s.\"Z_PK\" LIMIT 1"))
        if let missing {
            throw MigrationFailure.verification(
                "\(mapping.name): source \(entry.sourceEntity) \(missing) has no destination \(entry.destinationEntity) (\(want.count) selected, \(have.count) written)"
            )
        }
        for column in columns {
            let differing = joined + SQLFragment(" AND \(column.column) IS NOT (") + column.value + SQLFragment(") ORDER BY s.\"Z_PK\" LIMIT 1")
            if let key = try firstKey(differing) {
                let what =
                    columns.firstIndex { $0.column == column.column }! < attributeCount
                    ? "the destination value differs from its value expression" : "the link differs from the source's"
                throw MigrationFailure.verification("\(mapping.name).\(column.name): \(what) over source \(entry.sourceEntity) \(key)")
            }
        }
        guard want.count == have.count else {
            throw MigrationFailure.verification(
                "\(mapping.name): \(want.count) source objects selected, \(have.count) destination objects of \(entry.destinationEntity) written")
        }
        throw MigrationFailure.verification(
            "\(mapping.name): the destination objects' checksum differs from the source's, though no single value compares unequal")
    }

    /// For a to-one read from a source to-one: SQL (over source rows `s`) for the destination
    /// key and entity number its link must hold — what stage 1 or 2 wrote. Nil where links are
    /// chosen among several (a to-many read into a to-one).
    private func foreignKeyValue(_ entry: PlannedMapping, _ relationship: Relationship) -> (target: String, entity: String)? {
        guard !inputs.needsMatching(relationship, of: entry.destinationEntity) else { return nil }
        let (sourceName, targets) = inputs.targets(of: relationship, in: entry, throughPass: step.passes.count - 1)
        guard let source = step.source.allRelationships(of: entry.sourceEntity).first(where: { $0.name == sourceName }), !source.isToMany,
            let sourceColumn = sourceLayout.entities[entry.sourceEntity]!.foreignKeyColumns[sourceName]
        else { return nil }
        guard !targets.isEmpty else { return ("NULL", "NULL") }
        let key = "s.\(quoteIdentifier(sourceColumn))"
        return (associations.lookup(targets, key: key), associations.entityNumber(targets, key: key))
    }

    private func firstKey(_ query: SQLFragment) throws -> Int64? {
        let statement = try connection.prepare(query.sql)
        try statement.bind(query.arguments)
        return try statement.step() ? statement.row.value(at: 0).int64 : nil
    }

    /// A policy may make any number of objects, of any entity, and set any value; what must
    /// hold is that every association points at an object that was written, of its entity.
    private func verifyAssociations(_ entry: PlannedMapping) throws {
        let mapping = entry.entityMapping
        let table = quoteIdentifier(entry.table)
        // SQL leaves `entity` NULL: its objects are all of the mapping's destination entity.
        let mappedEntity = Int64(destinationLayout.entities[entry.destinationEntity]!.number)
        // Where the mapping alone writes its table, the associations' objects and the table's
        // objects of its entity, two sums of one scan each, are alike when every association
        // points at an object written, of that entity, and no object lacks one (a tenth of the
        // time of looking each up: 1,000,000 associations, 0.38 s → 0.04 s). Only where they
        // differ (objects of other entities, or left unassociated) is each association looked up.
        if soleWriter(entry) {
            let objects = quoteIdentifier(destinationLayout.entities[entry.destinationEntity]!.table)
            let sums = try compare([
                RangedComparison(
                    expected: SQLFragment("SELECT count(*), tern_checksum('NN', a.destination, coalesce(a.entity, \(mappedEntity))) FROM \(table) a WHERE (1)"),
                    expectedKey: "a.rowid", expectedTable: table,
                    actual: SQLFragment(
                        "SELECT count(*), tern_checksum('NN', d.\"Z_PK\", d.\"Z_ENT\") FROM \(objects) d WHERE (d.\"Z_ENT\" = \(mappedEntity))"),
                    actualKey: "d.\"Z_PK\"", actualTable: objects)
            ])[0]
            if sums.want == sums.have { return }
        }
        // Each row's object looked up in its own entity's table (none: an entity number the
        // destination lacks, which nothing was written as).
        let written =
            "CASE coalesce(a.entity, \(mappedEntity))"
            + destinationLayout.entities.values.sorted { $0.number < $1.number }.map {
                " WHEN \($0.number) THEN EXISTS (SELECT 1 FROM \(quoteIdentifier($0.table)) d WHERE d.\"Z_PK\" = a.destination AND d.\"Z_ENT\" = \($0.number))"
            }.joined() + " ELSE 0 END"
        // Counted range by range on both workers; only a count above zero looks for the first.
        let dangling = try scanInParallel(
            try ranges(of: SQLFragment("SELECT count(*), NULL FROM \(table) a WHERE (NOT \(written))"), cutBy: "a.rowid", of: table))
        guard dangling.contains(where: { $0.count > 0 }) else { return }
        let source = try connection.scalar("SELECT a.source FROM \(table) a WHERE NOT \(written) ORDER BY a.rowid LIMIT 1")?.int64
        throw MigrationFailure.verification(
            "\(mapping.name): the association of source \(entry.sourceEntity) \(source.map(String.init) ?? "?") points at an object that was not written")
    }

    // MARK: Relationships

    /// Compares the links of one relationship mapping with the source's pairs carried through the
    /// associations: owner, target and, for ordered relationships, position. With `allowingMore`
    /// (policies also link through it), every expected link must be there, and others may be.
    private mutating func verifyRelationship(_ contribution: LinkContribution, allowingMore: Bool, sharedWith group: [LinkContribution] = []) throws {
        let (entry, relationship) = (contribution.entry, contribution.relationship)
        let (expected, actual) = linkListings(contribution)
        let name = "\(entry.entityMapping.name).\(relationship.name)"
        if !allowingMore {
            let (want, have) = try compare(expected, actual)
            guard want != have else {
                countLinks(name, Int(have.count), sharedWith: group)
                return
            }
        }
        /// The first link of `links` that `others` lacks, on its statement's row; nil when none.
        func firstLink(of links: String, notIn others: String) throws -> Statement? {
            let columns = "owner, target, position, inverse_position"
            let statement = try connection.prepare("SELECT \(columns) FROM (\(links)) EXCEPT SELECT \(columns) FROM (\(others)) ORDER BY 1, 2 LIMIT 1")
            return try statement.step() ? statement : nil
        }
        if let missing = try firstLink(of: expected.listed, notIn: actual.listed) {
            let owner = missing.row.int64(at: 0)
            throw MigrationFailure.verification(
                "\(name): the link of source \(entry.sourceEntity) \(try sourceKey(of: owner, entry)) (destination \(owner)) to destination \(relationship.destination) \(missing.row.int64(at: 1))\(positions(missing.row)) is missing"
            )
        }
        guard !allowingMore else { return }
        if let extra = try firstLink(of: actual.listed, notIn: expected.listed) {
            let owner = extra.row.int64(at: 0)
            throw MigrationFailure.verification(
                "\(name): destination \(entry.destinationEntity) \(owner) (source \(try sourceKey(of: owner, entry))) links to \(relationship.destination) \(extra.row.int64(at: 1))\(positions(extra.row)), which the source does not"
            )
        }
        throw MigrationFailure.verification("\(name): links are duplicated in the destination")
    }

    /// " at position N" (and " among the target's at M") for a message.
    private func positions(_ row: Row) -> String {
        (row.value(at: 2).int64.map { " at position \($0)" } ?? "") + (row.value(at: 3).int64.map { " (position \($0) among its target's)" } ?? "")
    }

    /// Whether the relationship's inverse is an ordered to-many in the destination.
    private func isInverseOrdered(_ relationship: Relationship) -> Bool {
        relationship.inverse.flatMap { inverse in step.destination.allRelationships(of: relationship.destination).first { $0.name == inverse } }?.isOrdered
            == true
    }

    /// For a list whose order keys may be compared as they are — an ordered relationship stored
    /// in its targets' rows or a join table with an order column of its own, no ordered inverse,
    /// no matching of one-to-ones — whether its source relationship keeps order keys, and the
    /// list's targets; nil for any other relationship.
    private func orderKeysSource(_ contribution: LinkContribution) -> (sourceOrdered: Bool, targets: [PlannedMapping])? {
        let (entry, relationship) = (contribution.entry, contribution.relationship)
        guard relationship.isOrdered, !isInverseOrdered(relationship), contribution.storage.orderColumn != nil,
            !inputs.needsMatching(relationship, of: entry.destinationEntity)
        else { return nil }
        if case .foreignKey = contribution.storage { return nil }
        let (sourceName, targets) = inputs.targets(of: relationship, in: entry, throughPass: step.passes.count - 1)
        return (sourceLayout.storage(ofRelationship: sourceName, of: entry.sourceEntity)?.orderColumn != nil, targets)
    }

    /// Whether a contribution's list is written with the source's own order keys (`order_key` of
    /// `mappedPairs`), so that comparing the keys proves the positions: read from an ordered
    /// source relationship, its targets kept their keys (ties then break alike on both sides).
    private func keepsSourceOrderKeys(_ contribution: LinkContribution) -> Bool {
        guard let (sourceOrdered, targets) = orderKeysSource(contribution) else { return false }
        return sourceOrdered && targets.allSatisfy(\.keepsKeys)
    }

    /// Whether a contribution's list holds the order keys its own pairs number (`order_key` of
    /// `mappedPairs`: `row_number` over the source's links, so no two alike), and no other
    /// writer's: read from a source relationship without order keys (those are copied as they
    /// are, ties and NULLs included: `keepsSourceOrderKeys`), with its owners made in SQL (one
    /// per source object) and no policy linking through it, in a plan of one pass (after the
    /// last of several, the other side's links are written again, with their own idea of the
    /// order). Equal keys over the same links are then the same positions, and neither side
    /// sorts every link to rank it.
    private func numbersOwnOrderKeys(_ contribution: LinkContribution) -> Bool {
        guard !contribution.touchedByPolicy, !contribution.entry.runsInSwift, step.passes.count == 1,
            let (sourceOrdered, _) = orderKeysSource(contribution)
        else { return false }
        return !sourceOrdered
    }

    /// Whether a contribution's positions are compared by the order keys themselves.
    private func comparesOrderKeys(_ contribution: LinkContribution) -> Bool {
        keepsSourceOrderKeys(contribution) || numbersOwnOrderKeys(contribution)
    }

    /// The links the source says a relationship mapping makes, as `verifyRelationship` compares
    /// them. Positions: the target's among the owner's where the relationship is ordered, the
    /// owner's among the target's where its inverse is. A list written with the source's own
    /// order keys, or with keys numbered from its pairs alone, is compared by those keys: equal
    /// keys over the same links (with targets that kept their keys to break the source's ties
    /// alike) are the same positions, and a stricter check.
    private func expectedLinks(_ contribution: LinkContribution) -> LinkListing {
        let (entry, relationship, storage) = (contribution.entry, contribution.relationship, contribution.storage)
        let sourceKeys = keepsSourceOrderKeys(contribution)
        let pairs =
            sourceKeys
            ? inputs.mappedPairs(entry, relationship: relationship, storage: storage, throughPass: step.passes.count - 1, rankingOrder: false)
                ?? contribution.pairs
            : contribution.pairs
        return LinkListing(
            owner: "owner", target: "target",
            position: comparesOrderKeys(contribution) ? .value("order_key") : relationship.isOrdered ? .rank(partition: "owner", keys: ["ord"]) : .null,
            inversePosition: isInverseOrdered(relationship) ? .rank(partition: "target", keys: ["inverse_ord", "owner"]) : .null, rows: "(\(pairs))")
    }

    /// What the source says of a relationship mapping's links, and what the store holds.
    private func linkListings(_ contribution: LinkContribution) -> (expected: LinkListing, actual: LinkListing) {
        let (entry, relationship) = (contribution.entry, contribution.relationship)
        return (
            expectedLinks(contribution),
            actualLinks(
                relationship, of: entry, storage: contribution.storage, inverseOrdered: isInverseOrdered(relationship),
                rawOrder: comparesOrderKeys(contribution))
        )
    }

    /// The one side of a storage every writer agrees on that its links are compared through:
    /// the one whose order keys are compared as they are, without ranking every link on either
    /// side.
    private func comparedSide(of group: [LinkContribution]) -> LinkContribution {
        group.first(where: keepsSourceOrderKeys) ?? group.first(where: numbersOwnOrderKeys) ?? group[0]
    }

    /// The destination's links of `relationship` held by the entry's objects, wherever the
    /// layout stores them (with `rawOrder`, the list's order keys themselves in place of
    /// positions).
    private func actualLinks(_ relationship: Relationship, of entry: PlannedMapping, storage: RelationshipStorage, inverseOrdered: Bool, rawOrder: Bool = false)
        -> LinkListing
    {
        let owner = destinationLayout.entities[entry.destinationEntity]!
        let ownerTable = quoteIdentifier(owner.table)
        let ownedBy: (String) -> String = { [self] key in
            // The owners listed once (SQLite builds their index once), not looked up per link.
            soleWriter(entry) ? "1" : "\(key) IN (SELECT d.\"Z_PK\" FROM \(ownerTable) d WHERE \(inputs.created(entry)))"
        }
        /// The place among `partition`'s links, by the order column where there is one, then `tie`.
        let rank: (Bool, String, String?, String) -> LinkListing.Position = { wanted, partition, order, tie in
            wanted ? .rank(partition: partition, keys: (order.map { [$0] } ?? []) + [tie]) : .null
        }
        switch storage {
        case .foreignKey(let column):
            let key = "d.\(quoteIdentifier(column))"
            return LinkListing(
                owner: "d.\"Z_PK\"", target: key, position: .null,
                inversePosition: rank(inverseOrdered, key, owner.orderColumns[relationship.name].map { "d.\(quoteIdentifier($0))" }, "d.\"Z_PK\""),
                rows: "\(ownerTable) d WHERE \(key) IS NOT NULL AND \(objectsCondition(entry))")
        case .inverseForeignKey(let table, let column, let orderColumn), .hiddenKey(let table, let column, let orderColumn):
            let key = "t.\(quoteIdentifier(column))"
            let targets = step.destination.descendants(of: relationship.destination).compactMap { destinationLayout.entities[$0.name]?.number }
            let order = orderColumn.map { "t.\(quoteIdentifier($0))" }
            return LinkListing(
                owner: key, target: "t.\"Z_PK\"",
                position: rawOrder ? order.map { .value($0) } ?? .null : rank(relationship.isOrdered, key, order, "t.\"Z_PK\""), inversePosition: .null,
                rows:
                    "\(quoteIdentifier(table)) t WHERE \(key) IS NOT NULL AND t.\"Z_ENT\" IN (\(targets.map(String.init).joined(separator: ", "))) AND \(ownedBy(key))"
            )
        case .joinTable(let table, let own, let destination, let orderColumn):
            let (ownKey, targetKey) = ("j.\(quoteIdentifier(own))", "j.\(quoteIdentifier(destination))")
            let inverseOrder = destinationLayout.inverseOrderColumn(ofRelationship: relationship.name, of: entry.destinationEntity)
            let order = orderColumn.map { "j.\(quoteIdentifier($0))" }
            return LinkListing(
                owner: ownKey, target: targetKey,
                position: rawOrder ? order.map { .value($0) } ?? .null : rank(relationship.isOrdered, ownKey, order, targetKey),
                inversePosition: rank(inverseOrdered, targetKey, inverseOrder.map { "j.\(quoteIdentifier($0))" }, ownKey),
                rows: "\(quoteIdentifier(table)) j WHERE \(ownedBy(ownKey))")
        }
    }

    /// The source key an entry made a destination object from, to name it in a message.
    private func sourceKey(of destination: Int64, _ entry: PlannedMapping) throws -> Int64 {
        guard !entry.keepsKeys else { return destination }
        return try connection.scalar("SELECT source FROM \(quoteIdentifier(entry.table)) WHERE destination = ? ORDER BY source LIMIT 1", destination)?.int64
            ?? destination
    }
}
