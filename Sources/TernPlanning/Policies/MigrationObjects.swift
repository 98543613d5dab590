import TernSQLite
import TernModel
import TernStore
import TernMapping

/// A source object as a policy sees it: its key, entity, attribute values and to-one keys.
public struct SourceObject: Sendable, Equatable {
    /// The object's `Z_PK` in the source store.
    public let key: Int64
    /// The source entity of the mapping being run.
    public let entity: String
    /// Where each name's value is in `row`: one table for every object of a mapping, so an
    /// object costs its row and no dictionary of its own (a policy runs for millions).
    private let positions: Positions
    private let row: [SQLiteValue]

    /// Names → positions in a row, shared by every object read with them.
    package final class Positions: Sendable {
        let byName: [String: Int]
        package init(_ byName: [String: Int]) { self.byName = byName }
    }

    /// A source object as a test gives it to a policy's hook.
    public init(key: Int64, entity: String, values: [String: SQLiteValue]) {
        let names = values.keys.sorted()
        self.init(
            key: key, entity: entity, positions: Positions(Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })),
            row: names.map { values[$0]! })
    }

    /// An object whose value for each name is `row[positions.byName[name]]`.
    package init(key: Int64, entity: String, positions: Positions, row: [SQLiteValue]) {
        self.key = key
        self.entity = entity
        self.positions = positions
        self.row = row
    }

    /// Attribute name → value; to-one relationship name → destination key (or NULL). Made on
    /// each use, from the object's row: a policy reading one value reads it by name instead
    /// (`source["title"]`), which looks nothing up but that name.
    public var values: [String: SQLiteValue] {
        positions.byName.mapValues { row[$0] }
    }

    /// The value of attribute or to-one relationship `name` (`.null` when it is NULL). A name the
    /// object does not have throws, naming the keys it has, as Core Data's `value(forKey:)`
    /// raises: a misspelt key never reads as a silent NULL.
    public subscript(_ name: String) -> SQLiteValue {
        get throws {
            guard let position = positions.byName[name] else {
                throw TernError(
                    .badInput,
                    "source object \(entity) \(key) has no attribute or to-one relationship \(name) (it has: \(positions.byName.keys.sorted().joined(separator: ", ")))"
                )
            }
            return row[position]
        }
    }

    public static func == (lhs: SourceObject, rhs: SourceObject) -> Bool {
        lhs.key == rhs.key && lhs.entity == rhs.entity && lhs.values == rhs.values
    }
}

/// A destination object created in the current batch, to relate it to others.
public struct CreatedObject: Sendable, Hashable {
    package let index: Int

    package init(index: Int) { self.index = index }
}
