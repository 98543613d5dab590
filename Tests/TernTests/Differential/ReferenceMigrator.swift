import Foundation
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore
import TernSQLite

/// The slow, obvious migrator the engine is compared with: everything in memory, object by
/// object, written from Core Data's description of a migration and not from the engine's code.
/// It shares only the parsed mapping and the expression evaluator (proven against SQLite by the
/// expression differential tests) with the engine, and returns the destination's content in
/// `StoreContent`'s form.
///
/// What it does, per pass in order, per entity mapping in order: every source object of exactly
/// the mapping's source entity that passes the filter becomes one destination object whose
/// attributes are their value expressions (or defaults). Then every relationship mapping links
/// each destination object to the first object its target mapping made from each source target
/// (in any pass), in the source's order; a to-one keeps the first.
enum ReferenceMigrator {
    private struct SourceObject {
        var key: Int64
        var entity: String
        var values: [String: SQLiteValue]
    }

    private struct DestinationObject {
        var entity: String
        var values: [String: SQLiteValue]
        var sourceKey: Int64
        var sourceEntity: String
    }

    /// A value its attribute's type cannot hold (an Integer 64 past 2^63, a fraction): Core
    /// Data's validation refuses the migration, so the engine must too.
    struct ValueDoesNotFit: Error, CustomStringConvertible {
        var entity: String
        var attribute: String
        var value: SQLiteValue
        var description: String { "\(entity).\(attribute) = \(value) does not fit its type" }
    }

    /// Whether `value` is one `type` holds once its column's INTEGER affinity has converted it.
    private static func fits(_ value: SQLiteValue, _ type: AttributeType) -> Bool {
        let range: ClosedRange<Int64>
        switch type {
        case .integer16: range = -32768...32767
        case .integer32: range = -2147483648...2147483647
        case .integer64: range = .min ... .max
        case .boolean: range = 0...1
        default: return true
        }
        switch value {
        case .null: return true
        case .integer(let number): return range.contains(number)
        case .real(let number): return Int64(exactly: number).map(range.contains) ?? false
        default: return false
        }
    }

    private struct Pair: Hashable {
        var owner: Int
        var target: Int
    }

