import TernSQLite
import TernModel
import TernStore
import TernMapping

/// Consecutive inferred steps folded into one mapping from the first version to the last, so
/// the store is read and written once instead of once per step.
///
/// Each destination value is followed back through the steps: a copied attribute stays a copy of
/// its first-version origin (renames followed), a value a step fills with a default stays that
/// constant, and a step's `ifNil:` fallback applies to whatever reached it; a relationship keeps
/// the objects its first-version origin reaches, through the composed entity mappings. Where a
/// step would lose something a later one cannot give back — an order dropped and made again, a
/// to-many cut to a to-one — or a constant cannot be spelled as an expression, the steps are not
/// composed and `reason` says why.
enum StepComposition {
    /// One step made of `steps`, or why they cannot be composed.
    static func compose(_ steps: [MigrationStep], now: Double = 0) -> Result<MigrationStep, Refusal> {
        guard let first = steps.first, let last = steps.last else { preconditionFailure("no steps to compose") }
        var chain = Chain(start: first.source)
        for step in steps {
            guard step.isInferred, step.passes.count == 1 else {
                return .failure(
                    Refusal(reason: "\(step.source.versionName) → \(step.destination.versionName) has a mapping file (only inferred steps are composed)"))
            }
            if let refusal = chain.apply(step) { return .failure(refusal) }
        }
        do {
            let model = try chain.mappingModel(to: last.destination)
            let validated = try model.validate(source: first.source, destination: last.destination, now: now)
            let versions = ([first.source] + steps.map(\.destination)).map(\.versionName)
            return .success(
                MigrationStep(
                    source: first.source, destination: last.destination, passes: [validated], isInferred: true,
                    origins: ["inferred"], composedFrom: versions))
        } catch let refusal as Refusal {
            return .failure(refusal)
        } catch {
            return .failure(Refusal(reason: "the composed mapping does not validate: \(error)"))
        }
    }

    /// Why steps were not composed.
    struct Refusal: Error, Equatable {
        let reason: String
    }

    /// A destination attribute's value, in terms of the first version's object.
    private enum Value: Equatable {
        /// The first version's attribute, or `fallback` where it is nil.
        case attribute(String, fallback: SQLiteValue?)
        /// The same for every object (a default some step filled in).
        case constant(SQLiteValue)
    }

    /// A destination relationship's objects, in terms of the first version's object: those made
    /// from the objects its first-version `relationship` reaches, by the composed entity mappings
    /// that now make `entities` — each step keeps only what its own entity mappings carried and
    /// its relationship's destination entity can hold.
    private struct Objects: Equatable {
        var relationship: String
        var entities: Set<String>
    }

    /// One composed entity mapping, from an entity of the first version to one of the version reached.
    private struct Composed {
        var source: String?
        var destination: String
        var attributes: [String: Value] = [:]
        /// Relationship → its objects (nil: none).
        var relationships: [String: Objects?] = [:]
        /// Relationships some step cut from a to-many to a to-one: each object kept its first link.
        var cut: Set<String> = []
        /// Relationships whose to-one inverse some step cut: they kept the links it chose.
        var reduced: Set<String> = []
        /// Relationships whose order some step dropped.
        var orderDropped: Set<String> = []
        var ordered: Set<String> = []
    }

    /// The composition so far: per entity of the version reached, the mapping that makes it.
    private struct Chain {
        var reached: [String: Composed] = [:]
        let start: ObjectModel

        init(start: ObjectModel) {
            self.start = start
            for entity in start.entities {
                var identity = Composed(source: entity.name, destination: entity.name)
                for attribute in start.allAttributes(of: entity.name) where !attribute.isTransient {
                    identity.attributes[attribute.name] = .attribute(attribute.name, fallback: nil)
                }
                for relationship in start.allRelationships(of: entity.name) where !relationship.isTransient {
                    identity.relationships[relationship.name] = Objects(
                        relationship: relationship.name, entities: Set(start.descendants(of: relationship.destination).map(\.name)))
                    if relationship.isOrdered { identity.ordered.insert(relationship.name) }
                }
                reached[entity.name] = identity
            }
        }

