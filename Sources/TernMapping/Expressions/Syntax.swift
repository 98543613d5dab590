import TernSQLite
import TernModel
import TernStore

/// A value expression as written (NSExpression syntax), before it is bound to a model.
public indirect enum ExpressionSyntax: Sendable, Equatable {
    /// A constant; booleans (`YES`, `TRUE`) are integers 1 and 0, as stored.
    case literal(SQLiteValue, isBoolean: Bool, at: Int)
    /// `$source`, `$manager`, … or a substitution variable.
    case variable(String, at: Int)
    /// `base.a.b`; a nil base is the evaluated object itself (`price` in a filter predicate).
    case keyPath(base: ExpressionSyntax?, components: [String], at: Int)
    case binary(ArithmeticOperator, ExpressionSyntax, ExpressionSyntax, at: Int)
    case negate(ExpressionSyntax, at: Int)
    /// A built-in function, `uppercase:(x)` or `now()`.
    case function(String, [ExpressionSyntax], at: Int)
    /// `FUNCTION($manager, "selector", arguments…)`: the migration manager's look-ups.
    case managerFunction(receiver: ExpressionSyntax, selector: String, arguments: [ExpressionSyntax], at: Int)
    /// `{a, b, c}`.
    case list([ExpressionSyntax], at: Int)

    /// The UTF-8 offset of the expression in its text.
    public var offset: Int {
        switch self {
        case .literal(_, _, let at), .variable(_, let at), .keyPath(_, _, let at), .binary(_, _, _, let at),
            .negate(_, let at), .function(_, _, let at), .managerFunction(_, _, _, let at), .list(_, let at):
            at
        }
    }
}

/// An arithmetic operator, spelled as in NSExpression text.
public enum ArithmeticOperator: String, Sendable {
    case add = "+", subtract = "-", multiply = "*", divide = "/"
}

/// A predicate as written (NSPredicate syntax).
public indirect enum PredicateSyntax: Sendable, Equatable {
    case constant(Bool)
    case not(PredicateSyntax)
    case and(PredicateSyntax, PredicateSyntax)
    case or(PredicateSyntax, PredicateSyntax)
    /// `lhs op rhs`, optionally quantified over a to-many key path on the left.
    case comparison(ExpressionSyntax, ComparisonOperator, ComparisonOptions, ExpressionSyntax, quantifier: Quantifier?, at: Int)
    /// `lhs BETWEEN {low, high}`.
    case between(ExpressionSyntax, ExpressionSyntax, ExpressionSyntax, quantifier: Quantifier?, at: Int)
    /// `lhs IN {a, b, …}`.
    case isIn(ExpressionSyntax, [ExpressionSyntax], quantifier: Quantifier?, at: Int)
}

/// A comparison operator, spelled as in NSPredicate text; the string operators may take `[cd]` options.
public enum ComparisonOperator: String, Sendable, CaseIterable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH", endsWith = "ENDSWITH", contains = "CONTAINS", like = "LIKE", matches = "MATCHES"

    var isStringOperator: Bool {
        switch self {
        case .beginsWith, .endsWith, .contains, .like, .matches: true
        default: false
        }
    }
}

/// `[c]` case-insensitive, `[d]` diacritic-insensitive, `[cd]` both.
public struct ComparisonOptions: OptionSet, Sendable, Hashable {
    /// The option bits: 1 case-insensitive, 2 diacritic-insensitive.
    public let rawValue: Int
    /// Options from their bits (see `rawValue`).
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `[c]`: letters compare without regard to case.
    public static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`: letters compare without regard to accents and other diacritics.
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
}

/// `ANY`/`SOME`, `ALL`, `NONE` before a comparison on a to-many key path.
public enum Quantifier: String, Sendable {
    case anyElement = "ANY", everyElement = "ALL", noElement = "NONE"
}
