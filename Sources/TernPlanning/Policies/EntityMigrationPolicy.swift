import TernSQLite
import TernModel
import TernStore
import TernMapping

/// Customises how one entity mapping migrates, with the seven hooks of Core Data's
/// `NSEntityMigrationPolicy`. Every hook has a default that does the standard thing, so a policy
/// overrides only what it changes.
///
/// Policies run off the main thread, batch by batch: they must be `Sendable` and keep no state
/// that depends on the order batches arrive in.
///
/// ```swift
/// struct UppercasePlates: EntityMigrationPolicy {
///     func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
///         var car = try context.defaultDestination(for: source)
///         car["numberPlate"] = .text((try source["numberPlate"].text ?? "").uppercased())
///         context.associate(source, with: context.create(car))
///     }
/// }
/// var registry = PolicyRegistry()
/// registry.register(UppercasePlates(), as: "MyApp.UppercasePlatesPolicy")  // the class the mapping names
/// ```
public protocol EntityMigrationPolicy: Sendable {
    /// Before anything of the mapping runs.
    func beginEntityMapping(_ mapping: EntityMapping) throws
    /// Stage 1, once per source object: create its destination object(s). The default creates
    /// one destination object from the mapping's value expressions and associates it.
    func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws
    /// After every object of the mapping was created.
    func endInstanceCreation(_ mapping: EntityMapping) throws
    /// Stage 2, once per destination object the mapping created, when `createsRelationships` is
    /// true: relate it beyond what the relationship mappings say.
    func createRelationships(forDestination key: Int64, source: Int64, in context: RelationshipContext) throws
    /// After the mapping's relationships were recreated.
    func endRelationshipCreation(_ mapping: EntityMapping) throws
    /// Stage 3: report objects that break rules of your own.
    func performCustomValidation(_ context: ValidationContext) throws
    /// After validation.
    func endEntityMapping(_ mapping: EntityMapping) throws
    /// Whether `createRelationships(forDestination:source:in:)` should be called.
    var createsRelationships: Bool { get }
}

extension EntityMigrationPolicy {
    /// Default: does nothing.
    public func beginEntityMapping(_ mapping: EntityMapping) throws {}
    /// Default: creates the object the mapping's value expressions make from `source`, and associates it.
    public func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
        let object = try context.defaultDestination(for: source)
        context.associate(source, with: context.create(object))
    }
    /// Default: does nothing.
    public func endInstanceCreation(_ mapping: EntityMapping) throws {}
    /// Default: adds no links (and is not called unless `createsRelationships` is true).
    public func createRelationships(forDestination key: Int64, source: Int64, in context: RelationshipContext) throws {}
    /// Default: does nothing.
    public func endRelationshipCreation(_ mapping: EntityMapping) throws {}
    /// Default: reports nothing.
    public func performCustomValidation(_ context: ValidationContext) throws {}
    /// Default: does nothing.
    public func endEntityMapping(_ mapping: EntityMapping) throws {}
    /// Default: false, so stage 2 costs nothing for policies that do not relate objects themselves.
    public var createsRelationships: Bool { false }
}

extension EntityMigrationPolicy {
    /// How errors name this policy: the name `mapping` gives it, or its type.
    package func name(in mapping: EntityMapping) -> String {
        mapping.policy ?? "\(type(of: self))"
    }
}

/// The standard behaviour, for mappings that name no policy but take the Swift path (a manager
/// hook wants their associations).
public struct DefaultMigrationPolicy: EntityMigrationPolicy {
    /// The standard behaviour; it has no configuration.
    public init() {}
}

/// A migration-manager-level hook (the book's `MyMigrationManager`): sees every association the
/// mappings it asks for make, and may change the destination object before it is written.
public protocol MigrationManagerDelegate: Sendable {
    /// Whether this entity mapping's associations should come here (they then run in Swift).
    func observes(_ mapping: EntityMapping) -> Bool
    /// Called for each source → destination association, before the destination is written.
    func associate(source: SourceObject, destination: inout DestinationObject, mapping: EntityMapping)
    /// Whether `associate` may change the values of this mapping's objects; when it may not,
    /// verification checks every value against its expression (default: whenever it observes).
    func mayChangeValues(of mapping: EntityMapping) -> Bool
}

extension MigrationManagerDelegate {
    /// Default: whenever the hook observes the mapping, since `associate` could change any value.
    public func mayChangeValues(of mapping: EntityMapping) -> Bool { observes(mapping) }
}

/// What `createDestinationInstances` works with for one source object.
public final class InstanceCreationContext {
    /// The entity mapping whose source object is being migrated.
    public let mapping: EntityMapping
    private let defaults: (SourceObject) throws -> DestinationObject
    /// What the hook created, associated and linked, in order (a test reads them).
    public private(set) var objects: [DestinationObject] = []
    /// Each source → created object association the hook made (`associate`), in order.
    public private(set) var associations: [(source: SourceObject, object: CreatedObject)] = []
    /// Each link the hook made (`relate`), in order.
    public private(set) var links: [(owner: CreatedObject, relationship: String, target: LinkTarget)] = []

