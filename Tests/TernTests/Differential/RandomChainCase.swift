import Foundation
@testable import Tern
@testable import TernMapping
@testable import TernModel
@testable import TernStore
import TernGenerate

/// A generated chain of model versions that lightweight migration can infer step by step,
/// written as Tern's YAML files: each version renames, adds and drops entities, attributes and
/// relationships, makes attributes optional or required (with a default), widens numbers, makes
/// to-many relationships ordered or unordered, to-ones to-many and back, points relationships at
/// the subentity of their destination or at its parent, and drops entities and adds them again
/// by the same name — the changes `StepComposition` must follow through every step. The same
/// seed writes the same files.
struct RandomChainCase {
    let directory: URL
    let versions: Int
    /// What each version changed, in words, for failure messages.
    let summary: String

    private struct Attribute {
        var type: String
        var optional: Bool
        var defaultValue: String?
        var renamedFrom: String?
    }

    private struct Relationship {
        var destination: String
        var toMany: Bool
        var ordered: Bool
        var inverse: String?
        var renamedFrom: String?
    }

    private struct Entity {
        var parent: String?
        var renamedFrom: String?
        var attributes: [String: Attribute] = [:]
        var relationships: [String: Relationship] = [:]
    }

    private static let defaults = [
        "integer16": "7", "integer32": "-3", "integer64": "123456789012", "double": "2.5", "float": "0.5",
        "string": "none yet", "boolean": "YES", "date": "86400",
    ]
    /// Other defaults, so a value filled in by one version differs from a later version's default.
    private static let alternates = [
        "integer16": "-2", "integer32": "40000", "integer64": "-1", "double": "-0.25", "float": "8",
        "string": "filled", "boolean": "NO", "date": "-3600",
    ]
    private static let widenings = ["integer16": "integer32", "integer32": "integer64", "float": "double"]

    static func make(seed: UInt64, in directory: URL) throws -> RandomChainCase {
        var rng = SplitMix64(seed: seed)
        func chance(_ p: Double) -> Bool { Double(rng.next() % 10_000) / 10_000 < p }
        func pick<T>(_ items: [T]) -> T { items[Int(rng.next() % UInt64(items.count))] }
        var counter = 0
        func fresh(_ stem: String) -> String { counter += 1; return "\(stem)\(counter)" }

        // Version 1: two to four entities with a few attributes, linked by relationships.
        var entities: [String: Entity] = [:]
        for name in ["Alpha", "Beta", "Gamma", "Delta"].prefix(2 + Int(rng.next() % 3)) {
            var entity = Entity()
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                let type = pick(Array(defaults.keys).sorted())
                let optional = chance(0.7)
                entity.attributes[fresh("a")] = Attribute(type: type, optional: optional, defaultValue: optional && chance(0.6) ? nil : defaults[type])
            }
            entities[name] = entity
        }
        // Sometimes a subentity: relationships to its parent hold its objects too.
        if chance(0.5) {
            var child = Entity(parent: pick(entities.keys.sorted()))
            child.attributes[fresh("a")] = Attribute(type: "string", optional: true)
            entities["Epsilon"] = child
        }
        var droppedEntities: [String] = []
        func addRelationship(_ entities: inout [String: Entity]) {
            let names = entities.keys.sorted()
            let owner = pick(names), target = pick(names)
            let name = fresh("r"), toMany = chance(0.6)
            var relationship = Relationship(destination: target, toMany: toMany, ordered: toMany && chance(0.3), inverse: nil)
            if chance(0.75) {
                let back = fresh("r")
                relationship.inverse = back
                let backToMany = chance(0.5)
                entities[target]!.relationships[back] = Relationship(destination: owner, toMany: backToMany, ordered: backToMany && chance(0.3), inverse: name)
            }
            entities[owner]!.relationships[name] = relationship
        }
        for _ in 0..<(1 + Int(rng.next() % 4)) { addRelationship(&entities) }

