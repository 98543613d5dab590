import TernSQLite

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
                return .failure(Refusal(reason: "\(step.source.versionName) → \(step.destination.versionName) has a mapping file (only inferred steps are composed)"))
            }
            if let refusal = chain.apply(step) { return .failure(refusal) }
        }
        do {
            let model = try chain.mappingModel(to: last.destination)
            let validated = try model.validate(source: first.source, destination: last.destination, now: now)
            let versions = ([first.source] + steps.map(\.destination)).map(\.versionName).joined(separator: " → ")
            return .success(MigrationStep(source: first.source, destination: last.destination, passes: [validated], isInferred: true,
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

    /// A destination relationship's objects, in terms of the first version's object.
    private enum Objects: Equatable {
        /// Those the composed entity mapping that now makes `mapping`'s destination entity made
        /// from the first version's `relationship`.
        case madeBy(destinationEntity: String, relationship: String)
        /// Those any composed entity mapping made from the first version's `relationship`.
        case anyMadeFrom(relationship: String)
    }

    /// One composed entity mapping, from an entity of the first version to one of the version reached.
    private struct Composed {
        var source: String?
        var destination: String
        var attributes: [String: Value] = [:]
        /// Relationship → its objects (nil: none).
        var relationships: [String: Objects?] = [:]
        /// Relationships whose order some step dropped, or that some step cut to a to-one.
        var truncated: Set<String> = []
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
                    identity.relationships[relationship.name] = .anyMadeFrom(relationship: relationship.name)
                    if relationship.isOrdered { identity.ordered.insert(relationship.name) }
                }
                reached[entity.name] = identity
            }
        }

        /// Composes `step` onto the chain; a refusal when the result could differ from running it.
        mutating func apply(_ step: MigrationStep) -> Refusal? {
            let mapping = step.passes[0]
            var next: [String: Composed] = [:]
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
                        return Refusal(reason: "\(step.source.versionName) → \(step.destination.versionName): \(destination).\(attribute.name) is not a copy (\(text))")
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
                    switch (source, reaching) {
                    case (.entityMapping(let name, _), .madeBy(let made, let firstRelationship)):
                        let target = mapping.entities.first { $0.mapping.name == name }?.mapping
                        after.relationships[relationship.name] = target?.sourceEntity == made
                            ? .madeBy(destinationEntity: target!.destinationEntity!, relationship: firstRelationship) : .some(nil)
                    case (.entityMapping(let name, _), .anyMadeFrom(let firstRelationship)):
                        let target = mapping.entities.first { $0.mapping.name == name }?.mapping
                        after.relationships[relationship.name] = target.map { .madeBy(destinationEntity: $0.destinationEntity!, relationship: firstRelationship) } ?? .some(nil)
                    case (.sourceRelationship, .anyMadeFrom):
                        after.relationships[relationship.name] = reaching
                    case (.sourceRelationship, .madeBy(let made, let firstRelationship)):
                        let targets = mapping.entities.filter { $0.mapping.sourceEntity == made && $0.mapping.destinationEntity != nil }
                        guard targets.count <= 1 else {
                            return Refusal(reason: "\(step.source.versionName) → \(step.destination.versionName): \(destination).\(relationship.name) reaches objects of \(made), which several entity mappings migrate")
                        }
                        after.relationships[relationship.name] = targets.first.map { .madeBy(destinationEntity: $0.mapping.destinationEntity!, relationship: firstRelationship) } ?? .some(nil)
                    }
                    after.truncated = after.truncated.union(before.truncated.contains(origin) ? [relationship.name] : [])
                    let wasToMany = step.source.allRelationships(of: sourceName).first { $0.name == origin }?.isToMany ?? false
                    if wasToMany && !relationship.isToMany { after.truncated.insert(relationship.name) }
                    if before.ordered.contains(origin) && !relationship.isOrdered { after.truncated.insert(relationship.name) }
                    if relationship.isOrdered && before.ordered.contains(origin) { after.ordered.insert(relationship.name) }
                    if relationship.isOrdered && !before.ordered.contains(origin) && before.truncated.contains(origin) {
                        return Refusal(reason: "\(step.source.versionName) → \(step.destination.versionName): the order of \(destination).\(relationship.name) was dropped by an earlier step and is made again here")
                    }
                    if before.truncated.contains(origin) && relationship.isToMany && step.source.allRelationships(of: sourceName).first(where: { $0.name == origin })?.isToMany == false {
                        return Refusal(reason: "\(step.source.versionName) → \(step.destination.versionName): \(destination).\(relationship.name) becomes a to-many again after an earlier step cut it to a to-one")
                    }
                }
                next[destination] = after
            }
            reached = next
            return nil
        }

        /// The mapping model from the first version to `destination` that the chain describes.
        func mappingModel(to destination: ObjectModel) throws(Refusal) -> MappingModel {
            func name(_ composed: Composed) -> String {
                composed.source.map { "\($0)To\(composed.destination)" } ?? composed.destination
            }
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
                        guard let literal = ExpressionText.literal(fallback) else { throw Refusal(reason: "\(entity.name).\(attribute.name): its default cannot be written as an expression") }
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
                    let expression: String? = switch composed.relationships[relationship.name] ?? nil {
                    case nil: nil
                    case .madeBy(let made, let origin)?:
                        "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(name(reached[made]!))\", $source.\(origin))"
                    case .anyMadeFrom(let origin)?:
                        "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"\(origin)\", $source.\(origin))"
                    }
                    relationships.append(PropertyMapping(name: relationship.name, valueExpression: expression))
                }
                mappings.append(EntityMapping(name: name(composed), type: .transform, sourceEntity: composed.source, destinationEntity: entity.name,
                                              attributeMappings: attributes, relationshipMappings: relationships))
            }
            let migrated = Set(mappings.compactMap(\.sourceEntity))
            for entity in start.entitiesInStoreOrder where !migrated.contains(entity.name) {
                mappings.append(EntityMapping(name: entity.name, type: .remove, sourceEntity: entity.name, destinationEntity: nil))
            }
            return MappingModel(sourceVersion: start.versionName, destinationVersion: destination.versionName, entityMappings: mappings)
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
