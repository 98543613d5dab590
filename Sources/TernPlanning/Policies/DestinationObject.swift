import TernSQLite
import TernModel

/// A destination object being created: its entity and property values. Keys are given when the
/// batch is written, in creation order, so the result never depends on batch size or workers.
///
/// An object the mapping's default makes (`InstanceCreationContext.defaultDestination(for:)`)
/// keeps its entity's attributes in slots laid out once for the whole mapping: a policy runs for
/// millions of objects, and a dictionary per object was a tenth of its cost. An object made
/// with `init(entity:values:)`, or given another entity, keeps its values by name.
public struct DestinationObject: Sendable, Equatable {
    /// The attributes an object of one entity may hold, one slot each, in name order, with
    /// their types: shared by every object the mapping's default makes.
    package final class Slots: Sendable {
        let entity: String
        let names: [String]
        package let types: [AttributeType]
        package let positions: [String: Int]

        package init(entity: String, attributes: [String: AttributeType]) {
            self.entity = entity
            names = attributes.keys.sorted()
            types = names.map { attributes[$0]! }
            positions = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
        }
    }

    private var entityName: String
    /// `slots`' values (nil: unset, so the model default), and the values of names outside them.
    package private(set) var slots: Slots?
    package private(set) var slotValues: [SQLiteValue?]
    package private(set) var otherValues: [String: SQLiteValue]

    /// An object of `entity` with `values`; attributes left out take their model defaults.
    public init(entity: String, values: [String: SQLiteValue] = [:]) {
        entityName = entity
        slots = nil
        slotValues = []
        otherValues = values
    }

    /// An object of `slots.entity` with every attribute unset.
    package init(slots: Slots) {
        entityName = slots.entity
        self.slots = slots
        slotValues = Array(repeating: nil, count: slots.names.count)
        otherValues = [:]
    }

    /// The destination entity the object is created as. Giving it another entity keeps its
    /// values by name, to be checked against that entity's attributes.
    public var entity: String {
        get { entityName }
        set {
            guard newValue != entityName else { return }
            otherValues = values
            slots = nil
            slotValues = []
            entityName = newValue
        }
    }

    /// Attribute name → value. Unset attributes take their model default. Made on each use
    /// from the object's slots, and setting it (or one of its entries) rebuilds them: read or
    /// set one value by name instead (`object["title"]`), which costs one look-up.
    public var values: [String: SQLiteValue] {
        get {
            guard let slots else { return otherValues }
            var values = otherValues
            for (position, value) in slotValues.enumerated() {
                if let value { values[slots.names[position]] = value }
            }
            return values
        }
        set {
            otherValues = [:]
            slotValues = slotValues.map { _ in nil }
            for (name, value) in newValue { self[name] = value }
        }
    }

    /// The value of attribute `name`, or nil when it is unset (and so takes its model default).
    package func value(of name: String) -> SQLiteValue? {
        if let position = slots?.positions[name] { return slotValues[position] }
        return otherValues[name]
    }

    /// Sets the value in slot `position` of `slots`.
    package mutating func setValue(_ value: SQLiteValue, atSlot position: Int) {
        slotValues[position] = value
    }

    /// The value of attribute `name`; reads `.null` when unset, and setting it replaces the value.
    public subscript(_ name: String) -> SQLiteValue {
        get { value(of: name) ?? .null }
        set {
            if let position = slots?.positions[name] {
                slotValues[position] = newValue
            } else {
                otherValues[name] = newValue
            }
        }
    }

    public static func == (lhs: DestinationObject, rhs: DestinationObject) -> Bool {
        lhs.entity == rhs.entity && lhs.values == rhs.values
    }
}

extension DestinationObject: CustomStringConvertible {
    /// Its entity and values by name, as a failing test or a log shows it: not its slots.
    public var description: String {
        "\(entity)(" + values.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.sqlLiteral)" }.joined(separator: ", ") + ")"
    }
}
