import Foundation
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore
import TernGenerate

/// A generated migration, written as Tern's YAML files: two model versions (entities, one
/// possibly with a subentity, every attribute type, binary values stored outside the store on
/// either side or both, to-one / to-many / many-to-many / ordered
/// relationships with and without inverses, reflexive ones among them, optional and required,
/// transient attributes of undefined type) and an explicit mapping in one
/// or two passes (copies, renames, value expressions, new attributes with defaults, filters,
/// relationships mapped from one side or both). The same seed writes the same files.
struct RandomMigrationCase {
    let seed: UInt64
    let directory: URL
    /// Entities to leave empty in the store.
    let emptyEntities: [String]
    /// What was generated, in words, for failure messages.
    let summary: String

    private struct Spec {
        enum Kind: CaseIterable { case oneToMany, toOne, toMany, manyToMany }
        var kind: Kind
        var owner: String
        var target: String
        var name: String
        var ordered: Bool
        /// Which sides the mapping maps: the owner's, the inverse's, or both.
        var mapsOwner: Bool
        var mapsInverse: Bool
        var inverseName: String? { kind == .oneToMany || kind == .manyToMany ? name + "Back" : nil }
    }

    private struct AttributeSpec {
        var name: String
        var type: String
        var optional: Bool
        /// Binary values that may be stored outside the store, in the source and in the destination.
        var external: (source: Bool, destination: Bool) = (false, false)
        /// In the destination: kept, renamed, transformed or dropped.
        enum Fate { case copied, renamed, transformed, dropped }
        var fate: Fate
        var newName: String { fate == .renamed ? name + "x" : name }
    }

    static let attributeTypes = ["integer16", "integer32", "integer64", "double", "float", "decimal", "string", "boolean", "date", "binary", "uuid"]

