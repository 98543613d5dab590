import TernModel
import TernStore
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
public struct PropertyMapping: Sendable, Equatable, Codable {
    /// The destination property's name.
    public var name: String
    /// NSExpression text; nil leaves the property at its default (or empty, for a relationship).
    public var valueExpression: String?
    /// The property mapping's user info; carried along, not read by Tern.
    public var userInfo: [String: String]

    /// A mapping producing destination property `name` from `valueExpression` (nil: left at its default).
    public init(name: String, valueExpression: String?, userInfo: [String: String] = [:]) {
        self.name = name
        self.valueExpression = valueExpression
        self.userInfo = userInfo
    }
}

/// An entity mapping, named like `BookToPublication`.
public struct EntityMapping: Sendable, Equatable, Codable {
    /// The mapping's name, unique in its mapping model; relationship mappings refer to it by this name.
    public var name: String
    /// How source instances become destination instances.
    public var type: EntityMappingType
    /// The source entity's name; nil for an `add` mapping.
    public var sourceEntity: String?
    /// The destination entity's name; nil for a `remove` mapping.
    public var destinationEntity: String?
    /// Only source instances matching this NSPredicate are migrated.
    public var filterPredicate: String?
    /// The name of a registered custom entity migration policy.
    public var policy: String?

    /// The policy a mapping model's class name stands for: nil for an empty name or Core Data's
    /// own `NSEntityMigrationPolicy` (Xcode writes either for the default policy: objc.io's
    /// Moody 2 → 3, CareKit 2.1 → 3.0), else the name.
    static func policy(className: String?) -> String? {
        className.flatMap { name in
            let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty || trimmed == "NSEntityMigrationPolicy" ? nil : trimmed
        }
    }
    /// The entity mapping's user info (from Xcode's mapping model), for custom policies to read.
    public var userInfo: [String: String]
    /// One mapping per destination attribute set from the source; unlisted attributes keep their defaults.
    public var attributeMappings: [PropertyMapping]
    /// One mapping per destination relationship filled from the source; unlisted ones stay empty.
    public var relationshipMappings: [PropertyMapping]

    /// An entity mapping; see the properties for what each argument means.
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
public struct MappingModel: Sendable, Equatable, Codable {
    /// Version names, when known (Tern's files name them; Xcode's name model paths).
    public var sourceVersion: String?
    /// The destination version's name, when known.
    public var destinationVersion: String?
    /// Run in this order.
    public var entityMappings: [EntityMapping]

    /// A mapping model running `entityMappings` in order, between the named versions (nil: unknown).
    public init(sourceVersion: String?, destinationVersion: String?, entityMappings: [EntityMapping]) {
        self.sourceVersion = sourceVersion
        self.destinationVersion = destinationVersion
        self.entityMappings = entityMappings
    }

    /// The entity mapping called `name`, or nil if there is none.
    public func entityMapping(named name: String) -> EntityMapping? {
        entityMappings.first { $0.name == name }
    }
}
