import Foundation
import TernSQLite

/// Data an inferred step throws away: a source entity no destination entity comes from, an
/// attribute or to-one relationship of a mapped entity no destination property reads. Removing
/// a property from a model is how one drops it in Core Data too, but a user should see what it
/// costs, in values, before and after (`tern plan`, the summary) and may refuse it
/// (`--no-data-loss`).
///
/// Only inferred steps: a mapping model someone wrote says what it leaves out. Links held only
/// in a join table (many-to-many) are not counted.
public struct DroppedData: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The source entity the dropped data belongs to.
    public var entity: String
    /// The attribute or relationship; nil when the whole entity is dropped.
    public var property: String?
    /// Non-NULL values (objects, for an entity) in the step's input store; nil when not counted.
    public var values: Int?

    public var description: String {
        let what = property.map { "\(entity).\($0)" } ?? "entity \(entity)"
        guard let values else { return what }
        return property == nil ? "\(what): \(values) object\(values == 1 ? "" : "s")" : "\(what): \(values) non-NULL value\(values == 1 ? "" : "s")"
    }
}

enum DataLoss {
    /// What `step` drops, not counted yet.
    static func dropped(by step: MigrationStep) -> [DroppedData] {
        guard step.isInferred else { return [] }
        // A mapping without a destination (Core Data's "remove" mapping) drops its entity too.
        let mappings = step.passes.flatMap { $0.entities.map(\.mapping) }.filter { $0.destinationEntity != nil }
        let mapped = Set(mappings.compactMap(\.sourceEntity))
        var dropped = step.source.entitiesInStoreOrder.filter { !$0.isAbstract && !mapped.contains($0.name) }
            .map { DroppedData(entity: $0.name, property: nil, values: nil) }
        // Source entity → the keys its mappings read.
        var read: [String: Set<String>] = [:]
        for mapping in mappings {
            if let entity = mapping.sourceEntity { read[entity, default: []].formUnion(readKeys(of: mapping)) }
        }
        // A link survives when either end of it is read: a to-one is lost only if its inverse is too.
        let isRead = { (entity: String, key: String) in
            ([entity] + step.source.descendants(of: entity).map(\.name)).contains { (read[$0] ?? []).contains(key) }
        }
        for entity in read.keys.sorted() {
            dropped += step.source.allAttributes(of: entity).filter { !$0.isTransient && !read[entity]!.contains($0.name) }
                .map { DroppedData(entity: entity, property: $0.name, values: nil) }
            dropped += step.source.allRelationships(of: entity).filter { relationship in
                !relationship.isTransient && !relationship.isToMany && !read[entity]!.contains(relationship.name)
                    && !(relationship.inverse.map { isRead(relationship.destination, $0) } ?? false)
            }.map { DroppedData(entity: entity, property: $0.name, values: nil) }
        }
        return dropped
    }

    /// `dropped` with each element's non-NULL values counted in `store`, the step's input;
    /// elements that hold nothing are left out.
    static func count(_ dropped: [DroppedData], of step: MigrationStep, in store: String) throws -> [DroppedData] {
        guard !dropped.isEmpty else { return [] }
        let layout = StoreLayout(model: step.source)
        let source = try ReadOnlyStore(path: store)
        let connection = try source.connect()
        return try dropped.compactMap { element in
            guard let entity = layout.entities[element.entity] else { return nil }
            var condition = "Z_ENT = \(entity.number)"
            if let property = element.property {
                guard let column = entity.attributeColumns[property] ?? entity.foreignKeyColumns[property] else { return nil }
                condition += " AND \(quoteIdentifier(column)) IS NOT NULL"
            }
            let values = try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(entity.table)) WHERE \(condition)")?.int64 ?? 0
            return values > 0 ? DroppedData(entity: element.entity, property: element.property, values: Int(values)) : nil
        }
    }

    /// The source keys a mapping's value expressions read (`$source.KEY`, first key of a path).
    private static func readKeys(of mapping: EntityMapping) -> Set<String> {
        let expressions = (mapping.attributeMappings + mapping.relationshipMappings).compactMap(\.valueExpression)
        var keys: Set<String> = []
        for expression in expressions {
            var rest = Substring(expression)
            while let range = rest.range(of: "$source.") {
                rest = rest[range.upperBound...]
                keys.insert(String(rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" }))
            }
        }
        return keys
    }
}
