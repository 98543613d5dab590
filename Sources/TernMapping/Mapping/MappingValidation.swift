import Foundation
import TernModel
import TernStore
import TernSQLite

/// A mapping model checked against its source and destination model versions: every value
/// expression and filter compiled, every relationship mapping resolved.
public struct ValidatedMapping: Sendable {
    /// One entity mapping with its value expressions, relationship mappings and filter compiled.
    public struct Entity: Sendable {
        /// The entity mapping as written.
        public let mapping: EntityMapping
        /// Destination attribute → compiled value expression.
        public let attributes: [String: CompiledExpression]
        /// Destination relationship → where its destinations come from.
        public let relationships: [String: RelationshipSource]
        /// The compiled filter predicate over the source entity; nil when the mapping has none.
        public let filter: CompiledPredicate?
    }

    /// How a destination relationship finds its destination objects.
    public enum RelationshipSource: Sendable, Equatable {
        /// The objects migrated from `sourceRelationship`'s destinations by the entity mapping
        /// named `entityMapping` (`destinationInstancesForEntityMappingNamed:sourceInstances:`).
        case entityMapping(String, sourceRelationship: String)
        /// The objects migrated from `sourceRelationship`'s destinations by whichever mapping
        /// migrated them (`destinationInstancesForSourceRelationshipNamed:sourceInstances:`).
        case sourceRelationship(String)
    }

    /// The mapping model that was validated.
    public let model: MappingModel
    /// One entry per entity mapping, in the mapping model's order.
    public let entities: [Entity]
    /// What `now()` gives in its expressions (seconds since 2001-01-01): fixed when it was
    /// validated, so a saved plan runs with the instant it was made with.
    public let now: Double
    /// Entity mappings of earlier passes its relationship mappings may name.
    public let earlierMappings: Set<String>
}

extension MappingModel {
    /// Checks every entity and property mapping against `source` and `destination`.
    ///
    /// - Throws: `TernError` listing every problem, each naming the entity mapping and property.
    ///
    /// - Parameters:
    ///   - source: the version the mapping reads.
    ///   - destination: the version it writes.
    ///   - now: what `now()` in its expressions gives, seconds since 2001-01-01 (default: this moment).
    ///   - file: the mapping's file, named in errors.
    ///   - earlierMappings: names of entity mappings from earlier passes of the same step, which
    ///     relationship mappings may refer to.
    public func validate(
        source: ObjectModel, destination: ObjectModel, now: Double = Date().timeIntervalSinceReferenceDate, file: String? = nil,
        earlierMappings: Set<String> = []
    ) throws -> ValidatedMapping {
        var problems: [String] = []
        var validated: [ValidatedMapping.Entity] = []
        var names: Set<String> = []
        for mapping in entityMappings {
            let at = "entity mapping \(mapping.name)"
            if !names.insert(mapping.name).inserted { problems.append("\(at): defined twice") }
            let sourceEntity = mapping.sourceEntity.flatMap(source.entity(named:))
            let destinationEntity = mapping.destinationEntity.flatMap(destination.entity(named:))
            if let name = mapping.sourceEntity, sourceEntity == nil {
                problems.append(
                    "\(at): source entity \(name) is not in \(source.versionName) (entities: \(source.entities.map(\.name).joined(separator: ", ")))")
            }
            if let name = mapping.destinationEntity, destinationEntity == nil {
                problems.append(
                    "\(at): destination entity \(name) is not in \(destination.versionName) (entities: \(destination.entities.map(\.name).joined(separator: ", ")))"
                )
            }
            switch mapping.type {
            case .add where mapping.sourceEntity != nil: problems.append("\(at): an add mapping has no source entity")
            case .remove where mapping.destinationEntity != nil: problems.append("\(at): a remove mapping has no destination entity")
            case .copy, .transform, .custom:
                if mapping.sourceEntity == nil || mapping.destinationEntity == nil {
                    problems.append("\(at): a \(mapping.type.rawValue) mapping needs a source and a destination entity")
                }
            default: break
            }
            // Core Data holds no object of an abstract entity: a mapping from one that has objects
            // of its own into one would make them (an abstract source has none: Xcode's mapping
            // models map abstract entities too, and they create nothing).
            if let sourceEntity, let destinationEntity, destinationEntity.isAbstract, !sourceEntity.isAbstract {
                problems.append(
                    "\(at): \(destinationEntity.name) is abstract, so no object of it can be made from \(sourceEntity.name)'s (map them to a concrete entity, or remove them)"
                )
            }
            if mapping.type == .custom && mapping.policy == nil {
                problems.append("\(at): a custom mapping names its entity migration policy")
            }
            var attributes: [String: CompiledExpression] = [:]
            var relationships: [String: ValidatedMapping.RelationshipSource] = [:]
            var filter: CompiledPredicate?
            if let sourceEntity, let destinationEntity {
                if let predicate = mapping.filterPredicate {
                    do {
                        filter = try ExpressionBinder.predicate(predicate, entity: sourceEntity.name, model: source, now: now)
                    } catch {
                        problems.append("\(at), filter predicate \(Self.quoted(predicate)): \(error)")
                    }
                }
                let destinationAttributes = destination.allAttributes(of: destinationEntity.name)
                for property in mapping.attributeMappings {
                    let where_ = "\(at), attribute \(property.name)"
                    guard let attribute = destinationAttributes.first(where: { $0.name == property.name }) else {
                        problems.append("\(where_): \(destinationEntity.name) has no attribute \(property.name)")
                        continue
                    }
                    guard let text = property.valueExpression else { continue }
                    do {
                        let compiled = try ExpressionBinder.expression(text, entity: sourceEntity.name, model: source, now: now)
                        let wanted = ExpressionBinder.kind(of: attribute.type)
                        if compiled.kind != wanted && compiled.kind != .null {
                            problems.append(
                                "\(where_): \(Self.quoted(text)) gives \(ExpressionBinder.describe(compiled.kind)), but \(destinationEntity.name).\(attribute.name) holds \(ExpressionBinder.describe(wanted))"
                            )
                        }
                        attributes[property.name] = compiled
                    } catch {
                        problems.append("\(where_): \(Self.quoted(text)): \(error)")
                    }
                }
                let destinationRelationships = destination.allRelationships(of: destinationEntity.name)
                for property in mapping.relationshipMappings {
                    let where_ = "\(at), relationship \(property.name)"
                    guard destinationRelationships.contains(where: { $0.name == property.name }) else {
                        problems.append("\(where_): \(destinationEntity.name) has no relationship \(property.name)")
                        continue
                    }
                    guard let text = property.valueExpression else { continue }
                    do {
                        relationships[property.name] = try relationshipSource(text, sourceEntity: sourceEntity.name, source: source)
                    } catch let error as ExpressionError {
                        problems.append("\(where_): \(Self.quoted(text)): \(error)")
                    } catch {
                        problems.append("\(where_): \(Self.quoted(text)): \(error)")
                    }
                }
            }
            validated.append(ValidatedMapping.Entity(mapping: mapping, attributes: attributes, relationships: relationships, filter: filter))
        }
        // Names used by destinationInstancesForEntityMappingNamed: must exist.
        for entity in validated {
            for (property, source) in entity.relationships {
                if case .entityMapping(let name, _) = source, entityMapping(named: name) == nil, !earlierMappings.contains(name) {
                    let known = (entityMappings.map(\.name) + earlierMappings.sorted()).joined(separator: ", ")
                    problems.append("entity mapping \(entity.mapping.name), relationship \(property): no entity mapping named \(name) (mappings: \(known))")
                }
            }
        }
        if problems.isEmpty { problems = SQLiteLimits.problems(in: validated, source: source) }
        guard problems.isEmpty else {
            throw TernError(.badInput, "the mapping model is invalid:\n" + problems.map { "  - \($0)" }.joined(separator: "\n"), path: file)
        }
        return ValidatedMapping(model: self, entities: validated, now: now, earlierMappings: earlierMappings)
    }

