import TernModel
import TernStore
/// Why a mapping could not be inferred: every reason, each naming the entity and property.
public struct InferenceFailure: Error, Equatable, CustomStringConvertible {
    /// Every reason inference was refused, one sentence each; never empty.
    public let reasons: [String]
    public var description: String {
        "the mapping cannot be inferred:\n" + reasons.map { "  - \($0)" }.joined(separator: "\n")
    }
}

/// Infers a mapping model between two versions the way Core Data's lightweight migration does.
///
/// Entities and properties are matched by renaming identifier: a destination element matches a
/// source element whose name, or renaming identifier, equals its renaming identifier (its name
/// when it has none). Given the versions in between, renames are followed through each of them, so
/// an element renamed in v2 and again in v3 still matches from v1.
///
/// Inferred: added and removed entities, attributes and relationships; renames; optional ↔
/// non-optional (nils become the default); integer widening and float → double/decimal; to-one ↔
/// to-many; unordered ↔ ordered; properties moved up or down an inheritance tree; entities moved
/// out of (or into) a tree. Refused, with the reason: merging inheritance trees, other type
/// changes, new non-optional attributes without a default, new required relationships.
public enum MappingInference {
    /// The mapping lightweight migration would use from `source` to `destination`, following renames through
    /// `intermediate` (the versions between them, oldest first). Throws every reason it cannot be inferred.
    public static func infer(from source: ObjectModel, to destination: ObjectModel, through intermediate: [ObjectModel] = []) throws(InferenceFailure)
        -> MappingModel
    {
        let chain = [source] + intermediate + [destination]
        var reasons: [String] = []

        // Destination entity → matching source entity, followed back through the chain.
        var origins: [String: String] = [:]
        for entity in destination.entities {
            if let origin = trace(entity: entity.name, chain: chain) { origins[entity.name] = origin }
        }
        let mappingName: (String) -> String = { destinationName in
            origins[destinationName].map { "\($0)To\(destinationName)" } ?? destinationName
        }

        // Core Data cannot merge inheritance trees.
        var sourceRootsByDestinationRoot: [String: Set<String>] = [:]
        for (destinationName, sourceName) in origins {
            if let destinationRoot = destination.root(of: destinationName)?.name, let sourceRoot = source.root(of: sourceName)?.name {
                sourceRootsByDestinationRoot[destinationRoot, default: []].insert(sourceRoot)
            }
        }
        for (root, sourceRoots) in sourceRootsByDestinationRoot.sorted(by: { $0.key < $1.key }) where sourceRoots.count > 1 {
            reasons.append(
                "entity \(root): its tree would merge entities from separate source trees (\(sourceRoots.sorted().joined(separator: ", "))), which lightweight migration cannot do"
            )
        }

        // Core Data holds no object of an abstract entity: one made abstract keeps none of its own
        // objects (its subentities' still migrate), and no relationship can reach them. One that
        // was abstract already has none: its mapping copies nothing, as before.
        var madeAbstract: Set<String> = []
        for entity in destination.entities where entity.isAbstract {
            if let origin = origins[entity.name], source.entity(named: origin)?.isAbstract == false {
                origins[entity.name] = nil
                madeAbstract.insert(entity.name)  // its source entity's objects are removed
            }
        }

        var mappings: [EntityMapping] = []
        for entity in destination.entitiesInStoreOrder where !madeAbstract.contains(entity.name) {
            guard let sourceName = origins[entity.name] else {
                mappings.append(EntityMapping(name: entity.name, type: .add, sourceEntity: nil, destinationEntity: entity.name))
                continue
            }
            var changed = sourceName != entity.name
            var attributes: [PropertyMapping] = []
            for attribute in destination.allAttributes(of: entity.name) where !attribute.isTransient {
                let at = "entity \(entity.name), attribute \(attribute.name)"
                guard let origin = trace(attribute: attribute.name, of: entity.name, chain: chain),
                    let old = source.allAttributes(of: sourceName).first(where: { $0.name == origin }), !old.isTransient
                else {
                    changed = true
                    if !attribute.isOptional && attribute.defaultValue == nil {
                        reasons.append("\(at): new non-optional attribute with no default value")
                    }
                    attributes.append(PropertyMapping(name: attribute.name, valueExpression: nil))
                    continue
                }
                if let problem = typeChange(from: old.type, to: attribute.type) {
                    reasons.append("\(at): \(problem)")
                    continue
                }
                var expression = "$source.\(origin)"
                if old.isOptional && !attribute.isOptional {
                    guard let fallback = attribute.defaultValue.flatMap(ExpressionText.literal) else {
                        reasons.append("\(at): becomes non-optional without a default value (one an expression can spell) for the objects that have none")
                        continue
                    }
                    expression = "ifNil:(\(expression), \(fallback))"
                }
                if origin != attribute.name || old.type != attribute.type || expression != "$source.\(origin)" { changed = true }
                attributes.append(PropertyMapping(name: attribute.name, valueExpression: expression))
            }
            var relationships: [PropertyMapping] = []
            for relationship in destination.allRelationships(of: entity.name) where !relationship.isTransient {
                let at = "entity \(entity.name), relationship \(relationship.name)"
                guard let origin = trace(relationship: relationship.name, of: entity.name, chain: chain),
                    let old = source.allRelationships(of: sourceName).first(where: { $0.name == origin }), !old.isTransient
                else {
                    changed = true
                    if relationship.minCount > 0 || (!relationship.isToMany && !relationship.isOptional) {
                        reasons.append("\(at): new required relationship: existing objects would have none")
                    }
                    relationships.append(PropertyMapping(name: relationship.name, valueExpression: nil))
                    continue
                }
                // The destinations must be what the old destinations became.
                let targets = destination.descendants(of: relationship.destination).map(\.name).filter { origins[$0] != nil }
                let oldTargets = Set(source.descendants(of: old.destination).map(\.name))
                guard targets.contains(where: { oldTargets.contains(origins[$0]!) }) else {
                    // The old destinations become no object at all (their entity is removed, or its
                    // renaming identifier matches nothing here): Core Data's mapping finds no
                    // destination for them, and the links are lost — dropped data, counted. Become
                    // objects of another entity, they would be links of the wrong type.
                    let becomeSomething = destination.entities.contains { origins[$0.name].map(oldTargets.contains) == true }
                    guard !becomeSomething else {
                        reasons.append("\(at): now points to \(relationship.destination), which no object of \(old.destination) becomes")
                        continue
                    }
                    if relationship.minCount > 0 || (!relationship.isToMany && !relationship.isOptional) {
                        reasons.append(
                            "\(at): required, but no object of \(old.destination) becomes an object of this version: existing objects would have none")
                    }
                    changed = true
                    relationships.append(PropertyMapping(name: relationship.name, valueExpression: nil))
                    continue
                }
                let covering = targets.filter { oldTargets.contains(origins[$0]!) }
                let expression =
                    covering.count == 1
                    ? "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(mappingName(covering[0]))\", $source.\(origin))"
                    : "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"\(origin)\", $source.\(origin))"
                if origin != relationship.name || old.isToMany != relationship.isToMany || old.isOrdered != relationship.isOrdered { changed = true }
                relationships.append(PropertyMapping(name: relationship.name, valueExpression: expression))
            }
            if source.allAttributes(of: sourceName).count != attributes.count || source.allRelationships(of: sourceName).count != relationships.count {
                changed = true
            }
            mappings.append(
                EntityMapping(
                    name: mappingName(entity.name), type: changed ? .transform : .copy, sourceEntity: sourceName, destinationEntity: entity.name,
                    attributeMappings: attributes, relationshipMappings: relationships))
        }
        let migrated = Set(origins.values)
        // An abstract source entity has no objects of its own to remove.
        for entity in source.entitiesInStoreOrder where !migrated.contains(entity.name) && !entity.isAbstract {
            // Beside a new entity of the same name (one whose renaming identifier matches nothing
            // here), the removal takes Core Data's name for it.
            let name = mappings.contains { $0.name == entity.name } ? "Remove_\(entity.name)" : entity.name
            mappings.append(EntityMapping(name: name, type: .remove, sourceEntity: entity.name, destinationEntity: nil))
        }
        guard reasons.isEmpty else { throw InferenceFailure(reasons: reasons) }
        return MappingModel(sourceVersion: source.versionName, destinationVersion: destination.versionName, entityMappings: mappings)
    }

