import TernSQLite
import TernModel
import TernStore

/// What kind of value an expression yields, checked before anything runs.
public enum ValueKind: String, Sendable, Equatable {
    case number, text, blob
    /// A to-one relationship's destination: comparable with nil only.
    case object
    /// `nil`: fits anywhere.
    case null
}

/// A value read from the store for an expression: an attribute reached through zero or more
/// to-one relationships, a to-one relationship's key, or a to-many relationship's count.
public struct Input: Sendable, Hashable {
    /// What the input reads at the end of its relationship path.
    public enum Final: Sendable, Hashable {
        case attribute(String)
        /// The destination key of the last to-one relationship (for `author == nil`).
        case objectKey
        /// `rel.@count` of a to-many relationship of the last entity.
        case count(String)
        /// The object's own `Z_PK` (needed by quantified predicates evaluated in Swift).
        case ownKey
    }

    /// The entity the path starts from.
    public var entity: String
    /// To-one relationships followed, in order.
    public var relationships: [String]
    /// What is read from the entity the path ends at.
    public var final: Final
}

/// A value expression bound to an entity: key paths resolved to inputs, variables substituted,
/// kinds checked.
public indirect enum BoundExpression: Sendable, Equatable {
    case constant(SQLiteValue)
    /// The value of `inputs[index]`.
    case input(Int)
    case binary(ArithmeticOperator, BoundExpression, BoundExpression)
    case negate(BoundExpression)
    case function(BuiltinFunction, [BoundExpression])

    /// A constant or an input: what SQL may name several times at no growing cost.
    var isLeaf: Bool {
        switch self {
        case .constant, .input: true
        case .binary, .negate, .function: false
        }
    }
}

/// A predicate bound to an entity.
public indirect enum BoundPredicate: Sendable, Equatable {
    case constant(Bool)
    case not(BoundPredicate)
    case and(BoundPredicate, BoundPredicate)
    case or(BoundPredicate, BoundPredicate)
    case compare(BoundExpression, ComparisonOperator, ComparisonOptions, BoundExpression)
    case between(BoundExpression, BoundExpression, BoundExpression)
    case isIn(BoundExpression, [BoundExpression])
    /// `ANY/ALL/NONE rel.… op …`: `predicate` is bound to the elements of to-many relationship
    /// `relationship` of the object, and uses `elementInputs`.
    case quantified(Quantifier, relationship: String, elementEntity: String, predicate: BoundPredicate, elementInputs: [Input])
}

/// A bound expression with the inputs it reads, ready to compile to SQL or to Swift.
public struct CompiledExpression: Sendable, Equatable {
    /// The entity the expression is evaluated on.
    public let entity: String
    /// The bound expression; its `.input(i)` nodes index `inputs`.
    public let expression: BoundExpression
    /// The values the expression reads, in the order callers must supply them.
    public let inputs: [Input]
    /// The kind of value the expression yields, as checked when it was bound.
    public let kind: ValueKind
}

/// A bound predicate with its inputs.
public struct CompiledPredicate: Sendable, Equatable {
    /// The entity the predicate is evaluated on.
    public let entity: String
    /// The bound predicate; its inputs index `inputs`.
    public let predicate: BoundPredicate
    /// The values the predicate reads, in the order callers must supply them.
    public let inputs: [Input]
}