    /// Where a link points: an object created in this batch, one already in the destination, or
    /// whatever an entity mapping makes from a source object (resolved once it exists).
    public enum LinkTarget: Sendable {
        case created(CreatedObject)
        case existing(key: Int64, entity: String)
        case migrated(sourceKey: Int64, entityMapping: String)
    }

    /// A context for calling `createDestinationInstances` yourself, as a test does:
    /// `defaultDestination` stands for what the mapping's value expressions would make.
    public init(mapping: EntityMapping, defaultDestination: @escaping (SourceObject) throws -> DestinationObject) {
        self.mapping = mapping
        self.defaults = defaultDestination
    }

    /// The destination object the mapping's value expressions make from `source`.
    public func defaultDestination(for source: SourceObject) throws -> DestinationObject {
        try defaults(source)
    }

    /// Keys that identify objects made with `findOrCreate`, by object index.
    package private(set) var identities: [Int: [String]] = [:]

    /// Creates a destination object of any entity; it is written with the batch.
    @discardableResult
    public func create(_ object: DestinationObject) -> CreatedObject {
        objects.append(object)
        return CreatedObject(index: objects.count - 1)
    }

    /// The one destination object of `object.entity` whose values for `keys` equal `object`'s,
    /// across the whole step: created the first time, reused after (a fetch-or-insert, such as
    /// one `Maker` per name).
    @discardableResult
    public func findOrCreate(_ object: DestinationObject, identifiedBy keys: [String]) -> CreatedObject {
        let handle = create(object)
        identities[handle.index] = keys
        return handle
    }

    /// Records that `object` was made from `source` (Core Data's
    /// `associateSourceInstance:withDestinationInstance:forEntityMapping:`).
    public func associate(_ source: SourceObject, with object: CreatedObject) {
        associations.append((source, object))
    }

    /// Links `owner` to `target` through `relationship` of the owner's entity.
    public func relate(_ owner: CreatedObject, _ relationship: String, to target: LinkTarget) {
        links.append((owner, relationship, target))
    }

    /// The values of an object created in this batch.
    public func object(_ handle: CreatedObject) -> DestinationObject {
        objects[handle.index]
    }

    package func updateObject(_ handle: CreatedObject, _ object: DestinationObject) {
        objects[handle.index] = object
    }

    /// Empties the context for the next source object, keeping its storage: a worker runs one
    /// context per batch, not one per object.
    package func reset() {
        objects.removeAll(keepingCapacity: true)
        associations.removeAll(keepingCapacity: true)
        links.removeAll(keepingCapacity: true)
        if !identities.isEmpty { identities.removeAll(keepingCapacity: true) }
    }
}

/// What `createRelationships` works with: links to write for one destination object.
public final class RelationshipContext {
    /// The entity mapping whose destination objects are being related.
    public let mapping: EntityMapping
    /// The links the hook made, in order (a test reads them).
    public private(set) var links: [(owner: Int64, ownerEntity: String, relationship: String, target: Int64, targetEntity: String)] = []
    /// Finds the destination keys an entity mapping made from a source key.
    public let destinationKeys: (_ entityMapping: String, _ sourceKey: Int64) throws -> [Int64]

    /// A context for calling `createRelationships` yourself, as a test does.
    public init(mapping: EntityMapping, destinationKeys: @escaping (String, Int64) throws -> [Int64]) {
        self.mapping = mapping
        self.destinationKeys = destinationKeys
    }

    /// Links destination object `owner` (a `Z_PK` of `ownerEntity`) through `relationship` to `target` (of
    /// `targetEntity`). Links are recorded here and written once the hook has run for every object.
    public func relate(_ owner: Int64, ownerEntity: String, _ relationship: String, to target: Int64, targetEntity: String) {
        links.append((owner, ownerEntity, relationship, target, targetEntity))
    }
}

/// What `performCustomValidation` works with: the destination store, read-only, and a place to
/// report violations.
public final class ValidationContext {
    /// The entity mapping being validated.
    public let mapping: EntityMapping
    /// The destination store being migrated (its tables in Core Data's layout), read-only.
    public let connection: Connection
    /// The destination store's tables and columns, for building queries over `connection`.
    public let layout: StoreLayout
    package private(set) var violations: [ValidationViolation] = []

    package init(mapping: EntityMapping, connection: Connection, layout: StoreLayout) {
        self.mapping = mapping
        self.connection = connection
        self.layout = layout
    }

    /// Reports that destination object `key` (its `Z_PK`) of `entity` breaks `rule`, given in words.
    /// Any report fails the step with `MigrationFailure.validation` once the pass's validation ends.
    public func report(entity: String, key: Int64, rule: String) {
        violations.append(ValidationViolation(entity: entity, key: key, rule: rule))
    }
}
