import Tern
import Foundation
import TernSQLite

/// Fills a new store of a model version with synthetic objects: the same seed always gives the
/// same rows.
///
/// Every concrete entity gets the same number of objects. To-one relationships point at random
/// destinations with a skewed fan-out (a few owners get many children, most get a few), honouring
/// minimum counts of the inverse to-many; one-to-one relationships pair objects; many-to-many and
/// inverse-less to-many relationships get 0–3 destinations each; ordered relationships get Core
/// Data's sparse sort keys (2048, 3072, …).
public enum DataGenerator {
    /// What one `generate` call wrote, and how fast.
    public struct Report: Sendable {
        /// Objects per entity, by name.
        public var objects: [String: Int]
        /// Links written to join tables and hidden keys.
        public var links: Int
        /// Wall-clock time the generation took, by the monotonic clock.
        public var duration: Duration

        /// Object rows and join-table rows together.
        public var totalRows: Int { objects.values.reduce(0, +) + links }
        /// `totalRows` over `duration`; 0 when no time was measured.
        public var rowsPerSecond: Double {
            duration.seconds > 0 ? Double(totalRows) / duration.seconds : 0
        }

        /// One line for people: objects, join rows, time and rate.
        public var summary: String {
            "\(objects.values.reduce(0, +)) objects in \(objects.count) entities and \(links) join rows in \(String(format: "%.2f", duration.seconds)) s (\(Int(rowsPerSecond)) rows/s)"
        }
    }

    /// Creates the store at `path` for `model` with `rows` objects per concrete entity, or as many
    /// as `counts` says for the entities it names (a benchmark's 3 pages per book).
    public static func generate(model: ObjectModel, at path: String, rows: Int, counts: [String: Int] = [:], seed: UInt64) throws -> Report {
        for name in counts.keys where model.entity(named: name) == nil {
            throw TernError(.badInput, "no entity \(name) in \(model.versionName) (entities: \(model.entities.map(\.name).sorted().joined(separator: ", ")))")
        }
        let started = ContinuousClock.now
        let connection = try StoreFile.create(at: path, model: model)
        let layout = StoreLayout(model: model)
        let writer = try ObjectWriter(connection: connection, layout: layout)
        var rng = SplitMix64(seed: seed)
        let concrete = model.entitiesInStoreOrder.filter { !$0.isAbstract }
        let objects = Dictionary(uniqueKeysWithValues: concrete.map { ($0.name, counts[$0.name] ?? rows) })

        // Keys are reserved up front, so relationships can point at objects not yet written.
        var firstKeys: [String: Int64] = [:]
        for entity in concrete {
            firstKeys[entity.name] = try writer.reserveKeys(for: entity.name, count: objects[entity.name]!)
        }
        let targets = Targets(model: model, firstKeys: firstKeys, rows: objects)
        // Values of attributes that allow external storage go, some of them, to files beside it.
        let externalFolder =
            model.entities.contains { $0.attributes.contains(where: \.allowsExternalStorage) }
            ? ExternalBinaryData.folder(forStore: path) : nil
        if let externalFolder {
            do {
                try FileManager.default.createDirectory(atPath: externalFolder, withIntermediateDirectories: true)
            } catch {
                throw TernError(.io, "cannot create the folder for external data: \(error.localizedDescription)", path: externalFolder)
            }
        }

        var links = 0
        do {
            try connection.transaction(.immediate) {
                // Sort keys per ordered list, shared by every entity whose objects join the list
                // (subentities of one destination), so no list holds one key twice.
                var orders: [String: [Int64: Int64]] = [:]
                for entity in concrete {
                    try writeObjects(
                        of: entity, rows: objects[entity.name]!, model: model, layout: layout, writer: writer, targets: targets,
                        externalFolder: externalFolder, orders: &orders, rng: &rng)
                }
                for join in layout.joinTables {
                    links += try writeLinks(join, model: model, writer: writer, targets: targets, rng: &rng)
                }
                for owner in model.entities {
                    for relationship in owner.relationships where relationship.isToMany && !relationship.isTransient && relationship.inverse == nil {
                        links += try writeHiddenLinks(relationship, of: owner.name, writer: writer, targets: targets, rng: &rng)
                    }
                }
                try writer.finish()
            }
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            try connection.close()
        } catch let error as SQLiteError {
            throw TernError(.io, "generating failed: \(error)", path: path)
        }
        return Report(
            objects: objects, links: links,
            duration: ContinuousClock.now - started)
    }