    /// The attribute changes lightweight migration can make, or why not.
    private static func typeChange(from old: AttributeType, to new: AttributeType) -> String? {
        if old == new { return nil }
        let widening: [AttributeType: Set<AttributeType>] = [
            .integer16: [.integer32, .integer64], .integer32: [.integer64], .float: [.double, .decimal], .boolean: [.integer16, .integer32, .integer64],
        ]
        if widening[old]?.contains(new) == true { return nil }
        return "type changed from \(old.xcodeName) to \(new.xcodeName), which cannot be inferred"
    }

    // MARK: Following renames

    /// The element of `previous` that the element of `current` named `name` (renaming key `key`:
    /// its renaming identifier, else its name) came from: the one with the same identifier, as
    /// Core Data matches properties, else the one its key names. When several elements of
    /// `current` share an identifier (version 2 renames `name` to `fullName`, whose identifier
    /// stays `name`; version 3 adds a new `name`), the one keeping the old element's name has it,
    /// and the others are new.
    private static func match(name: String, key: String, in previous: [(name: String, key: String)], among current: [(name: String, key: String)]) -> String? {
        if let shared = previous.first(where: { $0.key == key }) {
            let rivals = current.filter { $0.key == key }
            guard rivals.count > 1 else { return shared.name }
            let heir = rivals.first { $0.name == shared.name } ?? rivals[0]
            return heir.name == name ? shared.name : nil
        }
        return previous.first { $0.name == key }?.name
    }

