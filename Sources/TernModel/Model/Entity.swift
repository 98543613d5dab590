/// A fetch index: SQLite indexes Core Data creates for an entity.
public struct FetchIndex: Sendable, Equatable, Codable {
    /// The index's name in the model; the SQLite index is named `Z_<entity>_<name>`.
    public var name: String
    /// Property names, in index order.
    public var properties: [String]

    /// A fetch index named `name` over `properties`, in index order.
    public init(name: String, properties: [String]) {
        self.name = name
        self.properties = properties
    }
}

/// An entity: a kind of object, stored in its inheritance root's table.
public struct Entity: Sendable, Equatable, Codable {
    /// The entity's name, unique in its model version (`problems()` reports a clash).
    public var name: String
    /// The parent entity's name, for entities in an inheritance tree.
    public var parent: String?
    /// Whether the entity has no instances of its own, only through its subentities.
    public var isAbstract: Bool
    /// The entity's name in an earlier version, when it was renamed (Xcode's `elementID`).
    public var renamingIdentifier: String?
    /// Changes the version hash without changing anything else.
    public var versionHashModifier: String?
    /// The class that represents the entity in an app; irrelevant to storage.
    public var className: String?
    /// The entity's user info from the model file; not part of the version hash, and not read by Tern.
    public var userInfo: [String: String]
    /// The entity's own attributes, not inherited ones.
    public var attributes: [Attribute]
    /// The entity's own relationships, not inherited ones.
    public var relationships: [Relationship]
    /// Each constraint is a list of attribute names whose values are unique together.
    public var uniquenessConstraints: [[String]]
    /// The fetch indexes declared on the entity, created in the store after its rows are loaded.
    public var fetchIndexes: [FetchIndex]
    /// Xcode 7's compound indexes (`<compoundIndexes>`): each a list of property names, indexed
    /// together as `<TABLE>_<COLUMN>_<COLUMN>…`. Later Xcodes write fetch indexes instead.
    public var compoundIndexes: [[String]]

    /// An entity; see the properties for what each argument means.
    public init(
        name: String, parent: String? = nil, isAbstract: Bool = false, renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil, className: String? = nil, userInfo: [String: String] = [:],
        attributes: [Attribute] = [], relationships: [Relationship] = [],
        uniquenessConstraints: [[String]] = [], fetchIndexes: [FetchIndex] = [], compoundIndexes: [[String]] = []
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
        self.compoundIndexes = compoundIndexes
    }

    /// The identity that survives renames: the renaming identifier, else the name.
    public var renamingKey: String { renamingIdentifier ?? name }

    /// The entity's own attribute called `name`, or nil; inherited attributes are not searched.
    public func attribute(named name: String) -> Attribute? {
        attributes.first { $0.name == name }
    }

    /// The entity's own relationship called `name`, or nil; inherited relationships are not searched.
    public func relationship(named name: String) -> Relationship? {
        relationships.first { $0.name == name }
    }

    /// Every own property name, attributes then relationships.
    public var propertyNames: [String] {
        attributes.map(\.name) + relationships.map(\.name)
    }
}
