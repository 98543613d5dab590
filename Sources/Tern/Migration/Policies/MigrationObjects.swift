import TernSQLite

/// A source object as a policy sees it: its key, entity, attribute values and to-one keys.
public struct SourceObject: Sendable, Equatable {
    public let key: Int64
    public let entity: String
    /// Attribute name → value; to-one relationship name → destination key (or NULL).
    public let values: [String: SQLiteValue]

    /// A source object as a test gives it to a policy's hook.
    public init(key: Int64, entity: String, values: [String: SQLiteValue]) {
        self.key = key
        self.entity = entity
        self.values = values
    }

    public subscript(_ name: String) -> SQLiteValue {
        values[name] ?? .null
    }
}

/// A destination object being created: its entity and property values. Keys are given when the
/// batch is written, in creation order, so the result never depends on batch size or workers.
public struct DestinationObject: Sendable, Equatable {
    public var entity: String
    /// Attribute name → value. Unset attributes take their model default.
    public var values: [String: SQLiteValue]

    public init(entity: String, values: [String: SQLiteValue] = [:]) {
        self.entity = entity
        self.values = values
    }

    public subscript(_ name: String) -> SQLiteValue {
        get { values[name] ?? .null }
        set { values[name] = newValue }
    }
}

/// A destination object created in the current batch, to relate it to others.
public struct CreatedObject: Sendable, Hashable {
    let index: Int
}
