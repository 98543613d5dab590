/// One version of a model: the entities a store of that version holds.
///
/// Entities are kept sorted by name, which is also the order Core Data numbers inheritance roots
/// and siblings in. Lookups that follow inheritance (`allAttributes(of:)`, `root(of:)`) assume a
/// valid model (`problems()` is empty); loaders check that before returning one.
public struct ObjectModel: Sendable, Equatable {
    /// The version's name, e.g. "BookStore 2".
    public var versionName: String
    /// The developer's version identifiers: hints, never part of a hash.
    public var versionIdentifiers: [String]
    /// Every entity of the version, sorted by name in UTF-8 byte order.
    public private(set) var entities: [Entity]

    /// A version holding `entities`, which are sorted by name here; it is not validated.
    public init(versionName: String, versionIdentifiers: [String] = [], entities: [Entity]) {
        self.versionName = versionName
        self.versionIdentifiers = versionIdentifiers
        self.entities = entities.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// The entity called `name`, or nil when the version has none.
    public func entity(named name: String) -> Entity? {
        entities.first { $0.name == name }
    }

    /// Direct subentities, by name.
    public func children(of name: String) -> [Entity] {
        entities.filter { $0.parent == name }
    }

    /// The entity and its ancestors, the entity first.
    public func lineage(of name: String) -> [Entity] {
        var chain: [Entity] = []
        var next = entity(named: name)
        while let current = next, !chain.contains(where: { $0.name == current.name }) {
            chain.append(current)
            next = current.parent.flatMap(entity(named:))
        }
        return chain
    }

    /// The entity of `entity`'s lineage that declares the relationship `name` (itself when none does).
    package func entityDeclaring(relationship name: String, from entity: String) -> String {
        lineage(of: entity).first { $0.relationships.contains { $0.name == name } }?.name ?? entity
    }

    /// The root of the entity's inheritance tree (itself for a root).
    public func root(of name: String) -> Entity? {
        lineage(of: name).last
    }

    /// The entity and every entity below it, depth-first. Each entity once: in a model with an
    /// inheritance cycle (which `problems()` reports) the walk stops where it comes back.
    public func descendants(of name: String) -> [Entity] {
        guard let start = entity(named: name) else { return [] }
        var found: [Entity] = []
        var seen: Set<String> = []
        func visit(_ entity: Entity) {
            guard seen.insert(entity.name).inserted else { return }
            found.append(entity)
            children(of: entity.name).forEach(visit)
        }
        visit(start)
        return found
    }

    /// Attributes including inherited ones, the root's first.
    public func allAttributes(of name: String) -> [Attribute] {
        lineage(of: name).reversed().flatMap(\.attributes)
    }

    /// Relationships including inherited ones, the root's first.
    public func allRelationships(of name: String) -> [Relationship] {
        lineage(of: name).reversed().flatMap(\.relationships)
    }

    /// The inverse of `relationship` (declared on its destination or an ancestor of it), if any.
    public func inverse(of relationship: Relationship) -> Relationship? {
        relationship.inverse.flatMap { name in allRelationships(of: relationship.destination).first { $0.name == name } }
    }

    /// Whether one object can be reached through `relationship` from several objects: a to-one
    /// whose inverse is not a to-one, or a many-to-many. A to-many with no inverse cannot: Core
    /// Data keeps it as a key in each destination's row, so a destination has one owner.
    public func reachesSharedObjects(_ relationship: Relationship) -> Bool {
        let inverse = inverse(of: relationship)
        return relationship.isToMany ? inverse?.isToMany == true : inverse?.isToMany != false
    }
}

extension ObjectModel: Codable {
    private enum CodingKeys: String, CodingKey {
        case versionName, versionIdentifiers, entities
    }

    /// Decodes through `init(versionName:versionIdentifiers:entities:)`, which keeps entities in
    /// name order (entity numbers follow it). Not validated: a reader calls `problems()`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            versionName: try container.decode(String.self, forKey: .versionName),
            versionIdentifiers: try container.decode([String].self, forKey: .versionIdentifiers),
            entities: try container.decode([Entity].self, forKey: .entities))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(versionName, forKey: .versionName)
        try container.encode(versionIdentifiers, forKey: .versionIdentifiers)
        try container.encode(entities, forKey: .entities)
    }
}
