/// A value of one of SQLite's five storage classes.
public enum SQLiteValue: Hashable, Sendable, Codable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// The storage class the value has.
    public var storageClass: StorageClass {
        switch self {
        case .null: .null
        case .integer: .integer
        case .real: .real
        case .text: .text
        case .blob: .blob
        }
    }

    /// Whether the value is SQL NULL.
    public var isNull: Bool { self == .null }

    /// About what the value takes in memory: its bytes for text and blobs, a word otherwise.
    public var bytesInMemory: Int {
        switch self {
        case .text(let value): 16 + value.utf8.count
        case .blob(let value): 16 + value.count
        default: 16
        }
    }

    /// The integer, when this is one.
    public var int64: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The number as a double, when this is an integer or a real.
    public var double: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .real(let value): value
        default: nil
        }
    }

    /// The text, when this is text.
    public var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The bytes, when this is a blob.
    public var blob: [UInt8]? {
        if case .blob(let value) = self { return value }
        return nil
    }

    /// The value written as an SQL literal, for messages and generated scripts.
    public var sqlLiteral: String {
        switch self {
        case .null: "NULL"
        case .integer(let value): String(value)
        case .real(let value): "\(value)"
        case .text(let value): quoteLiteral(value)
        case .blob(let bytes): "X'" + bytes.map { hexDigits[Int($0 >> 4)] + hexDigits[Int($0 & 0xF)] }.joined() + "'"
        }
    }

    public var description: String { sqlLiteral }
}

private let hexDigits = (0..<16).map { String($0, radix: 16, uppercase: true) }