    static func make(seed: UInt64, in directory: URL) throws -> RandomMigrationCase {
        var rng = SplitMix64(seed: seed)
        func chance(_ p: Double) -> Bool { Double(rng.next() % 10_000) / 10_000 < p }
        func pick<T>(_ items: [T]) -> T { items[Int(rng.next() % UInt64(items.count))] }
        func number(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(rng.next() % UInt64(range.count)) }

        // Entities, one of them possibly with a subentity.
        var entities = Array(["Alpha", "Beta", "Gamma", "Delta"].prefix(number(2...4)))
        var parents: [String: String] = [:]
        if chance(0.35) {
            parents[entities[0] + "Kid"] = entities[0]
            entities.append(entities[0] + "Kid")
            // Sometimes a sibling, whose attributes take the same names (k1, k2, …): columns of
            // one table that Core Data keeps apart with suffixes (`ZK11`).
            if chance(0.4) {
                parents[entities[0] + "Twin"] = entities[0]
                entities.append(entities[0] + "Twin")
            }
        }
        let renamed = Dictionary(uniqueKeysWithValues: entities.map { ($0, chance(0.3) ? $0 + "New" : $0) })
        var attributes: [String: [AttributeSpec]] = [:]
        for entity in entities {
            let prefix = parents[entity] == nil ? "a" : "k"
            attributes[entity] = (1...number(1...4)).map { index in
                let fates: [AttributeSpec.Fate] = [.copied, .copied, .renamed, .transformed, .transformed, .dropped]
                var attribute = AttributeSpec(name: "\(prefix)\(index)", type: pick(attributeTypes), optional: chance(0.8), fate: pick(fates))
                if attribute.type == "binary" { attribute.external = (chance(0.5), chance(0.5)) }
                return attribute
            }
        }
        var newAttribute: [String: (name: String, type: String, defaultValue: String)] = [:]
        for entity in entities where chance(0.3) {
            let (type, value) = pick([("integer32", "7"), ("string", "none"), ("double", "1.5"), ("boolean", "YES")])
            newAttribute[entity] = (parents[entity] == nil ? "fresh" : "kidFresh", type, value)
        }

        var specs: [Spec] = []
        for index in 1...number(1...4) {
            let owner = pick(entities)
            let target = chance(0.15) ? owner : pick(entities)
            let kind = pick(Spec.Kind.allCases)
            let sides = number(0...2)  // 0 owner, 1 inverse, 2 both
            let hasInverse = kind == .oneToMany || kind == .manyToMany
            specs.append(
                Spec(
                    kind: kind, owner: owner, target: target, name: "r\(index)", ordered: kind != .toOne && chance(0.45),
                    mapsOwner: !hasInverse || sides != 1, mapsInverse: hasInverse && sides != 0))
        }

        // Some to-manys stored in their targets' rows get a derived count in the new version.
        let counted = Set(specs.filter { ($0.kind == .toMany || $0.kind == .oneToMany) && chance(0.4) }.map(\.name))

        // Passes: each entity mapping in pass 1 or 2.
        let twoPasses = entities.count > 1 && chance(0.35)
        var pass: [String: Int] = Dictionary(uniqueKeysWithValues: entities.map { ($0, twoPasses ? number(1...2) : 1) })
        if twoPasses, Set(pass.values).count == 1 { pass[entities[0]] = pass[entities[0]] == 1 ? 2 : 1 }
        let filters: [String: String] = Dictionary(
            uniqueKeysWithValues: entities.compactMap { entity in
                guard chance(0.25) else { return nil }
                if let text = attributes[entity]!.first(where: { $0.type == "string" }), chance(0.5) {
                    return (entity, "\(text.name) != nil")
                }
                return (entity, "uid > \(number(0...12))")
            })
        let empty = entities.filter { _ in chance(0.12) }

        // One case in five gives its first entity a transient attribute of undefined type
        // (Xcode's "Undefined"), drawn from no random number so the other cases stay as they were.
        let scratchAttribute: Set<String> = seed % 5 == 0 ? [entities[0]] : []

        // Model files.
        func modelFile(version: String, destination: Bool) -> String {
            var lines = ["version: \(version)", "entities:"]
            for entity in entities {
                let name = destination ? renamed[entity]! : entity
                lines.append("  \(name):")
                if let parent = parents[entity] { lines.append("    parent: \(destination ? renamed[parent]! : parent)") }
                if destination, name != entity { lines.append("    renamingIdentifier: \(entity)") }
                // Every destination version differs from its source, even when nothing else does.
                if destination, entity == entities[0] { lines.append("    hashModifier: \"2\"") }
                lines.append("    attributes:")
                if parents[entity] == nil { lines.append("      uid: { type: integer64, optional: false }") }
                for attribute in attributes[entity]! where !(destination && attribute.fate == .dropped) {
                    let rename = destination && attribute.fate == .renamed ? ", renamingIdentifier: \(attribute.name)" : ""
                    let external = (destination ? attribute.external.destination : attribute.external.source) ? ", externalStorage: true" : ""
                    lines.append(
                        "      \(destination ? attribute.newName : attribute.name): { type: \(attribute.type), optional: \(attribute.optional)\(rename)\(external) }"
                    )
                }
                // Xcode's "Undefined" type, allowed for a transient attribute: never stored.
                if scratchAttribute.contains(entity) { lines.append("      scratch: { type: undefined, transient: true }") }
                if destination, let fresh = newAttribute[entity] {
                    lines.append("      \(fresh.name): { type: \(fresh.type), default: \"\(fresh.defaultValue)\" }")
                }
                // Derived counts of the entity's to-manys kept in their targets' rows: an
                // inverse-less to-many of its own, or the to-many side of a one-to-many to it.
                for spec in specs where destination && counted.contains(spec.name) {
                    let toMany = spec.kind == .toMany ? (spec.owner == entity ? spec.name : nil) : (spec.target == entity ? spec.inverseName : nil)
                    if let toMany { lines.append("      \(toMany)Count: { type: integer64, derivation: \"\(toMany).@count\" }") }
                }
                var relationships: [String] = []
                for spec in specs {
                    let target = destination ? renamed[spec.target]! : spec.target
                    let owner = destination ? renamed[spec.owner]! : spec.owner
                    if spec.owner == entity {
                        switch spec.kind {
                        case .oneToMany: relationships.append("\(spec.name): { destination: \(target), inverse: \(spec.inverseName!) }")
                        case .toOne: relationships.append("\(spec.name): { destination: \(target) }")
                        case .toMany: relationships.append("\(spec.name): { destination: \(target), toMany: true, ordered: \(spec.ordered) }")
                        case .manyToMany: relationships.append("\(spec.name): { destination: \(target), toMany: true, inverse: \(spec.inverseName!) }")
                        }
                    }
                    if spec.target == entity, let inverse = spec.inverseName {
                        relationships.append("\(inverse): { destination: \(owner), toMany: true, ordered: \(spec.ordered), inverse: \(spec.name) }")
                    }
                }
                if !relationships.isEmpty {
                    lines.append("    relationships:")
                    lines += relationships.map { "      " + $0 }
                }
                if parents[entity] == nil { lines.append("    unique: [[uid]]") }
            }
            return lines.joined(separator: "\n") + "\n"
        }

        // Mapping files, one per pass.
        func transform(_ attribute: AttributeSpec) -> String {
            let source = "$source.\(attribute.name)"
            switch attribute.type {
            case "integer16", "integer32", "integer64": return pick(["\(source) + 1", "abs:(\(source))", "\(source) * 3 - 2"])
            case "double", "float", "decimal": return pick(["\(source) * 2.5", "-\(source)", "\(source) / 4"])
            case "string": return pick(["uppercase:(\(source))", "concat:(\(source), \"·\")", "trim:(\(source))", "ifNil:(\(source), \"none\")"])
            default: return source
            }
        }
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
        func mappingName(_ entity: String) -> String { "\(entity)Map" }
        /// Relationship mappings of `entity`'s destination entity, own and inherited.
        func relationshipMappings(of entity: String) -> [String] {
            let lineage = [entity] + (parents[entity].map { [$0] } ?? [])
            var lines: [String] = []
            for spec in specs {
                var mapped: [(name: String, target: String)] = []
                if spec.mapsOwner, lineage.contains(spec.owner) { mapped.append((spec.name, spec.target)) }
                if spec.mapsInverse, lineage.contains(spec.target), let inverse = spec.inverseName { mapped.append((inverse, spec.owner)) }
                for (name, target) in mapped {
                    let targetHasSubentities = parents.values.contains(target)
                    if !targetHasSubentities, pass[target]! <= pass[entity]!, chance(0.6) {
                        lines.append(
                            "      \(name): "
                                + quoted(
                                    "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(mappingName(target))\", $source.\(name))"
                                ))
                    } else {
                        lines.append("      \(name): " + quoted("$source.\(name)"))
                    }
                }
            }
            return lines
        }
        var mappingFiles: [Int: [String]] = [:]
        for entity in entities {
            var lines = ["  - name: \(mappingName(entity))", "    type: transform", "    source: \(entity)", "    destination: \(renamed[entity]!)"]
            if let filter = filters[entity] { lines.append("    filter: \(quoted(filter))") }
            lines.append("    attributes:")
            lines.append("      uid: '$source.uid'")
            for root in [parents[entity]].compactMap({ $0 }) {
                for attribute in attributes[root]! where attribute.fate != .dropped {
                    lines.append("      \(attribute.newName): \(quoted(attribute.fate == .transformed ? transform(attribute) : "$source.\(attribute.name)"))")
                }
            }
            for attribute in attributes[entity]! where attribute.fate != .dropped {
                lines.append("      \(attribute.newName): \(quoted(attribute.fate == .transformed ? transform(attribute) : "$source.\(attribute.name)"))")
            }
            let relationships = relationshipMappings(of: entity)
            if !relationships.isEmpty {
                lines.append("    relationships:")
                lines += relationships
            }
            mappingFiles[pass[entity]!, default: []] += lines
        }

        let fileManager = FileManager.default
        try fileManager.createDirectory(at: directory.appendingPathComponent("mappings"), withIntermediateDirectories: true)
        try "name: Random\ncurrent: Random 2\nversions: [v1.yaml, v2.yaml]\n".write(
            to: directory.appendingPathComponent("model.yaml"), atomically: true, encoding: .utf8)
        try modelFile(version: "Random 1", destination: false).write(to: directory.appendingPathComponent("v1.yaml"), atomically: true, encoding: .utf8)
        try modelFile(version: "Random 2", destination: true).write(to: directory.appendingPathComponent("v2.yaml"), atomically: true, encoding: .utf8)
        for (number, lines) in mappingFiles {
            let text = "source: Random 1\ndestination: Random 2\nentityMappings:\n" + lines.joined(separator: "\n") + "\n"
            try text.write(to: directory.appendingPathComponent("mappings/\(number)-pass.yaml"), atomically: true, encoding: .utf8)
        }
        var externalSummary = ""
        for entity in entities {
            for attribute in attributes[entity]! where attribute.external.source || attribute.external.destination {
                let sides = [attribute.external.source ? "source" : nil, attribute.external.destination ? "destination" : nil].compactMap { $0 }
                externalSummary += "; \(entity).\(attribute.name) stored outside in \(sides.joined(separator: " and "))"
            }
        }
        let summary =
            "seed \(seed): entities \(entities.map { renamed[$0]! == $0 ? $0 : "\($0)→\(renamed[$0]!)" }.joined(separator: ", "))"
            + (parents.isEmpty ? "" : ", subentities \(parents.keys.sorted().joined(separator: ", "))")
            + "; relationships "
            + specs.map {
                "\($0.owner).\($0.name)→\($0.target) \($0.kind)\($0.ordered ? " ordered" : "") mapped \($0.mapsOwner ? "owner" : "")\($0.mapsInverse ? " inverse" : "")"
            }.joined(separator: "; ")
            + (twoPasses ? "; two passes" : "") + (filters.isEmpty ? "" : "; filters \(filters.values.sorted().joined(separator: ", "))")
            + (empty.isEmpty ? "" : "; empty \(empty.joined(separator: ", "))")
            + (counted.isEmpty ? "" : "; derived counts of \(counted.sorted().joined(separator: ", "))")
            + externalSummary
        return RandomMigrationCase(seed: seed, directory: directory, emptyEntities: empty, summary: summary)
    }
}