    static func content(source path: String, step: MigrationStep, scratch: String) throws -> [String: [String]] {
        let sourceModel = step.source
        let destinationModel = step.destination
        let connection = try Connection(path: path, configuration: .init(mode: .readOnly))
        let sourceLayout = StoreLayout(model: sourceModel)
        let reader = ObjectReader(connection: connection, layout: sourceLayout)

        // The source, whole: objects by entity, and each object's targets per relationship in order.
        var sourceObjects: [String: [SourceObject]] = [:]
        for entity in sourceModel.entities {
            // Values as the app reads them: from their files, without their markers.
            sourceObjects[entity.name] = try reader.objects(of: entity.name).map {
                SourceObject(key: $0.key, entity: entity.name, values: try CoreDataBinary.appValues($0.values, of: entity.name, in: sourceModel, store: path))
            }
        }
        func sourceTargets(_ object: SourceObject, _ relationship: String) throws -> [Int64] {
            guard let declared = sourceModel.allRelationships(of: object.entity).first(where: { $0.name == relationship }) else { return [] }
            if declared.isToMany { return try reader.destinations(object.entity, relationship, owner: object.key) }
            return object.values[relationship]?.int64.map { [$0] } ?? []
        }

        // Stage 1, object by object.
        var objects: [DestinationObject] = []
        /// Per pass and entity mapping: source key → index of the first object it made.
        var made: [(pass: Int, mapping: EntityMapping, byKey: [Int64: Int])] = []
        for (pass, mapping) in step.passes.enumerated() {
            for entity in mapping.entities {
                guard let sourceEntity = entity.mapping.sourceEntity, let destinationEntity = entity.mapping.destinationEntity else { continue }
                let filter = entity.filter.map { PredicateProgram($0) }
                var byKey: [Int64: Int] = [:]
                for object in sourceObjects[sourceEntity] ?? [] {
                    if let filter, try filter.evaluate(try inputs(filter: entity.filter!, of: object)) != true { continue }
                    var values: [String: SQLiteValue] = [:]
                    for attribute in destinationModel.allAttributes(of: destinationEntity) where !attribute.isTransient {
                        if let expression = entity.attributes[attribute.name] {
                            values[attribute.name] = try ExpressionProgram(expression).evaluate(try inputs(expression.inputs, of: object))
                            guard fits(values[attribute.name]!, attribute.type) else {
                                throw ValueDoesNotFit(entity: destinationEntity, attribute: attribute.name, value: values[attribute.name]!)
                            }
                        } else {
                            values[attribute.name] = attribute.defaultValue ?? .null
                        }
                    }
                    byKey[object.key] = objects.count
                    objects.append(DestinationObject(entity: destinationEntity, values: values, sourceKey: object.key, sourceEntity: sourceEntity))
                }
                made.append((pass, entity.mapping, byKey))
            }
        }

        // Stage 2: links. A relationship and its inverse are one set of links: every mapped side
        // adds its pairs to both (Core Data keeps inverses), so the set is the union of the sides.
        var links: [String: Set<Pair>] = [:]  // relationship name → (owner, target) pairs
        for (pass, mapping) in step.passes.enumerated() {
            for entity in mapping.entities {
                guard let sourceEntity = entity.mapping.sourceEntity, let destinationEntity = entity.mapping.destinationEntity,
                    let byKey = made.first(where: { $0.pass == pass && $0.mapping.name == entity.mapping.name })?.byKey
                else { continue }
                for (name, origin) in entity.relationships {
                    let relationship = destinationModel.allRelationships(of: destinationEntity).first { $0.name == name }!
                    // Targets: objects the named mapping made (in any pass),
                    // or any mapping of the source relationship's destination — only objects the
                    // destination relationship can hold.
                    let holdable = Set(destinationModel.descendants(of: relationship.destination).map(\.name))
                    let (sourceRelationship, candidates): (String, [[Int64: Int]])
                    switch origin {
                    case .entityMapping(let target, let via):
                        sourceRelationship = via
                        candidates = made.filter { $0.mapping.name == target && holdable.contains($0.mapping.destinationEntity!) }.map(\.byKey)
                    case .sourceRelationship(let via):
                        sourceRelationship = via
                        let targetEntity = sourceModel.allRelationships(of: sourceEntity).first { $0.name == via }!.destination
                        let covered = Set(sourceModel.descendants(of: targetEntity).map(\.name))
                        candidates = made.filter { covered.contains($0.mapping.sourceEntity!) && holdable.contains($0.mapping.destinationEntity!) }.map(\.byKey)
                    }
                    for object in sourceObjects[sourceEntity] ?? [] {
                        guard let owner = byKey[object.key] else { continue }
                        var targets = try sourceTargets(object, sourceRelationship).compactMap { key in candidates.lazy.compactMap { $0[key] }.first }
                        if !relationship.isToMany { targets = Array(targets.prefix(1)) }
                        for target in targets {
                            links[name, default: []].insert(Pair(owner: owner, target: target))
                            if let inverse = relationship.inverse { links[inverse, default: []].insert(Pair(owner: target, target: owner)) }
                        }
                    }
                }
            }
        }
        /// The objects `owner` reaches through `relationship`, in the order of the source
        /// relationship it came from (its position in the owner's source list), then by key.
        func linked(_ owner: Int, _ relationship: Relationship) throws -> [Int] {
            let targets = (links[relationship.name] ?? []).filter { $0.owner == owner }.map(\.target)
            let ownerSource = sourceObjects[objects[owner].sourceEntity]!.first { $0.key == objects[owner].sourceKey }!
            let list = relationship.isOrdered ? try sourceTargets(ownerSource, sourceName(of: relationship, in: ownerSource.entity) ?? relationship.name) : []
            return targets.sorted { a, b in
                let (pa, pb) = (list.firstIndex(of: objects[a].sourceKey) ?? Int.max, list.firstIndex(of: objects[b].sourceKey) ?? Int.max)
                return pa != pb ? pa < pb : objects[a].sourceKey < objects[b].sourceKey
            }
        }
        func sourceName(of relationship: Relationship, in sourceEntity: String) -> String? {
            sourceModel.allRelationships(of: sourceEntity).first { $0.name == relationship.renamingKey }?.name
        }

        // A derived `relationship.@count` holds how many objects the relationship reaches.
        for index in objects.indices {
            for attribute in destinationModel.allAttributes(of: objects[index].entity) {
                guard case .count(let name)? = attribute.derivation,
                    let relationship = destinationModel.allRelationships(of: objects[index].entity).first(where: { $0.name == name })
                else { continue }
                objects[index].values[attribute.name] = .integer(Int64(try linked(index, relationship).count))
            }
        }

        // Values as the destination's columns store them: written to a scratch store, read back.
        let store = try StoreFile.create(at: scratch, model: destinationModel)
        let layout = StoreLayout(model: destinationModel)
        let writer = try ObjectWriter(connection: store, layout: layout)
        var keys: [Int64] = []
        try store.transaction(.immediate) {
            for object in objects {
                let attributes = object.values.filter { name, _ in destinationModel.allAttributes(of: object.entity).contains { $0.name == name } }
                keys.append(try writer.insert(object.entity, attributes))
            }
            try writer.finish(derivingValues: false)  // its links are not in the scratch store
        }
        let stored = ObjectReader(connection: store, layout: layout)
        var byEntity: StoreContent.Objects = [:]
        var index: [String: [Int64: Int]] = [:]  // table → key → object index
        for (number, key) in keys.enumerated() {
            index[layout.entities[objects[number].entity]!.table, default: [:]][key] = number
        }
        for entity in destinationModel.entities {
            byEntity[entity.name] = try stored.objects(of: entity.name).map {
                ($0.key, $0.values.filter { name, _ in destinationModel.allAttributes(of: entity.name).contains { $0.name == name } })
            }
        }
        return try StoreContent.render(model: destinationModel, objects: byEntity, table: { layout.entities[$0]!.table }) { entity, name, key in
            let owner = index[layout.entities[entity]!.table]![key]!
            let relationship = destinationModel.allRelationships(of: entity).first { $0.name == name }!
            return try linked(owner, relationship).map { keys[$0] }
        }
    }

    /// The values an expression reads from a source object (own attributes only: the generated
    /// mappings read no key paths).
    private static func inputs(_ inputs: [Input], of object: SourceObject) throws -> [SQLiteValue] {
        try inputs.map { input in
            guard input.relationships.isEmpty, case .attribute(let name) = input.final else {
                throw TernError(.badInput, "the reference migrator reads own attributes only, not \(input)")
            }
            return object.values[name] ?? .null
        }
    }

    private static func inputs(filter: CompiledPredicate, of object: SourceObject) throws -> [SQLiteValue] {
        try inputs(filter.inputs, of: object)
    }
}