    /// An expression as a message quotes it: whole when short, else its start (the error's
    /// line and column still point into the whole).
    static func quoted(_ text: String) -> String {
        text.count <= 160 ? text : text.prefix(160) + "… (\(text.utf8.count) bytes)"
    }

    /// Reads a relationship mapping's value expression: `FUNCTION($manager, …)` or `$source.rel`.
    private func relationshipSource(_ text: String, sourceEntity: String, source: ObjectModel) throws -> ValidatedMapping.RelationshipSource {
        let syntax = try ExpressionParser.expression(text)
        func sourceRelationship(_ expression: ExpressionSyntax) throws -> String {
            guard case .keyPath(let base, let components, let at) = expression, components.count == 1,
                base == nil || base == .variable("source", at: base!.offset)
            else {
                throw ExpressionError(
                    "the source instances must be a relationship of $source, such as $source.pages", at: SourcePosition(offset: expression.offset, in: text))
            }
            guard source.allRelationships(of: sourceEntity).contains(where: { $0.name == components[0] }) else {
                let available = source.allRelationships(of: sourceEntity).map(\.name).sorted().joined(separator: ", ")
                throw ExpressionError(
                    "entity \(sourceEntity) has no relationship \(components[0]) (it has: \(available))", at: SourcePosition(offset: at, in: text))
            }
            return components[0]
        }
        switch syntax {
        case .managerFunction(let receiver, let selector, let arguments, let at):
            guard case .variable("manager", _) = receiver else {
                throw ExpressionError("FUNCTION's receiver must be $manager", at: SourcePosition(offset: at, in: text))
            }
            guard case .literal(.text(let name), _, _) = arguments[0] else {
                throw ExpressionError("the first argument must be a name in quotes", at: SourcePosition(offset: arguments[0].offset, in: text))
            }
            let relationship = try sourceRelationship(arguments[1])
            switch ManagerFunction(rawValue: selector)! {
            case .destinationInstancesForEntityMapping: return .entityMapping(name, sourceRelationship: relationship)
            case .destinationInstancesForSourceRelationship: return .sourceRelationship(relationship)
            }
        case .keyPath:
            return .sourceRelationship(try sourceRelationship(syntax))
        default:
            throw ExpressionError(
                "a relationship mapping takes FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"Mapping\", $source.relationship) or $source.relationship",
                at: SourcePosition(offset: 0, in: text))
        }
    }
}
