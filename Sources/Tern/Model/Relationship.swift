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

    public init?(xcodeName: String) {
        guard let rule = Self.allCases.first(where: { $0.xcodeName == xcodeName }) else { return nil }
        self = rule
    }
}

/// A relationship from one entity to another.
public struct Relationship: Sendable, Equatable {
    public var name: String
    /// The destination entity's name.
    public var destination: String
    /// The inverse relationship's name on the destination, if any.
    public var inverse: String?
    public var isToMany: Bool
    /// Ordered to-many relationships keep a sort key (`Z_FOK_…`).
    public var isOrdered: Bool
    public var isOptional: Bool
    public var isTransient: Bool
    /// Core Data's counts: a to-one has maxCount 1; 0 means no upper limit.
    public var minCount: Int
    public var maxCount: Int
    public var deleteRule: DeleteRule
    public var renamingIdentifier: String?
    public var versionHashModifier: String?
    public var userInfo: [String: String]

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

    public var renamingKey: String { renamingIdentifier ?? name }
}
