import TernSQLite

/// Constraints Core Data checks when saving; they never change a version hash.
public struct ValidationRules: Sendable, Equatable, Codable {
    /// Bounds on a number (or a date, in seconds since 2001-01-01).
    public var minimumValue: Double?
    /// The upper bound, inclusive, in the same units as `minimumValue`; nil for none.
    public var maximumValue: Double?
    /// Bounds on a string's length in characters, or a binary value's length in bytes.
    public var minimumLength: Int?
    /// The upper bound on the length, inclusive, in the same units as `minimumLength`; nil for none.
    public var maximumLength: Int?
    /// A regular expression a string must match in full.
    public var pattern: String?

    /// Rules with the given bounds and pattern; a nil argument sets no rule.
    public init(minimumValue: Double? = nil, maximumValue: Double? = nil, minimumLength: Int? = nil, maximumLength: Int? = nil, pattern: String? = nil) {
        self.minimumValue = minimumValue
        self.maximumValue = maximumValue
        self.minimumLength = minimumLength
        self.maximumLength = maximumLength
        self.pattern = pattern
    }

    /// Whether no rule is set.
    public var isEmpty: Bool { self == ValidationRules() }
}

/// An attribute of an entity.
public struct Attribute: Sendable, Equatable, Codable {
    /// The attribute's name, unique among its entity's properties, inherited ones included
    /// (`problems()` reports a clash).
    public var name: String
    /// The attribute's type, which decides its column's declared type and part of its version hash.
    public var type: AttributeType
    /// Whether the value may be nil; a migration's validation reports NULLs in a non-optional attribute.
    public var isOptional: Bool
    /// Transient attributes are not stored: no column.
    public var isTransient: Bool
    /// The default, in the form it is stored (a date as seconds since 2001, a UUID as 16 bytes).
    public var defaultValue: SQLiteValue?
    /// The rules a migration's validation checks on each migrated value; never part of the version hash.
    public var validation: ValidationRules
    /// The attribute's name in an earlier version, when it was renamed (Xcode's `elementID`).
    public var renamingIdentifier: String?
    /// Changes the version hash without changing anything else.
    public var versionHashModifier: String?
    /// The `NSValueTransformer` an app uses for a transformable attribute; Tern copies the stored
    /// bytes as they are.
    public var valueTransformerName: String?
    /// Whether Core Data may keep a binary value in a file beside the store, with only a reference
    /// in its column.
    public var allowsExternalStorage: Bool
    /// The attribute's user info from the model file; not part of the version hash, and not read by Tern.
    public var userInfo: [String: String]
    /// Whether persistent history keeps the value after the object is deleted (Xcode's
    /// `preserveAfterDeletion`); it enters the version hash.
    public var preservesValueInHistoryOnDeletion: Bool
    /// A derived attribute's expression (Xcode's `derivationExpression`, `pages.@count`): Core
    /// Data computes the value from other properties and keeps it current with SQL triggers.
    public var derivation: Derivation?
    /// Xcode 7's per-attribute "Indexed" box (`indexed="YES"`): Core Data indexes the column as
    /// `<TABLE>_<COLUMN>_INDEX`. Later Xcodes write a fetch index instead. Not hashed.
    public var isIndexed: Bool

    /// An attribute; see the properties for what each argument means.
    public init(
        name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false,
        defaultValue: SQLiteValue? = nil, validation: ValidationRules = ValidationRules(),
        renamingIdentifier: String? = nil, versionHashModifier: String? = nil,
        valueTransformerName: String? = nil, allowsExternalStorage: Bool = false, userInfo: [String: String] = [:],
        preservesValueInHistoryOnDeletion: Bool = false, isIndexed: Bool = false, derivation: Derivation? = nil
    ) {
        self.derivation = derivation
        self.preservesValueInHistoryOnDeletion = preservesValueInHistoryOnDeletion
        self.isIndexed = isIndexed
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
