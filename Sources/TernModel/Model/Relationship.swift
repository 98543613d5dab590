/// What happens to the destination when the source object is deleted.
public enum DeleteRule: String, Sendable, CaseIterable, Codable {
    case noAction, nullify, cascade, deny

    /// Xcode's spelling in `deletionRule="…"`.
    public var xcodeName: String {
        switch self {
        case .noAction: "No Action"
        case .nullify: "Nullify"
        case .cascade: "Cascade"
        case .deny: "Deny"
        }
    }

    /// The rule Xcode spells `xcodeName` (`"No Action"`), or nil for a spelling Tern does not know.
    public init?(xcodeName: String) {
        guard let rule = Self.allCases.first(where: { $0.xcodeName == xcodeName }) else { return nil }
        self = rule
    }
}

/// A relationship from one entity to another.
public struct Relationship: Sendable, Equatable, Codable {
    /// The relationship's name, unique among its entity's properties, inherited ones included
    /// (`problems()` reports a clash).
    public var name: String
    /// The destination entity's name.
    public var destination: String
    /// The inverse relationship's name on the destination, if any.
    public var inverse: String?
    /// The inverse a to-one names when that relationship names another as its own inverse
    /// (`ObjectModel.separatingUnreciprocatedInverses()`): part of the version hash, as Core Data
    /// hashes the name it is given, and nothing else — `inverse` is then nil.
    public var unreciprocatedInverse: String?
    /// Whether the relationship holds many destinations (no foreign-key column on this side).
    public var isToMany: Bool
    /// Ordered to-many relationships keep a sort key (`Z_FOK_…`).
    public var isOrdered: Bool
    /// Whether a to-one may be empty; a migration's validation reports empty required to-ones.
    public var isOptional: Bool
    /// Transient relationships are not stored: no column, no join table.
    public var isTransient: Bool
    /// Core Data's counts: a to-one has maxCount 1; 0 means no upper limit.
    public var minCount: Int
    /// The most destinations allowed; 0 for no limit, 1 for a to-one. -1 is no limit too, as a
    /// compiled model may archive it (NSUIntegerMax, a model built in code): kept because the
    /// version hash carries those bits (CoreDataPlus's `Author.books`).
    public var maxCount: Int
    /// What Core Data does to the destinations when the object is deleted; part of the version hash.
    public var deleteRule: DeleteRule
    /// The relationship's name in an earlier version, when it was renamed (Xcode's `elementID`).
    public var renamingIdentifier: String?
    /// Changes the version hash without changing anything else.
    public var versionHashModifier: String?
    /// The relationship's user info from the model file; not part of the version hash, and not read by Tern.
    public var userInfo: [String: String]

    /// A relationship; a nil `maxCount` means 1 for a to-one and no limit (0) for a to-many.
    public init(
        name: String, destination: String, inverse: String? = nil, isToMany: Bool = false, isOrdered: Bool = false,
        isOptional: Bool = true, isTransient: Bool = false, minCount: Int = 0, maxCount: Int? = nil,
        deleteRule: DeleteRule = .nullify, renamingIdentifier: String? = nil, versionHashModifier: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.minCount = minCount
        self.maxCount = maxCount ?? (isToMany ? 0 : 1)
        self.deleteRule = deleteRule
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
    }

    /// The identity that survives renames: the renaming identifier, else the name.
    public var renamingKey: String { renamingIdentifier ?? name }
}

/// A property (attribute or relationship) by name, with the entity it is named on: how the
/// engine keeps sets of properties (relationships a policy linked, derived attributes with
/// triggers) without spelling them as text.
public struct PropertyIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The entity the property is named on (its own or inherited).
    public let entity: String
    /// The property's name.
    public let property: String

    /// `property` of `entity`.
    public init(entity: String, property: String) {
        self.entity = entity
        self.property = property
    }

    public var description: String { "\(entity).\(property)" }
}