        /// Composes `step` onto the chain; a refusal when the result could differ from running it.
        mutating func apply(_ step: MigrationStep) -> Refusal? {
            let mapping = step.passes[0]
            var next: [String: Composed] = [:]
            // A to-many cut to a to-one keeps one link of several: its inverse loses the others.
            var cutInverses: [(entity: String, relationship: String)] = []
            for entity in mapping.entities {
                guard let destination = entity.mapping.destinationEntity else { continue }
                guard let sourceName = entity.mapping.sourceEntity, let before = reached[sourceName], before.source != nil else {
                    next[destination] = Composed(source: nil, destination: destination)
                    continue
                }
                var after = Composed(source: before.source, destination: destination)
                for attribute in step.destination.allAttributes(of: destination) where !attribute.isTransient {
                    guard let text = entity.mapping.attributeMappings.first(where: { $0.name == attribute.name })?.valueExpression else {
                        after.attributes[attribute.name] = .constant(attribute.defaultValue ?? .null)
                        continue
                    }
                    guard let (origin, hasFallback) = Self.inferredCopy(text), let value = before.attributes[origin] else {
                        return Refusal(
                            reason: "\(step.source.versionName) → \(step.destination.versionName): \(destination).\(attribute.name) is not a copy (\(text))")
                    }
                    let fallback = hasFallback ? attribute.defaultValue : nil
                    switch value {
                    case .attribute(let name, let earlier): after.attributes[attribute.name] = .attribute(name, fallback: earlier ?? fallback)
                    case .constant(.null): after.attributes[attribute.name] = .constant(fallback ?? .null)
                    case .constant: after.attributes[attribute.name] = value
                    }
                }
                for relationship in step.destination.allRelationships(of: destination) where !relationship.isTransient {
                    guard let source = entity.relationships[relationship.name] else {
                        after.relationships[relationship.name] = .some(nil)
                        continue
                    }
                    let origin: String
                    switch source {
                    case .entityMapping(_, let name), .sourceRelationship(let name): origin = name
                    }
                    guard let reaching = before.relationships[origin], let reaching else {
                        after.relationships[relationship.name] = .some(nil)
                        continue
                    }
                    let carriedBy =
                        switch source {
                        case .entityMapping(let name, _): mapping.entities.filter { $0.mapping.name == name }
                        case .sourceRelationship: mapping.entities
                        }
                    let holdable = Set(step.destination.descendants(of: relationship.destination).map(\.name))
                    let entities = carriedBy.compactMap { carrier -> String? in
                        guard let from = carrier.mapping.sourceEntity, reaching.entities.contains(from),
                            let to = carrier.mapping.destinationEntity, holdable.contains(to)
                        else { return nil }
                        return to
                    }
                    after.relationships[relationship.name] = Objects(relationship: reaching.relationship, entities: Set(entities))
                    let originRelationship = step.source.allRelationships(of: sourceName).first { $0.name == origin }
                    let wasToMany = originRelationship?.isToMany ?? false
                    let wasOrdered = before.ordered.contains(origin)
                    if before.cut.contains(origin) {
                        guard !relationship.isToMany || wasToMany else {
                            return Refusal(
                                reason:
                                    "\(step.source.versionName) → \(step.destination.versionName): \(destination).\(relationship.name) becomes a to-many again after an earlier step cut it to a to-one"
                            )
                        }
                        after.cut.insert(relationship.name)
                    }
                    if before.reduced.contains(origin) {
                        guard relationship.isToMany || !wasToMany else {
                            return Refusal(
                                reason:
                                    "\(step.source.versionName) → \(step.destination.versionName): \(destination).\(relationship.name) is cut to a to-one after an earlier step cut its inverse (which link stays depends on that choice)"
                            )
                        }
                        after.reduced.insert(relationship.name)
                    }
                    if before.orderDropped.contains(origin) {
                        guard !relationship.isOrdered else {
                            return Refusal(
                                reason:
                                    "\(step.source.versionName) → \(step.destination.versionName): the order of \(destination).\(relationship.name) was dropped by an earlier step and is made again here"
                            )
                        }
                        guard relationship.isToMany else {
                            return Refusal(
                                reason:
                                    "\(step.source.versionName) → \(step.destination.versionName): \(destination).\(relationship.name) is cut to a to-one after an earlier step dropped its order (which object stays depends on that order)"
                            )
                        }
                        after.orderDropped.insert(relationship.name)
                    }
                    if relationship.isToMany, relationship.inverse == nil, let originRelationship, step.source.reachesSharedObjects(originRelationship) {
                        return Refusal(
                            reason:
                                "\(step.source.versionName) → \(step.destination.versionName): \(destination).\(relationship.name) has no inverse, so each object keeps one of its owners (which one depends on the step)"
                        )
                    }
                    if wasToMany && !relationship.isToMany {
                        after.cut.insert(relationship.name)
                        if let inverse = relationship.inverse {
                            cutInverses.append((relationship.destination, inverse))
                        }
                    }
                    if wasOrdered && relationship.isToMany && !relationship.isOrdered { after.orderDropped.insert(relationship.name) }
                    if wasOrdered && relationship.isOrdered { after.ordered.insert(relationship.name) }
                }
                next[destination] = after
            }
            for (entity, relationship) in cutInverses {
                for holder in step.destination.descendants(of: entity) where next[holder.name]?.relationships[relationship] != nil {
                    next[holder.name]!.reduced.insert(relationship)
                }
            }
            reached = next
            return nil
        }

        /// The name of the composed entity mapping that makes `composed`.
        static func name(_ composed: Composed) -> String {
            composed.source.map { "\($0)To\(composed.destination)" } ?? composed.destination
        }

