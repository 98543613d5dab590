/// A fetch index: SQLite indexes Core Data creates for an entity.
public struct FetchIndex: Sendable, Equatable {
    public var name: String
    /// Property names, in index order.
    public var properties: [String]

    public init(name: String, properties: [String]) {
        self.name = name
        self.properties = properties
    }
}

/// An entity: a kind of object, stored in its inheritance root's table.
public struct Entity: Sendable, Equatable {
    public var name: String
    /// The parent entity's name, for entities in an inheritance tree.
    public var parent: String?
    public var isAbstract: Bool
    public var renamingIdentifier: String?
    public var versionHashModifier: String?
    /// The class that represents the entity in an app; irrelevant to storage.
    public var className: String?
    public var userInfo: [String: String]
    /// The entity's own attributes, not inherited ones.
    public var attributes: [Attribute]
    /// The entity's own relationships, not inherited ones.
    public var relationships: [Relationship]
    /// Each constraint is a list of attribute names whose values are unique together.
    public var uniquenessConstraints: [[String]]
    public var fetchIndexes: [FetchIndex]

    public init(
        name: String, parent: String? = nil, isAbstract: Bool = false, renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil, className: String? = nil, userInfo: [String: String] = [:],
        attributes: [Attribute] = [], relationships: [Relationship] = [],
        uniquenessConstraints: [[String]] = [], fetchIndexes: [FetchIndex] = []
    ) {
        self.name = name
        self.parent = parent
        self.isAbstract = isAbstract
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.className = className
        self.userInfo = userInfo
        self.attributes = attributes
        self.relationships = relationships
        self.uniquenessConstraints = uniquenessConstraints
        self.fetchIndexes = fetchIndexes
    }

    public var renamingKey: String { renamingIdentifier ?? name }

    public func attribute(named name: String) -> Attribute? {
        attributes.first { $0.name == name }
    }

    public func relationship(named name: String) -> Relationship? {
        relationships.first { $0.name == name }
    }

    /// Every own property name, attributes then relationships.
    public var propertyNames: [String] {
        attributes.map(\.name) + relationships.map(\.name)
    }
}