    /// The source entity a destination entity came from, walking back through every version.
    private static func trace(entity name: String, chain: [ObjectModel]) -> String? {
        var current = name
        for index in stride(from: chain.count - 1, to: 0, by: -1) {
            guard let entity = chain[index].entity(named: current) else { return nil }
            let previous = chain[index - 1].entities.map { ($0.name, $0.renamingKey) }
            let here = chain[index].entities.map { ($0.name, $0.renamingKey) }
            guard let found = match(name: entity.name, key: entity.renamingKey, in: previous, among: here) else { return nil }
            current = found
        }
        return current
    }

    private static func trace(attribute name: String, of entity: String, chain: [ObjectModel]) -> String? {
        trace(property: name, of: entity, chain: chain) { model, entity in model.allAttributes(of: entity).map { ($0.name, $0.renamingKey) } }
    }

    private static func trace(relationship name: String, of entity: String, chain: [ObjectModel]) -> String? {
        trace(property: name, of: entity, chain: chain) { model, entity in model.allRelationships(of: entity).map { ($0.name, $0.renamingKey) } }
    }

    private static func trace(property name: String, of entity: String, chain: [ObjectModel], properties: (ObjectModel, String) -> [(String, String)])
        -> String?
    {
        var currentProperty = name
        var currentEntity = entity
        for index in stride(from: chain.count - 1, to: 0, by: -1) {
            let here = properties(chain[index], currentEntity).map { (name: $0.0, key: $0.1) }
            guard let key = here.first(where: { $0.name == currentProperty })?.key,
                let previousEntity = trace(entity: currentEntity, chain: [chain[index - 1], chain[index]]),
                let found = match(
                    name: currentProperty, key: key, in: properties(chain[index - 1], previousEntity).map { (name: $0.0, key: $0.1) }, among: here)
            else {
                return nil
            }
            currentProperty = found
            currentEntity = previousEntity
        }
        return currentProperty
    }
}