    private static func writeObjects(
        of entity: Entity, rows: Int, model: ObjectModel, layout: StoreLayout,
        writer: ObjectWriter, targets: Targets, externalFolder: String?, orders: inout [String: [Int64: Int64]], rng: inout SplitMix64
    ) throws {
        let entityLayout = layout.entities[entity.name]!
        let attributes = model.allAttributes(of: entity.name)
        let unique = Set(model.lineage(of: entity.name).flatMap(\.uniquenessConstraints).flatMap { $0 })
        let relationships = model.allRelationships(of: entity.name).filter { entityLayout.foreignKeyColumns[$0.name] != nil }
        var plans = relationships.map { SlotPlan($0, of: entity.name, model: model, targets: targets) }
        // Each column's source, resolved once: an attribute's synthesizer or a relationship's index.
        enum Slot { case attribute(ValueSynthesizer), key(Int), entityNumber(Int), order(Int) }
        let slots: [Slot] = try writer.insertColumns(for: entity.name).map { column in
            if let attribute = attributes.first(where: { entityLayout.attributeColumns[$0.name] == column }) {
                return .attribute(ValueSynthesizer(attribute, unique: unique.contains(attribute.name), externalFolder: externalFolder))
            }
            for (index, relationship) in relationships.enumerated() {
                if entityLayout.foreignKeyColumns[relationship.name] == column { return .key(index) }
                if entityLayout.entityColumns[relationship.name] == column { return .entityNumber(index) }
                if entityLayout.orderColumns[relationship.name] == column { return .order(index) }
            }
            preconditionFailure("column \(column) of \(entity.name) has no source")
        }

        let first = targets.firstKeys[entity.name]!
        var values = [SQLiteValue](repeating: .null, count: slots.count)
        var chosen = [Target?](repeating: nil, count: relationships.count)
        // Rows go to the writer a thousand at a time, which inserts several per statement.
        var keys: [Int64] = []
        var pending: [SQLiteValue] = []
        func insertPending() throws {
            try writer.insert(entity.name, keys: keys[...], values: pending[...])
            keys.removeAll(keepingCapacity: true)
            pending.removeAll(keepingCapacity: true)
        }
        for row in 0..<rows {
            for index in plans.indices {
                chosen[index] = plans[index].pick(row: row, using: &rng)
            }
            for (index, slot) in slots.enumerated() {
                switch slot {
                case .attribute(let synthesizer):
                    values[index] = try synthesizer.value(key: first + Int64(row), using: &rng)
                case .key(let relationship):
                    values[index] = chosen[relationship].map { .integer($0.key) } ?? .null
                case .entityNumber(let relationship):
                    values[index] = chosen[relationship].map { .integer(Int64($0.entityNumber)) } ?? .null
                case .order(let relationship):
                    values[index] =
                        chosen[relationship].map { target in
                            let list = "\(entityLayout.table).\(entityLayout.orderColumns[relationships[relationship].name]!)"
                            let order = orders[list, default: [:]][target.key, default: 2048]
                            orders[list, default: [:]][target.key] = order + 1024
                            return .integer(order)
                        } ?? .null
                }
            }
            keys.append(first + Int64(row))
            pending += values
            if keys.count == 1_000 { try insertPending() }
        }
        try insertPending()
    }

    private static func writeLinks(_ join: StoreLayout.JoinTable, model: ObjectModel, writer: ObjectWriter, targets: Targets, rng: inout SplitMix64) throws
        -> Int
    {
        let relationship = model.allRelationships(of: join.entity).first { $0.name == join.relationship }!
        var count = 0
        var inverseOrders: [Int64: Int64] = [:]
        for owner in targets.concreteEntities(under: join.entity) {
            let first = targets.firstKeys[owner.name]!
            for row in 0..<targets.rows[owner.name, default: 0] {
                let wanted = Int.random(in: max(relationship.minCount, 0)...max(relationship.minCount, 3), using: &rng)
                var seen: Set<Int64> = []
                for position in 0..<wanted {
                    guard let destination = targets.random(relationship.destination, using: &rng), seen.insert(destination.key).inserted else { continue }
                    var inverseOrder: Int64?
                    if join.inverseOrderColumn != nil {
                        inverseOrder = inverseOrders[destination.key, default: 2048]
                        inverseOrders[destination.key] = inverseOrder! + 1024
                    }
                    try writer.link(
                        join.entity, join.relationship, owner: first + Int64(row), destination: destination.key,
                        order: Int64(2048 + 1024 * position), inverseOrder: inverseOrder)
                    count += 1
                }
            }
        }
        return count
    }
}

extension DataGenerator {
    /// Links of a to-many with no inverse, kept in the destinations' rows: 0–3 destinations per
    /// owner (its minimum count if larger), each destination taken by one owner at most.
    fileprivate static func writeHiddenLinks(
        _ relationship: Relationship, of entity: String, writer: ObjectWriter, targets: Targets,
        rng: inout SplitMix64
    ) throws -> Int {
        var taken: Set<Int64> = []
        var count = 0
        for owner in targets.concreteEntities(under: entity) {
            let first = targets.firstKeys[owner.name]!
            for row in 0..<targets.rows[owner.name, default: 0] {
                let wanted = Int.random(in: max(relationship.minCount, 0)...max(relationship.minCount, 3), using: &rng)
                for position in 0..<wanted {
                    guard let destination = targets.random(relationship.destination, using: &rng), taken.insert(destination.key).inserted else { continue }
                    try writer.link(entity, relationship.name, owner: first + Int64(row), destination: destination.key, order: Int64(2048 + 1024 * position))
                    count += 1
                }
            }
        }
        return count
    }
}

