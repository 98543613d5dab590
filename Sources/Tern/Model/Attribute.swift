import TernSQLite

/// Constraints Core Data checks when saving; they never change a version hash.
public struct ValidationRules: Sendable, Equatable {
    /// Bounds on a number (or a date, in seconds since 2001-01-01).
    public var minimumValue: Double?
    public var maximumValue: Double?
    /// Bounds on a string's length in characters, or a binary value's length in bytes.
    public var minimumLength: Int?
    public var maximumLength: Int?
    /// A regular expression a string must match in full.
    public var pattern: String?

    public init(minimumValue: Double? = nil, maximumValue: Double? = nil, minimumLength: Int? = nil, maximumLength: Int? = nil, pattern: String? = nil) {
        self.minimumValue = minimumValue
        self.maximumValue = maximumValue
        self.minimumLength = minimumLength
        self.maximumLength = maximumLength
        self.pattern = pattern
    }

    public var isEmpty: Bool { self == ValidationRules() }
}

/// An attribute of an entity.
public struct Attribute: Sendable, Equatable {
    public var name: String
    public var type: AttributeType
    public var isOptional: Bool
    /// Transient attributes are not stored: no column.
    public var isTransient: Bool
    /// The default, in the form it is stored (a date as seconds since 2001, a UUID as 16 bytes).
    public var defaultValue: SQLiteValue?
    public var validation: ValidationRules
    /// The attribute's name in an earlier version, when it was renamed (Xcode's `elementID`).
    public var renamingIdentifier: String?
    /// Changes the version hash without changing anything else.
    public var versionHashModifier: String?
    public var valueTransformerName: String?
    public var allowsExternalStorage: Bool
    public var userInfo: [String: String]

    public init(
        name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false,
        defaultValue: SQLiteValue? = nil, validation: ValidationRules = ValidationRules(),
        renamingIdentifier: String? = nil, versionHashModifier: String? = nil,
        valueTransformerName: String? = nil, allowsExternalStorage: Bool = false, userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.defaultValue = defaultValue
        self.validation = validation
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.valueTransformerName = valueTransformerName
        self.allowsExternalStorage = allowsExternalStorage
        self.userInfo = userInfo
    }

    /// The identity that survives renames: the renaming identifier, else the name.
    public var renamingKey: String { renamingIdentifier ?? name }
}
