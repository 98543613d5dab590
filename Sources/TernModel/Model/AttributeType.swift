import TernSQLite

/// The type of an attribute, with Core Data's codes and Xcode's names.
public enum AttributeType: String, Sendable, CaseIterable, Codable {
    case integer16, integer32, integer64, decimal, double, float, string, boolean, date, binary, uuid, uri, transformable
    /// Xcode's "Undefined" (`NSUndefinedAttributeType`, 0): allowed for a transient attribute
    /// alone, which is never stored (model validation refuses it elsewhere, as Xcode does).
    case undefined

    /// `NSAttributeType`'s raw value. It is part of an attribute's version hash.
    public var coreDataCode: Int {
        switch self {
        case .integer16: 100
        case .integer32: 200
        case .integer64: 300
        case .decimal: 400
        case .double: 500
        case .float: 600
        case .string: 700
        case .boolean: 800
        case .date: 900
        case .binary: 1000
        case .uuid: 1100
        case .uri: 1200
        case .transformable: 1800
        case .undefined: 0
        }
    }

    /// The name Xcode writes in `attributeType="…"`.
    public var xcodeName: String {
        switch self {
        case .integer16: "Integer 16"
        case .integer32: "Integer 32"
        case .integer64: "Integer 64"
        case .decimal: "Decimal"
        case .double: "Double"
        case .float: "Float"
        case .string: "String"
        case .boolean: "Boolean"
        case .date: "Date"
        case .binary: "Binary"
        case .uuid: "UUID"
        case .uri: "URI"
        case .transformable: "Transformable"
        case .undefined: "Undefined"
        }
    }

    /// The type Xcode spells `xcodeName` (`"Integer 16"`), or nil for a spelling Tern does not know.
    public init?(xcodeName: String) {
        guard let type = Self.allCases.first(where: { $0.xcodeName == xcodeName }) else { return nil }
        self = type
    }

    /// The column type Core Data declares (the rule "declared types" of
    /// `Sources/Tern/Tern.docc/VersionHashesAndStoreLayout.md`).
    public var columnDeclaration: String {
        switch self {
        case .integer16, .integer32, .integer64, .boolean: "INTEGER"
        case .decimal: "DECIMAL"
        case .double, .float: "FLOAT"
        case .string, .uri: "VARCHAR"
        case .date: "TIMESTAMP"
        case .binary, .uuid, .transformable, .undefined: "BLOB"
        }
    }

    /// The storage class values of this type are written with.
    public var storageClass: StorageClass {
        switch self {
        case .integer16, .integer32, .integer64, .boolean: .integer
        case .decimal, .double, .float, .date: .real
        case .string, .uri: .text
        case .binary, .uuid, .transformable, .undefined: .blob
        }
    }

    /// The range of an integer type, nil for others.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: Int64(Int16.min)...Int64(Int16.max)
        case .integer32: Int64(Int32.min)...Int64(Int32.max)
        case .integer64: Int64.min...Int64.max
        case .boolean: 0...1
        default: nil
        }
    }
}
