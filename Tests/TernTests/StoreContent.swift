import Tern
import TernSQLite

/// A store's content without its keys: every object as its entity and attribute values, and every
/// relationship as (owner, target) renderings, so two stores whose objects got different `Z_PK`s
/// compare equal exactly when they hold the same objects linked the same way.
enum StoreContent {
    /// Lines per entity ("objects") and per relationship, each list sorted (ordered relationships
    /// keep their order inside a line).
    static func dump(_ path: String, model: ObjectModel) throws -> [String: [String]] {
        let connection = try Connection(path: path, configuration: .init(mode: .readOnly))
        let layout = StoreLayout(model: model)
        let reader = ObjectReader(connection: connection, layout: layout)
        var rendering: [String: [Int64: String]] = [:]  // root table → key → rendering
        var objects: [String: [StoredObject]] = [:]
        for entity in model.entities {
            let found = try reader.objects(of: entity.name)
            objects[entity.name] = found
            let attributes = model.allAttributes(of: entity.name).filter { !$0.isTransient }.map(\.name)
            for object in found {
                let text = "\(entity.name)(" + attributes.map { "\($0)=\(object.values[$0]?.sqlLiteral ?? "?")" }.joined(separator: ", ") + ")"
                rendering[layout.entities[entity.name]!.table, default: [:]][object.key] = text
            }
        }
        func render(_ key: Int64?, in entity: String) -> String {
            guard let key else { return "nil" }
            return rendering[layout.entities[entity]!.table]?[key] ?? "dangling \(entity) \(key)"
        }
        var content: [String: [String]] = [:]
        for entity in model.entities {
            let own = objects[entity.name]!
            content["objects \(entity.name)"] = own.map { render($0.key, in: entity.name) }.sorted()
            for relationship in model.allRelationships(of: entity.name) where !relationship.isTransient {
                var lines: [String] = []
                for object in own {
                    let owner = render(object.key, in: entity.name)
                    if relationship.isToMany {
                        var targets = try reader.destinations(entity.name, relationship.name, owner: object.key).map { render($0, in: relationship.destination) }
                        if !relationship.isOrdered { targets.sort() }
                        if !targets.isEmpty { lines.append("\(owner) → [\(targets.joined(separator: "; "))]") }
                    } else if let key = object.values[relationship.name]?.int64 {
                        lines.append("\(owner) → \(render(key, in: relationship.destination))")
                    }
                }
                content["\(entity.name).\(relationship.name)"] = lines.sorted()
            }
        }
        return content
    }
}
