import TernModel
import TernStore
import TernMapping
import TernPlanning
/// One unit of a step's work, as its checkpoint records it: what a run that resumes may skip.
/// Stored as text in the step's store (`key`); a key that does not parse is a damaged store.
package enum WorkUnit: Hashable, Sendable {
    /// Stage 1 of an entity mapping (its number across passes, and its name).
    case createInstances(mapping: Int, name: String)
    /// Stage 2: the links of one relationship mapping.
    case links(mapping: Int, name: String, relationship: String)
    /// After the last pass: links to objects a later pass made.
    case laterLinks(mapping: Int, name: String, relationship: String)
    /// A one-to-one's other side, written from the mapped side.
    case mirror(mapping: Int, name: String, relationship: String)
    /// A policy's `createRelationships` for the objects of one entity mapping.
    case relationshipHook(mapping: Int)
    /// The links policies made in one pass, per relationship, then the pass as a whole.
    case policyLinks(pass: Int, entity: String, relationship: String)
    case policyLinksApplied(pass: Int)
    /// Stage 3 of a pass: every object its entity mappings created met the destination model's
    /// rules and the policies' own validation.
    case validated(pass: Int)
    /// The policy of an entity mapping gave every source object exactly one object of its table,
    /// with the source's key: committed with its stage 1, so lookups are the key itself and no
    /// later stage or resume finds it out again.
    case keptKeys(mapping: Int)

    /// The stored form.
    var key: String {
        switch self {
        case .createInstances(let number, let name): "create:\(number):\(name)"
        case .links(let number, let name, let relationship): "links:\(number):\(name).\(relationship)"
        case .laterLinks(let number, let name, let relationship): "later:\(number):\(name).\(relationship)"
        case .mirror(let number, let name, let relationship): "mirror:\(number):\(name).\(relationship)"
        case .relationshipHook(let number): "hook:\(number)"
        case .policyLinks(let pass, let entity, let relationship): "policylinks:\(pass):\(entity).\(relationship)"
        case .policyLinksApplied(let pass): "policylinks:\(pass)"
        case .validated(let pass): "validated:\(pass)"
        case .keptKeys(let number): "kept:\(number)"
        }
    }

    /// Reads a stored key; nil when it is not one Tern writes.
    init?(key: String) {
        let parts = key.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 2, let number = Int(parts[1]) else { return nil }
        /// "Name.relationship": a relationship's name has no dot; a mapping's may.
        func named() -> (String, String)? {
            guard parts.count == 3, let dot = parts[2].lastIndex(of: ".") else { return nil }
            return (String(parts[2][..<dot]), String(parts[2][parts[2].index(after: dot)...]))
        }
        switch parts[0] {
        case "create" where parts.count == 3: self = .createInstances(mapping: number, name: parts[2])
        case "links": guard let (name, relationship) = named() else { return nil }; self = .links(mapping: number, name: name, relationship: relationship)
        case "later": guard let (name, relationship) = named() else { return nil }; self = .laterLinks(mapping: number, name: name, relationship: relationship)
        case "mirror": guard let (name, relationship) = named() else { return nil }; self = .mirror(mapping: number, name: name, relationship: relationship)
        case "hook" where parts.count == 2: self = .relationshipHook(mapping: number)
        case "policylinks" where parts.count == 2: self = .policyLinksApplied(pass: number)
        case "validated" where parts.count == 2: self = .validated(pass: number)
        case "kept" where parts.count == 2: self = .keptKeys(mapping: number)
        case "policylinks":
            guard let (entity, relationship) = named() else { return nil }; self = .policyLinks(pass: number, entity: entity, relationship: relationship)
        default: return nil
        }
        // Only the very text Tern writes ("01" or "+1" would parse as 1).
        guard self.key == key else { return nil }
    }

    /// What the unit does, in words, for `tern status`.
    var stage: String {
        switch self {
        case .createInstances, .keptKeys: "create instances"
        case .links, .laterLinks, .mirror: "recreate relationships"
        case .relationshipHook: "policy relationships"
        case .policyLinks, .policyLinksApplied: "apply policy links"
        case .validated: "validate"
        }
    }

    /// What the unit belongs to: the entity mapping (and relationship), or the pass.
    var subject: String {
        switch self {
        case .createInstances(_, let name): name
        case .links(_, let name, let relationship), .laterLinks(_, let name, let relationship), .mirror(_, let name, let relationship):
            "\(name).\(relationship)"
        case .relationshipHook(let number), .keptKeys(let number): "entity mapping \(number)"
        case .policyLinks(_, let entity, let relationship): "\(entity).\(relationship)"
        case .policyLinksApplied(let pass), .validated(let pass): "pass \(pass + 1)"
        }
    }
}
