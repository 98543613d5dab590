/// How far apart two versions of a model are, by what their stores hold, and which versions lie
/// between two others.
///
/// Versions carry no order of their own — Core Data has none, and names only look like one
/// (`CyfaceModel`, `2`, … `13`; `Version 10` before `Version 9`). Where a route needs one, it
/// comes from content. Each version is a set of keyed facts: an entity's identity (superentity,
/// abstractness, hash modifier, renaming identifier) and each of its own stored properties'
/// Core Data version hash (name, type, optionality, destination, inverse, counts, order) with
/// its renaming identifier and default — what decides how a store holds its objects and what an
/// inferred mapping does with them. The distance is the number of keys whose facts differ (a metric: a direct
/// hop is never further than a detour), and a version lies between two others when it keeps
/// every fact the two share: what an intermediate version of a history looks like, whatever it
/// did to the facts that change on the way.
public struct VersionFacts: Sendable, Equatable {
    /// Key (`entity E`, `E.property`) → fact, each an opaque string.
    public let facts: [String: String]

    /// The facts of `version`, keyed by renaming identifier (the name without one), so an
    /// entity or property renamed keeps its key: a rename is a changed fact, not a new one.
    public init(_ version: ObjectModel) {
        var facts: [String: String] = [:]
        for entity in version.entities {
            let key = entity.renamingKey
            facts["entity \(key)"] = "\(entity.name)|\(entity.parent ?? "")|\(entity.isAbstract)|\(entity.versionHashModifier ?? "")"
            let stored: [(name: String, key: String, fact: String)] =
                entity.attributes.filter { !$0.isTransient }.map {
                    ($0.name, $0.renamingKey, VersionHash.hex(VersionHash.of($0)) + "|\($0.defaultValue?.sqlLiteral ?? "")")
                }
                + entity.relationships.filter { !$0.isTransient }.map {
                    ($0.name, $0.renamingIdentifier ?? $0.name, VersionHash.hex(VersionHash.of($0)))
                }
            for property in stored {
                // Two properties sharing an identifier (a renamed one and a new one under the old
                // name): the one named so keeps the key, the other goes by its name.
                let shared = stored.contains { $0.key == property.key && $0.name != property.name && $0.name == property.key }
                facts["\(key).\(shared ? property.name : property.key)"] = property.fact
            }
        }
        self.facts = facts
    }

    /// The number of keys whose facts differ, a key one version lacks included.
    public func distance(to other: VersionFacts) -> Int {
        var count = 0
        for (key, fact) in facts where other.facts[key] != fact { count += 1 }
        for key in other.facts.keys where facts[key] == nil { count += 1 }
        return count
    }

    /// True when these facts keep every fact `a` and `b` share, have every key both have
    /// (whatever its fact: a property both ends hold is never dropped on the way), and have no
    /// key both lack.
    public func lies(between a: VersionFacts, and b: VersionFacts) -> Bool {
        for (key, fact) in a.facts {
            guard let other = b.facts[key] else { continue }
            guard let own = facts[key], other != fact || own == fact else { return false }
        }
        for key in facts.keys where a.facts[key] == nil && b.facts[key] == nil { return false }
        return true
    }

    /// Whether going from these facts to `next` drops a key that `start` and `end` both have:
    /// an inferred hop of a route from `start` to `end` that would lose values both ends keep.
    public func drops(goingTo next: VersionFacts, keptBy start: VersionFacts, and end: VersionFacts) -> Bool {
        facts.keys.contains { next.facts[$0] == nil && start.facts[$0] != nil && end.facts[$0] != nil }
    }
}
