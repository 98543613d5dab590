import TernModel
import TernStore
/// The functions value expressions may call, in NSExpression's `name:(arguments)` syntax.
///
/// Each has one meaning in SQL and in Swift. Any NULL argument gives NULL, except for `ifNil:`.
public enum BuiltinFunction: String, Sendable, CaseIterable {
    /// `uppercase:(s)`, `lowercase:(s)`: Unicode case mapping.
    case uppercase = "uppercase:", lowercase = "lowercase:"
    /// `length:(s)`: UTF-16 code units in `s`, as NSString's `length` (and so Core Data) counts
    /// them: an emoji counts 2.
    case length = "length:"
    /// `trim:(s)`: `s` without leading and trailing spaces (U+0020).
    case trim = "trim:"
    /// `substringBefore:(s, separator)`: the text before the first separator, or all of `s` when
    /// there is none.
    case substringBefore = "substringBefore:"
    /// `substringAfter:(s, separator)`: the text after the first separator, or "" when there is none.
    case substringAfter = "substringAfter:"
    /// `substring:from:length:(s, start, count)`: `count` scalars from 0-based `start`; NULL when
    /// `start` or `count` is negative.
    case substring = "substring:from:length:"
    /// `concat:(a, b, …)`: texts joined.
    case concat = "concat:"
    /// `abs:(x)`.
    case abs = "abs:"
    /// `ifNil:(value, fallback)`: `fallback` where `value` is nil (SQL's coalesce). The one
    /// function that does not give NULL for a NULL argument.
    case ifNil = "ifNil:"
    /// `now()`: the time the migration started, in seconds since 2001-01-01 (Core Data's dates);
    /// the same value for every object, so results are reproducible.
    case now = "now"
    /// NSExpression's spelled-out arithmetic: `add:to:(a, b)`, `from:subtract:(a, b)`,
    /// `multiply:by:(a, b)`, `divide:by:(a, b)`.
    case add = "add:to:", subtract = "from:subtract:", multiply = "multiply:by:", divide = "divide:by:"

    /// Argument count; nil for any number (at least one).
    var arity: Int? {
        switch self {
        case .now: 0
        case .uppercase, .lowercase, .length, .trim, .abs: 1
        case .substringBefore, .substringAfter, .add, .subtract, .multiply, .divide, .ifNil: 2
        case .substring: 3
        case .concat: nil
        }
    }

    /// The kinds of the arguments and of the result.
    var signature: (arguments: [ValueKind], result: ValueKind) {
        switch self {
        case .uppercase, .lowercase, .trim: ([.text], .text)
        case .length: ([.text], .number)
        case .substringBefore, .substringAfter: ([.text, .text], .text)
        case .substring: ([.text, .number, .number], .text)
        case .concat: ([.text], .text)
        case .abs: ([.number], .number)
        case .ifNil: ([.null, .null], .null)
        case .now: ([], .number)
        case .add, .subtract, .multiply, .divide: ([.number, .number], .number)
        }
    }

    /// The documented list, for messages.
    static var names: String {
        allCases.map { $0 == .now ? "now()" : $0.rawValue }.joined(separator: ", ")
    }
}
