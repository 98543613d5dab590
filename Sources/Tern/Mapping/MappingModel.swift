/// How instances of one source entity become instances of one destination entity
/// (the Programming Guide's entity mapping types).
public enum EntityMappingType: String, Sendable, Codable, CaseIterable {
    /// New destination entity with no source: nothing to migrate.
    case add
    /// Source entity with no destination: its instances are not migrated.
    case remove
    /// Same entity, same properties: values copied as they are.
    case copy
    /// Properties mapped by value expressions.
    case transform
    /// A custom entity migration policy creates the destination instances.
    case custom
}

/// One property of the destination entity and the value expression that produces it.
public struct PropertyMapping: Sendable, Equatable {
    /// The destination property's name.
    public var name: String
    /// NSExpression text; nil leaves the property at its default (or empty, for a relationship).
    public var valueExpression: String?
    public var userInfo: [String: String]

    public init(name: String, valueExpression: String?, userInfo: [String: String] = [:]) {
        self.name = name
        self.valueExpression = valueExpression
        self.userInfo = userInfo
    }
}

/// An entity mapping, named like `BookToPublication`.
public struct EntityMapping: Sendable, Equatable {
    public var name: String
    public var type: EntityMappingType
    public var sourceEntity: String?
    public var destinationEntity: String?
    /// Only source instances matching this NSPredicate are migrated.
    public var filterPredicate: String?
    /// The name of a registered custom entity migration policy.
    public var policy: String?
    public var userInfo: [String: String]
    public var attributeMappings: [PropertyMapping]
    public var relationshipMappings: [PropertyMapping]

    public init(
        name: String, type: EntityMappingType, sourceEntity: String?, destinationEntity: String?,
        filterPredicate: String? = nil, policy: String? = nil, userInfo: [String: String] = [:],
        attributeMappings: [PropertyMapping] = [], relationshipMappings: [PropertyMapping] = []
    ) {
        self.name = name
        self.type = type
        self.sourceEntity = sourceEntity
        self.destinationEntity = destinationEntity
        self.filterPredicate = filterPredicate
        self.policy = policy
        self.userInfo = userInfo
        self.attributeMappings = attributeMappings
        self.relationshipMappings = relationshipMappings
    }
}

/// The ordered entity mappings that take a store from one model version to another.
public struct MappingModel: Sendable, Equatable {
    /// Version names, when known (Tern's files name them; Xcode's name model paths).
    public var sourceVersion: String?
    public var destinationVersion: String?
    /// Run in this order.
    public var entityMappings: [EntityMapping]

    public init(sourceVersion: String?, destinationVersion: String?, entityMappings: [EntityMapping]) {
        self.sourceVersion = sourceVersion
        self.destinationVersion = destinationVersion
        self.entityMappings = entityMappings
    }

    public func entityMapping(named name: String) -> EntityMapping? {
        entityMappings.first { $0.name == name }
    }
}
