import Foundation
import TernModel
import TernSQLite

/// A Swift value a policy reads from an object or sets on one, stored as Core Data stores it:
/// text, integers, Booleans as 0 or 1, floating-point numbers, dates as seconds since
/// 2001-01-01 (`timeIntervalSinceReferenceDate`), binary data as bytes. Reading is as strict as
/// `object["name"]`: a value of another kind throws, naming it; NULL reads as nil.
public protocol StoredValue: Sendable {
    /// The value a column holds for it.
    var stored: SQLiteValue { get }
    /// It from a column's value, or nil when the value is of another kind.
    init?(stored: SQLiteValue)
    /// What it is, in words, for an error ("text", "a Boolean (0 or 1)").
    static var kindName: String { get }
}

extension String: StoredValue {
    /// The column value Core Data stores for it.
    public var stored: SQLiteValue { .text(self) }
    /// It from a column's value; nil for a value of another kind.
    public init?(stored: SQLiteValue) {
        guard case .text(let text) = stored else { return nil }
        self = text
    }
    /// Its kind, in words, for errors.
    public static var kindName: String { "text" }
}

extension Int64: StoredValue {
    /// The column value Core Data stores for it.
    public var stored: SQLiteValue { .integer(self) }
    /// It from a column's value; nil for a value of another kind.
    public init?(stored: SQLiteValue) {
        guard case .integer(let value) = stored else { return nil }
        self = value
    }
    /// Its kind, in words, for errors.
    public static var kindName: String { "an integer" }
}

extension Int: StoredValue {
    /// The column value Core Data stores for it.
    public var stored: SQLiteValue { .integer(Int64(self)) }
    /// It from a column's value; nil for a value of another kind.
    public init?(stored: SQLiteValue) {
        guard case .integer(let value) = stored, let fitting = Int(exactly: value) else { return nil }
        self = fitting
    }
    /// Its kind, in words, for errors.
    public static var kindName: String { "an integer" }
}

extension Double: StoredValue {
    /// The column value Core Data stores for it.
    public var stored: SQLiteValue { .real(self) }
    /// An integer widens, as SQLite's REAL affinity stores a whole number.
    public init?(stored: SQLiteValue) {
        switch stored {
        case .real(let value): self = value
        case .integer(let value): self = Double(value)
        default: return nil
        }
    }
    /// Its kind, in words, for errors.
    public static var kindName: String { "a number" }
}

extension Bool: StoredValue {
    /// The column value Core Data stores for it.
    public var stored: SQLiteValue { .integer(self ? 1 : 0) }
    /// It from a column's value; nil for a value of another kind.
    public init?(stored: SQLiteValue) {
        guard case .integer(let value) = stored, value == 0 || value == 1 else { return nil }
        self = value == 1
    }
    /// Its kind, in words, for errors.
    public static var kindName: String { "a Boolean (0 or 1)" }
}

extension Date: StoredValue {
    /// Seconds since 2001-01-01, as Core Data's date columns hold them.
    public var stored: SQLiteValue { .real(timeIntervalSinceReferenceDate) }
    /// It from a column's value; nil for a value of another kind.
    public init?(stored: SQLiteValue) {
        guard let seconds = Double(stored: stored) else { return nil }
        self = Date(timeIntervalSinceReferenceDate: seconds)
    }
    /// Its kind, in words, for errors.
    public static var kindName: String { "a date (seconds since 2001-01-01)" }
}

extension Data: StoredValue {
    /// The column value Core Data stores for it.
    public var stored: SQLiteValue { .blob([UInt8](self)) }
    /// It from a column's value; nil for a value of another kind.
    public init?(stored: SQLiteValue) {
        guard case .blob(let bytes) = stored else { return nil }
        self = Data(bytes)
    }
    /// Its kind, in words, for errors.
    public static var kindName: String { "binary data" }
}

/// Reading a value as a Swift type, for both kinds of object.
enum TypedValue {
    static func read<Value: StoredValue>(_ value: SQLiteValue, _ name: String, of object: String) throws -> Value? {
        if case .null = value { return nil }
        guard let typed = Value(stored: value) else {
            throw TernError(.badInput, "\(object): \(name) holds \(value.sqlLiteral), not \(Value.kindName)")
        }
        return typed
    }
}

extension SourceObject {
    /// The value of attribute `name` as `Value` (nil when NULL). A name the object does not have,
    /// or a value of another kind, throws, naming both.
    public func value<Value: StoredValue>(_ name: String, as type: Value.Type = Value.self) throws -> Value? {
        try TypedValue.read(try self[name], name, of: "source object \(entity) \(key)")
    }

    /// Attribute `name`'s text, nil when NULL.
    public func string(_ name: String) throws -> String? { try value(name) }
    /// Attribute `name`'s integer, nil when NULL.
    public func integer(_ name: String) throws -> Int64? { try value(name) }
    /// Attribute `name`'s number (an integer widens), nil when NULL.
    public func double(_ name: String) throws -> Double? { try value(name) }
    /// Boolean attribute `name` (0 or 1), nil when NULL.
    public func bool(_ name: String) throws -> Bool? { try value(name) }
    /// Date attribute `name`, nil when NULL.
    public func date(_ name: String) throws -> Date? { try value(name) }
    /// Binary attribute `name`'s bytes, nil when NULL.
    public func data(_ name: String) throws -> Data? { try value(name) }
}

extension DestinationObject {
    /// The value of attribute `name` as `Value` (nil when NULL or unset); a value of another kind
    /// throws, naming it.
    public func value<Value: StoredValue>(_ name: String, as type: Value.Type = Value.self) throws -> Value? {
        try TypedValue.read(self[name], name, of: "destination object \(entity)")
    }

    /// Sets attribute `name` to `value`, stored as Core Data stores it; nil sets NULL.
    public mutating func set<Value: StoredValue>(_ name: String, _ value: Value?) {
        self[name] = value?.stored ?? .null
    }
}
