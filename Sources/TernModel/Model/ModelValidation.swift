import Foundation

/// Checks a model the way Core Data does when it loads one, naming the entity and property at fault.
extension ObjectModel {
    /// Every problem found, in a stable order; empty for a valid model.
    public func problems() -> [String] {
        var problems: [String] = []
        var seenEntities: Set<String> = []
        for entity in entities {
            let at = "entity \(entity.name)"
            if !isIdentifier(entity.name) { problems.append("\(at): the name is not an identifier (letters, digits, _; not starting with a digit)") }
            if !seenEntities.insert(entity.name).inserted { problems.append("\(at): defined twice") }
            if let parent = entity.parent {
                if entity.parent == entity.name {
                    problems.append("\(at): is its own parent")
                } else if self.entity(named: parent) == nil {
                    problems.append("\(at): parent entity \(parent) does not exist")
                } else if lineage(of: entity.name).last?.parent != nil {
                    problems.append("\(at): inheritance cycle through \(lineage(of: entity.name).map(\.name).joined(separator: " → "))")
                }
            }
            problems += propertyProblems(of: entity)
        }
        return problems
    }

    private func propertyProblems(of entity: Entity) -> [String] {
        var problems: [String] = []
        let inherited = Set(lineage(of: entity.name).dropFirst().flatMap(\.propertyNames))
        var seen: Set<String> = []
        for name in entity.propertyNames {
            if !isIdentifier(name) { problems.append("entity \(entity.name), property \(name): the name is not an identifier") }
            if !seen.insert(name).inserted { problems.append("entity \(entity.name), property \(name): defined twice") }
            if inherited.contains(name) { problems.append("entity \(entity.name), property \(name): already defined by a parent entity") }
        }
        for attribute in entity.attributes {
            problems += attributeProblems(attribute, in: entity)
        }
        for relationship in entity.relationships {
            problems += relationshipProblems(relationship, in: entity)
        }
        let attributeNames = Set(allAttributes(of: entity.name).map(\.name))
        for constraint in entity.uniquenessConstraints {
            for name in constraint where !attributeNames.contains(name) && !allRelationships(of: entity.name).contains(where: { $0.name == name }) {
                problems.append("entity \(entity.name): uniqueness constraint names \(name), which is not a property")
            }
        }
        for attribute in entity.attributes {
            guard case .count(let name)? = attribute.derivation else { continue }
            if allRelationships(of: entity.name).first(where: { $0.name == name })?.isToMany != true {
                problems.append("entity \(entity.name), attribute \(attribute.name): the derivation \(name).@count names no to-many relationship")
            }
        }
        let indexed = entity.compoundIndexes.flatMap { $0 } + entity.fetchIndexes.flatMap(\.properties)
        for name in indexed where !attributeNames.contains(name) && !allRelationships(of: entity.name).contains(where: { $0.name == name }) {
            problems.append("entity \(entity.name): an index names \(name), which is not a property")
        }
        return problems
    }

    private func attributeProblems(_ attribute: Attribute, in entity: Entity) -> [String] {
        let at = "entity \(entity.name), attribute \(attribute.name)"
        var problems: [String] = []
        if attribute.type == .undefined && !attribute.isTransient {
            // Xcode allows "Undefined" for a transient attribute alone: a stored one needs a column type.
            problems.append("\(at): a stored attribute needs a type (Undefined is for transient attributes only)")
        }
        if let value = attribute.defaultValue, value != .null {
            if let reason = attribute.type.rejectionReason(for: value) {
                problems.append("\(at): default value \(value) \(reason)")
            }
        }
        let rules = attribute.validation
        if let low = rules.minimumValue, let high = rules.maximumValue, low > high {
            problems.append("\(at): minimum value \(low) is above maximum value \(high)")
        }
        if let low = rules.minimumLength, let high = rules.maximumLength, low > high {
            problems.append("\(at): minimum length \(low) is above maximum length \(high)")
        }
        // Compiled by the engine validation runs it with (ICU's, through NSRegularExpression).
        if let pattern = rules.pattern, (try? NSRegularExpression(pattern: pattern)) == nil {
            problems.append("\(at): \(pattern) is not a valid regular expression")
        }
        return problems
    }

    private func relationshipProblems(_ relationship: Relationship, in entity: Entity) -> [String] {
        let at = "entity \(entity.name), relationship \(relationship.name)"
        guard let destination = self.entity(named: relationship.destination) else {
            let known = entities.map(\.name).joined(separator: ", ")
            return ["\(at): destination entity \(relationship.destination) does not exist (entities: \(known))"]
        }
        var problems: [String] = []
        if relationship.minCount < 0 || relationship.maxCount < -1 || (relationship.maxCount == -1 && !relationship.isToMany) {
            problems.append("\(at): counts cannot be negative (a to-many's maxCount -1 alone: no limit, as NSUIntegerMax)")
        } else if relationship.maxCount > 0 && relationship.minCount > relationship.maxCount {
            problems.append("\(at): minCount \(relationship.minCount) is above maxCount \(relationship.maxCount)")
        }
        if !relationship.isToMany && relationship.maxCount != 1 {
            problems.append("\(at): a to-one relationship has maxCount 1, not \(relationship.maxCount)")
        }
        if relationship.isOrdered && !relationship.isToMany {
            problems.append("\(at): only a to-many relationship can be ordered")
        }
        if let inverseName = relationship.inverse {
            let candidates = allRelationships(of: destination.name)
            if let inverse = candidates.first(where: { $0.name == inverseName }) {
                let pointsBack =
                    lineage(of: entity.name).contains { $0.name == inverse.destination }
                    || descendants(of: inverse.destination).contains { $0.name == entity.name }
                if !pointsBack {
                    problems.append("\(at): inverse \(destination.name).\(inverseName) points to \(inverse.destination), not back to \(entity.name)")
                } else if let back = inverse.inverse ?? inverse.unreciprocatedInverse, back != relationship.name {
                    problems.append("\(at): inverse \(destination.name).\(inverseName) names \(back) as its inverse, not \(relationship.name)")
                } else if relationship.isToMany, inverseName == relationship.name, destination.name == entity.name {
                    // Its join table would name both columns alike; how Core Data tells them apart is not known here.
                    problems.append("\(at): a to-many that is its own inverse is not supported (give it an inverse of its own, or none)")
                }
            } else {
                problems.append("\(at): inverse \(inverseName) is not a relationship of \(destination.name)")
            }
        }
        return problems
    }

    private func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
    }
}