        var chain = [entities]
        var changes: [String] = []
        // The attribute changed last: changed again more often than chance would, so that one
        // attribute goes through several changes across the chain (added, then made required,
        // then optional, then required with another default…).
        var recent: (entity: String, attribute: String)?
        let count = 3 + Int(rng.next() % 2)
        for _ in 1..<count {
            var next = chain.last!
            for name in next.keys { next[name]!.renamedFrom = nil }
            for name in next.keys {
                for attribute in next[name]!.attributes.keys { next[name]!.attributes[attribute]!.renamedFrom = nil }
                for relationship in next[name]!.relationships.keys { next[name]!.relationships[relationship]!.renamedFrom = nil }
            }
            var done: [String] = []
            let previous = chain.last!
            let wanted = 1 + Int(rng.next() % 4)
            var touched: Set<String> = []
            for _ in 0..<(wanted * 4) where done.count < wanted {
                // Each attribute changes at most once a version: what a version does to it is
                // then one step of the chain.
                let focused = recent.flatMap {
                    next[$0.entity]?.attributes[$0.attribute] != nil && !touched.contains("\($0.entity).\($0.attribute)") && chance(0.7) ? $0 : nil
                }
                let entityName = focused?.entity ?? pick(next.keys.sorted())
                func someAttribute() -> String? {
                    let attribute =
                        focused?.attribute
                        ?? next[entityName]!.attributes.keys.sorted().filter { !touched.contains("\(entityName).\($0)") }.randomElement(using: &rng)
                    if let attribute { touched.insert("\(entityName).\(attribute)") }
                    return attribute
                }
                // Renamed only once a version, and only what the version before had by that name.
                let renamable = next[entityName]!.renamedFrom == nil && previous[entityName] != nil
                switch rng.next() % 14 {
                case 0:  // rename the entity; relationships pointing at it follow
                    guard renamable else { continue }
                    let newName = fresh(entityName.prefix { $0.isLetter } + "N")
                    var entity = next.removeValue(forKey: entityName)!
                    entity.renamedFrom = entityName
                    next[newName] = entity
                    for owner in next.keys {
                        for relationship in next[owner]!.relationships.keys where next[owner]!.relationships[relationship]!.destination == entityName {
                            next[owner]!.relationships[relationship]!.destination = newName
                        }
                        if next[owner]!.parent == entityName { next[owner]!.parent = newName }
                    }
                    done.append("entity \(entityName) renamed \(newName)")
                case 1:  // rename an attribute
                    guard renamable,
                        let attribute = next[entityName]!.attributes.keys.sorted()
                            .filter({ previous[entityName]!.attributes[$0] != nil && !touched.contains("\(entityName).\($0)") }).randomElement(using: &rng)
                    else { continue }
                    let newName = fresh("a")
                    touched.insert("\(entityName).\(newName)")
                    var value = next[entityName]!.attributes.removeValue(forKey: attribute)!
                    value.renamedFrom = attribute
                    next[entityName]!.attributes[newName] = value
                    recent = (entityName, newName)
                    done.append("\(entityName).\(attribute) renamed \(newName)")
                case 2:  // drop an attribute
                    guard next[entityName]!.attributes.count > 1, let attribute = someAttribute() else { continue }
                    next[entityName]!.attributes[attribute] = nil
                    done.append("\(entityName).\(attribute) dropped")
                case 3:  // add an attribute, optional or with a default
                    let type = pick(Array(defaults.keys).sorted())
                    let optional = chance(0.5)
                    let name = fresh("a")
                    next[entityName]!.attributes[name] = Attribute(
                        type: type, optional: optional, defaultValue: optional && chance(0.5) ? nil : chance(0.5) ? defaults[type] : alternates[type])
                    recent = (entityName, name)
                    touched.insert("\(entityName).\(name)")
                    done.append("\(entityName).\(name) added (\(type)\(optional ? ", optional" : ""))")
                case 4:  // required with a default, or optional
                    guard let attribute = someAttribute() else { continue }
                    recent = (entityName, attribute)
                    let type = next[entityName]!.attributes[attribute]!.type
                    if next[entityName]!.attributes[attribute]!.optional {
                        next[entityName]!.attributes[attribute]!.optional = false
                        next[entityName]!.attributes[attribute]!.defaultValue = chance(0.5) ? defaults[type] : alternates[type]
                        done.append("\(entityName).\(attribute) made required")
                    } else {
                        next[entityName]!.attributes[attribute]!.optional = true
                        done.append("\(entityName).\(attribute) made optional")
                    }
                case 5:  // widen a number
                    guard
                        let (attribute, value) = next[entityName]!.attributes.sorted(by: { $0.key < $1.key })
                            .first(where: { widenings[$0.value.type] != nil && !touched.contains("\(entityName).\($0.key)") })
                    else { continue }
                    touched.insert("\(entityName).\(attribute)")
                    recent = (entityName, attribute)
                    next[entityName]!.attributes[attribute]!.type = widenings[value.type]!
                    next[entityName]!.attributes[attribute]!.defaultValue = value.defaultValue
                    done.append("\(entityName).\(attribute) widened to \(widenings[value.type]!)")
                case 6:  // a to-many made ordered or unordered
                    guard let relationship = next[entityName]!.relationships.keys.sorted().first(where: { next[entityName]!.relationships[$0]!.toMany }) else {
                        continue
                    }
                    next[entityName]!.relationships[relationship]!.ordered.toggle()
                    done.append("\(entityName).\(relationship) \(next[entityName]!.relationships[relationship]!.ordered ? "ordered" : "unordered")")
                case 7:  // rename a relationship; its inverse follows
                    guard renamable,
                        let relationship = next[entityName]!.relationships.keys.sorted().first(where: { previous[entityName]!.relationships[$0] != nil }),
                        next[entityName]!.relationships[relationship]!.renamedFrom == nil
                    else { continue }
                    let newName = fresh("r")
                    var value = next[entityName]!.relationships.removeValue(forKey: relationship)!
                    value.renamedFrom = relationship
                    next[entityName]!.relationships[newName] = value
                    if let inverse = value.inverse { next[value.destination]!.relationships[inverse]!.inverse = newName }
                    done.append("\(entityName).\(relationship) renamed \(newName)")
                case 8:  // drop a relationship and its inverse
                    guard let relationship = next[entityName]!.relationships.keys.sorted().last else { continue }
                    let value = next[entityName]!.relationships.removeValue(forKey: relationship)!
                    if let inverse = value.inverse { next[value.destination]!.relationships[inverse] = nil }
                    done.append("\(entityName).\(relationship) dropped")
                case 9:  // drop an entity without subentities, with the relationships to it and their inverses
                    guard next.count > 2, !next.values.contains(where: { $0.parent == entityName }) else { continue }
                    let dropped = next.removeValue(forKey: entityName)!
                    for (_, relationship) in dropped.relationships {
                        if let inverse = relationship.inverse, next[relationship.destination] != nil {
                            next[relationship.destination]!.relationships[inverse] = nil
                        }
                    }
                    for owner in next.keys {
                        next[owner]!.relationships = next[owner]!.relationships.filter { $0.value.destination != entityName }
                    }
                    droppedEntities.append(entityName)
                    done.append("entity \(entityName) dropped")
                case 10:  // add again an entity an earlier version dropped, by its name
                    guard let name = droppedEntities.first(where: { next[$0] == nil }) else { continue }
                    var entity = Entity()
                    entity.attributes[fresh("a")] = Attribute(type: "integer32", optional: false, defaultValue: alternates["integer32"])
                    next[name] = entity
                    done.append("entity \(name) added again")
                case 11:  // point a relationship (and its inverse) at the subentity of its destination, or at its parent
                    guard let relationship = next[entityName]!.relationships.keys.sorted().first,
                        case let old = next[entityName]!.relationships[relationship]!,
                        let target = next[old.destination]!.parent ?? next.keys.sorted().first(where: { next[$0]!.parent == old.destination })
                    else { continue }
                    if let inverse = old.inverse {
                        guard next[target]!.relationships[inverse] == nil else { continue }
                        let back = next[old.destination]!.relationships.removeValue(forKey: inverse)!
                        next[target]!.relationships[inverse] = back
                    }
                    next[entityName]!.relationships[relationship]!.destination = target
                    done.append("\(entityName).\(relationship) now to \(target)")
                case 12:  // a to-one made to-many, or a to-many to-one
                    guard let relationship = next[entityName]!.relationships.keys.sorted().randomElement(using: &rng) else { continue }
                    let toMany = !next[entityName]!.relationships[relationship]!.toMany
                    next[entityName]!.relationships[relationship]!.toMany = toMany
                    next[entityName]!.relationships[relationship]!.ordered = toMany && chance(0.3)
                    done.append("\(entityName).\(relationship) \(toMany ? "to-many" : "to-one")")
                default:  // a new relationship
                    addRelationship(&next)
                    done.append("a relationship added")
                }
            }
            changes.append(done.joined(separator: "; "))
            chain.append(next)
        }

        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let files = (1...chain.count).map { "v\($0).yaml" }
        try "name: Chain\ncurrent: Chain \(chain.count)\nversions: [\(files.joined(separator: ", "))]\n"
            .write(to: directory.appendingPathComponent("model.yaml"), atomically: true, encoding: .utf8)
        for (index, version) in chain.enumerated() {
            try yaml(version, name: "Chain \(index + 1)").write(to: directory.appendingPathComponent(files[index]), atomically: true, encoding: .utf8)
        }
        return RandomChainCase(
            directory: directory, versions: chain.count, summary: changes.enumerated().map { "v\($0.offset + 2): \($0.element)" }.joined(separator: " | "))
    }

    private static func yaml(_ entities: [String: Entity], name: String) -> String {
        var lines = ["version: \(name)", "entities:"]
        for (entityName, entity) in entities.sorted(by: { $0.key < $1.key }) {
            lines.append("  \(entityName):")
            if let parent = entity.parent { lines.append("    parent: \(parent)") }
            if let old = entity.renamedFrom { lines.append("    renamingIdentifier: \(old)") }
            lines.append("    attributes:")
            for (attributeName, attribute) in entity.attributes.sorted(by: { $0.key < $1.key }) {
                var fields = ["type: \(attribute.type)", "optional: \(attribute.optional)"]
                if let value = attribute.defaultValue { fields.append("default: \"\(value)\"") }
                if let old = attribute.renamedFrom { fields.append("renamingIdentifier: \(old)") }
                lines.append("      \(attributeName): { \(fields.joined(separator: ", ")) }")
            }
            if !entity.relationships.isEmpty {
                lines.append("    relationships:")
                for (relationshipName, relationship) in entity.relationships.sorted(by: { $0.key < $1.key }) {
                    var fields = ["destination: \(relationship.destination)", "toMany: \(relationship.toMany)", "ordered: \(relationship.ordered)"]
                    if let inverse = relationship.inverse { fields.append("inverse: \(inverse)") }
                    if let old = relationship.renamedFrom { fields.append("renamingIdentifier: \(old)") }
                    lines.append("      \(relationshipName): { \(fields.joined(separator: ", ")) }")
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
