import TernModel
import TernStore
import TernMapping
import TernPlanning

/// Which plans a live migration can catch up from changed keys alone, decided before any work
/// (a refusal after the copy would waste it): one step of one pass, every entity mapping in
/// SQL and keeping its keys — a destination object is then a function of its source object's
/// row and links, written again when the log names it (`StepMigrator.catchUp`).
package enum LiveEligibility {
    /// Why the plan's steps cannot run live, in words naming what is at fault, or nil.
    package static func refusal(_ plans: [StepPlan]) -> String? {
        guard plans.count == 1, let plan = plans.first else {
            let route = plans.map(\.step.identity.description).joined(separator: ", ")
            return
                "the plan has \(plans.count) steps (\(route)): --live catches up one step; migrate offline, or give a mapping straight to the target version"
        }
        let step = plan.step
        if step.passes.count > 1 {
            return "step \(step.identity) runs in \(step.passes.count) passes: --live catches up a step of one pass"
        }
        for entry in plan.mappings {
            let name = entry.entityMapping.name
            if entry.runsInSwift {
                let by = entry.entityMapping.policy.map { "policy \($0)" } ?? "a manager hook"
                return
                    "entity mapping \(name) runs in Swift (\(by)): --live catches up mappings that run in SQL (a policy's objects cannot be made again from a changed row)"
            }
            if !entry.keepsKeys {
                return
                    "entity mapping \(name) gives its objects new keys (a filter, or several mappings into one table): --live catches up mappings that keep their keys"
            }
        }
        let destination = StoreLayout(model: step.destination)
        if let derived = destination.triggeredDerivations.sorted(by: { $0.description < $1.description }).first {
            return "\(derived) is derived and kept by Core Data's triggers: --live does not catch derived attributes up"
        }
        if !destination.triggerStatements.isEmpty || !destination.derivedValueStatements.isEmpty {
            return "version \(step.destination.versionName) has derived values computed over whole tables: --live does not catch them up"
        }
        for model in [step.source, step.destination] {
            for entity in model.entities {
                if let attribute = entity.attributes.first(where: \.allowsExternalStorage) {
                    return
                        "\(entity.name).\(attribute.name) (\(model.versionName)) may store its values in files beside the store: --live does not catch such files up"
                }
            }
        }
        for entry in plan.mappings {
            if let refusal = readsOtherObjects(entry) ?? linksChosenAcrossObjects(entry, step: step, destination: destination) { return refusal }
        }
        return nil
    }

    /// A value read through a relationship or counted over one: it changes when another object
    /// does, and a round writes again only the objects whose own rows changed.
    private static func readsOtherObjects(_ entry: PlannedMapping) -> String? {
        for (attribute, expression) in entry.mapping.attributes.sorted(by: { $0.key < $1.key }) {
            for input in expression.inputs {
                if !input.relationships.isEmpty {
                    return
                        "\(entry.destinationEntity).\(attribute) reads \(([input.entity] + input.relationships).joined(separator: ".")), another object: --live catches up values read from the object's own row"
                }
                if case .count(let relationship) = input.final {
                    return
                        "\(entry.destinationEntity).\(attribute) counts \(input.entity).\(relationship): --live catches up values read from the object's own row"
                }
            }
        }
        return nil
    }

    /// Links whose place depends on objects other than their two ends: a to-one chosen among a
    /// to-many's targets, a one-to-one's two keys, a hidden key holding the smallest of several
    /// owners, a list numbered whole. A round rewrites the links of changed objects only.
    private static func linksChosenAcrossObjects(_ entry: PlannedMapping, step: MigrationStep, destination: StoreLayout) -> String? {
        let source = step.sourceLayout
        for (name, from) in entry.mapping.relationships.sorted(by: { $0.key < $1.key }) {
            guard let relationship = step.destination.allRelationships(of: entry.destinationEntity).first(where: { $0.name == name }) else { continue }
            let sourceName: String
            switch from {
            case .entityMapping(_, let relationship): sourceName = relationship
            case .sourceRelationship(let relationship): sourceName = relationship
            }
            let sourceRelationship = step.source.allRelationships(of: entry.sourceEntity).first { $0.name == sourceName }
            let place = "\(entry.destinationEntity).\(name)"
            if !relationship.isToMany, sourceRelationship?.isToMany == true {
                return
                    "\(place) is a to-one chosen among \(entry.sourceEntity).\(sourceName)'s objects: --live catches up links between the objects a change names"
            }
            if !relationship.isToMany, let inverse = relationship.inverse,
                step.destination.allRelationships(of: relationship.destination).first(where: { $0.name == inverse })?.isToMany == false
            {
                return "\(place) is one side of a one-to-one (a key in each object): --live does not catch one-to-ones up"
            }
            let storage = destination.storage(ofRelationship: name, of: entry.destinationEntity)
            if case .hiddenKey = storage {
                return "\(place) is a to-many with no inverse, kept as one owner's key in each target: --live does not catch it up"
            }
            if storage?.orderColumn != nil, source.storage(ofRelationship: sourceName, of: entry.sourceEntity)?.orderColumn == nil {
                return "\(place) is ordered but \(entry.sourceEntity).\(sourceName) is not: its lists are numbered whole, which --live does not catch up"
            }
        }
        return nil
    }
}