        /// The mapping model from the first version to `destination` that the chain describes.
        func mappingModel(to destination: ObjectModel) throws(Refusal) -> MappingModel {
            var mappings: [EntityMapping] = []
            for entity in destination.entitiesInStoreOrder {
                guard let composed = reached[entity.name], composed.source != nil else {
                    mappings.append(EntityMapping(name: entity.name, type: .add, sourceEntity: nil, destinationEntity: entity.name))
                    continue
                }
                var attributes: [PropertyMapping] = []
                for attribute in destination.allAttributes(of: entity.name) where !attribute.isTransient {
                    let expression: String?
                    switch composed.attributes[attribute.name]! {
                    case .attribute(let origin, nil): expression = "$source.\(origin)"
                    case .attribute(let origin, let fallback?):
                        guard let literal = ExpressionText.literal(fallback) else {
                            throw Refusal(reason: "\(entity.name).\(attribute.name): its default cannot be written as an expression")
                        }
                        expression = "ifNil:($source.\(origin), \(literal))"
                    case .constant(let value) where value == (attribute.defaultValue ?? .null): expression = nil
                    case .constant(let value):
                        guard let literal = ExpressionText.literal(value) else {
                            throw Refusal(reason: "\(entity.name).\(attribute.name): a default an earlier version gave it cannot be written as an expression")
                        }
                        expression = literal
                    }
                    attributes.append(PropertyMapping(name: attribute.name, valueExpression: expression))
                }
                var relationships: [PropertyMapping] = []
                for relationship in destination.allRelationships(of: entity.name) where !relationship.isTransient {
                    if composed.reduced.contains(relationship.name),
                        destination.allRelationships(of: relationship.destination).first(where: { $0.name == relationship.inverse })?.isToMany != false
                    {
                        throw Refusal(
                            reason:
                                "\(entity.name).\(relationship.name): an earlier step cut its inverse to a to-one, keeping one link of several, and no to-one inverse holds that choice now"
                        )
                    }
                    let expression = try objectsExpression(composed.relationships[relationship.name] ?? nil, of: composed, relationship, in: destination)
                    relationships.append(PropertyMapping(name: relationship.name, valueExpression: expression))
                }
                mappings.append(
                    EntityMapping(
                        name: Self.name(composed), type: .transform, sourceEntity: composed.source, destinationEntity: entity.name,
                        attributeMappings: attributes, relationshipMappings: relationships))
            }
            let migrated = Set(mappings.compactMap(\.sourceEntity))
            var names = Set(mappings.map(\.name))
            for entity in start.entitiesInStoreOrder where !migrated.contains(entity.name) {
                // An entity removed and added again by later steps already names the mapping that adds it.
                var name = entity.name, suffix = 1
                while names.contains(name) {
                    name = "\(entity.name)Removed\(suffix == 1 ? "" : String(suffix))"
                    suffix += 1
                }
                names.insert(name)
                mappings.append(EntityMapping(name: name, type: .remove, sourceEntity: entity.name, destinationEntity: nil))
            }
            return MappingModel(sourceVersion: start.versionName, destinationVersion: destination.versionName, entityMappings: mappings)
        }

        /// The value expression giving `objects` to `relationship` of `composed`'s destination
        /// entity: every object made from the first version's targets where that is what the
        /// steps kept (the relationship's destination entity narrowing it as each step did),
        /// those of the one composed entity mapping that kept any, or none.
        private func objectsExpression(_ objects: Objects?, of composed: Composed, _ relationship: Relationship, in destination: ObjectModel) throws(Refusal)
            -> String?
        {
            guard let objects, !objects.entities.isEmpty else { return nil }
            let origin = start.allRelationships(of: composed.source!).first { $0.name == objects.relationship }!
            let targets = Set(start.descendants(of: origin.destination).map(\.name))
            let holdable = Set(destination.descendants(of: relationship.destination).map(\.name))
            let everyMade = Set(reached.values.filter { $0.source.map(targets.contains) == true && holdable.contains($0.destination) }.map(\.destination))
            if objects.entities == everyMade {
                return "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"\(origin.name)\", $source.\(origin.name))"
            }
            guard objects.entities.count == 1, let made = reached[objects.entities.first!] else {
                throw Refusal(
                    reason:
                        "\(composed.destination).\(relationship.name): the steps keep the objects of \(objects.entities.sorted().joined(separator: ", ")) only, which one expression cannot select"
                )
            }
            return "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(Self.name(made))\", $source.\(origin.name))"
        }

        /// The source attribute an inferred value expression copies (`$source.name`, or
        /// `ifNil:($source.name, default)`), and whether it falls back to the default.
        static func inferredCopy(_ text: String) -> (String, Bool)? {
            let prefix = "$source.", fallbackPrefix = "ifNil:($source."
            let isIdentifier = { (name: Substring) in !name.isEmpty && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } }
            if text.hasPrefix(prefix), isIdentifier(text.dropFirst(prefix.count)) { return (String(text.dropFirst(prefix.count)), false) }
            if text.hasPrefix(fallbackPrefix), text.hasSuffix(")") {
                let name = text.dropFirst(fallbackPrefix.count).prefix { $0 != "," }
                if isIdentifier(name) { return (String(name), true) }
            }
            return nil
        }
    }
}
