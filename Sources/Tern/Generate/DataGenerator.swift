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
    public struct Report: Sendable {
        /// Objects per entity, by name.
        public var objects: [String: Int]
        /// Join-table rows written.
        public var links: Int
        public var duration: Duration

        public var totalRows: Int { objects.values.reduce(0, +) + links }
        public var rowsPerSecond: Double {
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            return seconds > 0 ? Double(totalRows) / seconds : 0
        }
    }

    /// Creates the store at `path` for `model` with `rows` objects per concrete entity.
    public static func generate(model: ObjectModel, at path: String, rows: Int, seed: UInt64) throws -> Report {
        let started = ContinuousClock.now
        let connection = try StoreFile.create(at: path, model: model)
        let layout = StoreLayout(model: model)
        let writer = try ObjectWriter(connection: connection, layout: layout)
        var rng = SplitMix64(seed: seed)
        let concrete = model.entitiesInStoreOrder.filter { !$0.isAbstract }

        // Keys are reserved up front, so relationships can point at objects not yet written.
        var firstKeys: [String: Int64] = [:]
        for entity in concrete {
            firstKeys[entity.name] = try writer.reserveKeys(for: entity.name, count: rows)
        }
        let targets = Targets(model: model, firstKeys: firstKeys, rows: rows)

        var links = 0
        do {
            try connection.transaction(.immediate) {
                for entity in concrete {
                    try writeObjects(of: entity, rows: rows, model: model, layout: layout, writer: writer, targets: targets, rng: &rng)
                }
                for join in layout.joinTables {
                    links += try writeLinks(join, model: model, writer: writer, targets: targets, rng: &rng)
                }
                try writer.finish()
            }
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            try connection.close()
        } catch let error as SQLiteError {
            throw TernError(.io, "generating failed: \(error)", path: path)
        }
        return Report(objects: Dictionary(uniqueKeysWithValues: concrete.map { ($0.name, rows) }), links: links,
                      duration: ContinuousClock.now - started)
    }

    private static func writeObjects(
        of entity: Entity, rows: Int, model: ObjectModel, layout: StoreLayout,
        writer: ObjectWriter, targets: Targets, rng: inout SplitMix64
    ) throws {
        let entityLayout = layout.entities[entity.name]!
        let attributes = model.allAttributes(of: entity.name)
        let unique = Set(model.lineage(of: entity.name).flatMap(\.uniquenessConstraints).flatMap { $0 })
        let relationships = model.allRelationships(of: entity.name).filter { entityLayout.foreignKeyColumns[$0.name] != nil }
        var plans: [String: SlotPlan] = [:]
        for relationship in relationships {
            plans[relationship.name] = SlotPlan(relationship, of: entity.name, model: model, targets: targets)
        }
        let columns = try writer.insertColumns(for: entity.name)
        enum Slot { case attribute(Attribute), key(String), entityNumber(String), order(String) }
        let slots: [Slot] = columns.map { column in
            if let attribute = attributes.first(where: { entityLayout.attributeColumns[$0.name] == column }) { return .attribute(attribute) }
            if let name = entityLayout.foreignKeyColumns.first(where: { $0.value == column })?.key { return .key(name) }
            if let name = entityLayout.entityColumns.first(where: { $0.value == column })?.key { return .entityNumber(name) }
            return .order(entityLayout.orderColumns.first { $0.value == column }!.key)
        }

        let first = targets.firstKeys[entity.name]!
        var values = [SQLiteValue](repeating: .null, count: columns.count)
        var chosen: [String: Target?] = [:]
        for row in 0..<rows {
            for relationship in relationships {
                chosen[relationship.name] = plans[relationship.name]!.pick(row: row, using: &rng)
            }
            for (index, slot) in slots.enumerated() {
                switch slot {
                case .attribute(let attribute):
                    values[index] = ValueSynthesizer.value(for: attribute, row: row, unique: unique.contains(attribute.name), using: &rng)
                case .key(let name):
                    values[index] = (chosen[name] ?? nil).map { .integer($0.key) } ?? .null
                case .entityNumber(let name):
                    values[index] = (chosen[name] ?? nil).map { .integer(Int64($0.entityNumber)) } ?? .null
                case .order(let name):
                    values[index] = (chosen[name] ?? nil).map { .integer(plans[name]!.nextOrder(for: $0.key)) } ?? .null
                }
            }
            try writer.insert(entity.name, key: first + Int64(row), values: values)
        }
    }

    private static func writeLinks(_ join: StoreLayout.JoinTable, model: ObjectModel, writer: ObjectWriter, targets: Targets, rng: inout SplitMix64) throws -> Int {
        let relationship = model.allRelationships(of: join.entity).first { $0.name == join.relationship }!
        var count = 0
        var inverseOrders: [Int64: Int64] = [:]
        for owner in targets.concreteEntities(under: join.entity) {
            let first = targets.firstKeys[owner.name]!
            for row in 0..<targets.rows {
                let wanted = Int.random(in: max(relationship.minCount, 0)...max(relationship.minCount, 3), using: &rng)
                var seen: Set<Int64> = []
                for position in 0..<wanted {
                    guard let destination = targets.random(relationship.destination, using: &rng), seen.insert(destination.key).inserted else { continue }
                    var inverseOrder: Int64?
                    if join.inverseOrderColumn != nil {
                        inverseOrder = inverseOrders[destination.key, default: 2048]
                        inverseOrders[destination.key] = inverseOrder! + 1024
                    }
                    try writer.link(join.entity, join.relationship, owner: first + Int64(row), destination: destination.key,
                                    order: Int64(2048 + 1024 * position), inverseOrder: inverseOrder)
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
    let rows: Int
    let numbers: [String: Int]

    init(model: ObjectModel, firstKeys: [String: Int64], rows: Int) {
        self.model = model
        self.firstKeys = firstKeys
        self.rows = rows
        numbers = model.entityNumbers
    }

    func concreteEntities(under name: String) -> [Entity] {
        model.descendants(of: name).filter { !$0.isAbstract }
    }

    func count(_ destination: String) -> Int {
        concreteEntities(under: destination).count * rows
    }

    /// The `index`-th object under `destination` (0-based), across its concrete entities.
    func object(_ destination: String, index: Int) -> Target? {
        let entities = concreteEntities(under: destination)
        guard rows > 0, index >= 0, index < entities.count * rows else { return nil }
        let entity = entities[index / rows]
        return Target(key: firstKeys[entity.name]! + Int64(index % rows), entityNumber: numbers[entity.name]!)
    }

    func random(_ destination: String, using rng: inout SplitMix64) -> Target? {
        let total = count(destination)
        guard total > 0 else { return nil }
        return object(destination, index: Int.random(in: 0..<total, using: &rng))
    }
}

/// How one to-one relationship picks its destination for each object.
struct SlotPlan {
    private let relationship: Relationship
    private let targets: Targets
    private let isOneToOne: Bool
    /// Objects that must each get children first, to honour the inverse's minimum count.
    private let guaranteed: Int
    private var orders: [Int64: Int64] = [:]

    init(_ relationship: Relationship, of entity: String, model: ObjectModel, targets: Targets) {
        self.relationship = relationship
        self.targets = targets
        let inverse = relationship.inverse.flatMap { name in model.allRelationships(of: relationship.destination).first { $0.name == name } }
        isOneToOne = inverse.map { !$0.isToMany } ?? false
        guaranteed = (inverse?.isToMany == true ? inverse!.minCount : 0) * targets.count(relationship.destination)
    }

    /// The destination for object `row`, or nil for none.
    mutating func pick(row: Int, using rng: inout SplitMix64) -> Target? {
        let total = targets.count(relationship.destination)
        guard total > 0 else { return nil }
        if isOneToOne {
            return row < total ? targets.object(relationship.destination, index: row) : nil
        }
        if row < guaranteed {
            return targets.object(relationship.destination, index: row % total)
        }
        if relationship.isOptional, Double.random(in: 0..<1, using: &rng) < 0.1 {
            return nil
        }
        // Skewed fan-out: squaring a uniform number favours low indexes.
        let u = Double.random(in: 0..<1, using: &rng)
        return targets.object(relationship.destination, index: min(total - 1, Int(u * u * Double(total))))
    }

    /// The next sparse sort key in the destination's ordered to-many.
    mutating func nextOrder(for key: Int64) -> Int64 {
        let order = orders[key, default: 2048]
        orders[key] = order + 1024
        return order
    }
}