/// A chosen destination object.
struct Target {
    var key: Int64
    var entityNumber: Int
}

/// The objects a relationship can point at: every concrete entity under its destination.
struct Targets {
    let model: ObjectModel
    let firstKeys: [String: Int64]
    /// Objects per concrete entity.
    let rows: [String: Int]
    /// Destination entity → the first key, entity number and object count of each concrete
    /// entity under it.
    private let ranges: [String: [KeyRange]]

    init(model: ObjectModel, firstKeys: [String: Int64], rows: [String: Int]) {
        self.model = model
        self.firstKeys = firstKeys
        self.rows = rows
        let numbers = model.entityNumbers
        var ranges: [String: [KeyRange]] = [:]
        for entity in model.entities {
            ranges[entity.name] = model.descendants(of: entity.name).filter { !$0.isAbstract }
                .map { KeyRange(firstKey: firstKeys[$0.name]!, entityNumber: numbers[$0.name]!, count: rows[$0.name, default: 0]) }
        }
        self.ranges = ranges
    }

    func concreteEntities(under name: String) -> [Entity] {
        model.descendants(of: name).filter { !$0.isAbstract }
    }

    func count(_ destination: String) -> Int {
        (ranges[destination] ?? []).reduce(0) { $0 + $1.count }
    }

    /// The key ranges under `destination`, for callers that pick many times.
    func ranges(under destination: String) -> [KeyRange] {
        ranges[destination] ?? []
    }

    func random(_ destination: String, using rng: inout SplitMix64) -> Target? {
        Self.object(in: ranges(under: destination), index: Int.random(in: 0..<max(count(destination), 1), using: &rng))
    }

    /// The `index`-th object (0-based) across `ranges`, one after the other.
    static func object(in ranges: [KeyRange], index: Int) -> Target? {
        guard index >= 0 else { return nil }
        var rest = index
        for range in ranges {
            if rest < range.count { return Target(key: range.firstKey + Int64(rest), entityNumber: range.entityNumber) }
            rest -= range.count
        }
        return nil
    }
}

/// The keys of one concrete entity's objects.
struct KeyRange {
    var firstKey: Int64
    var entityNumber: Int
    var count: Int
}

/// How one to-one relationship picks its destination for each object.
struct SlotPlan {
    private let relationship: Relationship
    private let ranges: [KeyRange]
    private let total: Int
    private let isOneToOne: Bool
    /// For a one-to-one: the index of this entity's first object among its tree's.
    private let ownerOffset: Int
    /// Objects that must each get children first, to honour the inverse's minimum count.
    private let guaranteed: Int

    init(_ relationship: Relationship, of entity: String, model: ObjectModel, targets: Targets) {
        self.relationship = relationship
        ranges = targets.ranges(under: relationship.destination)
        total = targets.count(relationship.destination)
        let inverse = relationship.inverse.flatMap { name in model.allRelationships(of: relationship.destination).first { $0.name == name } }
        isOneToOne = inverse.map { !$0.isToMany } ?? false
        guaranteed = (inverse?.isToMany == true ? inverse!.minCount : 0) * targets.count(relationship.destination)
        // A one-to-one pairs the n-th object of one tree with the n-th of the other, counted
        // across subentities the same way from both sides, so both foreign keys agree.
        if isOneToOne, let inverse {
            let own = targets.ranges(under: entity).first?.entityNumber
            ownerOffset = targets.ranges(under: inverse.destination).prefix { $0.entityNumber != own }.reduce(0) { $0 + $1.count }
        } else {
            ownerOffset = 0
        }
    }

    /// The destination for object `row`, or nil for none.
    mutating func pick(row: Int, using rng: inout SplitMix64) -> Target? {
        guard total > 0 else { return nil }
        if isOneToOne {
            return row + ownerOffset < total ? Targets.object(in: ranges, index: row + ownerOffset) : nil
        }
        if row < guaranteed {
            return Targets.object(in: ranges, index: row % total)
        }
        if relationship.isOptional, Double.random(in: 0..<1, using: &rng) < 0.1 {
            return nil
        }
        // Skewed fan-out: squaring a uniform number favours low indexes.
        let u = Double.random(in: 0..<1, using: &rng)
        return Targets.object(in: ranges, index: min(total - 1, Int(u * u * Double(total))))
    }

}
