import Tern

/// An object read back from a `TestStore`.
public struct TestObject: Sendable, Equatable {
    /// Its `Z_PK`, unique within its entity's root table.
    public let key: Int64
    /// Its entity (a subentity's name when it is one).
    public let entity: String
    /// Attribute name → value; to-one relationship name → the destination's key (or NULL).
    public let values: [String: SQLiteValue]
    /// To-many relationship name → the destinations' keys, in the relationship's order.
    public let toMany: [String: [Int64]]

    /// An attribute's value, or a to-one's destination key; NULL for a name it does not have.
    public subscript(_ name: String) -> SQLiteValue {
        values[name] ?? .null
    }
}
