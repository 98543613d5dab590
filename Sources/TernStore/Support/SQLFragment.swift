import TernSQLite
import TernModel

/// SQL text with its bound arguments, in order. Literals are always bound, never spliced in, and
/// identifiers always quoted, so no expression can change a statement's shape.
public struct SQLFragment: Sendable, Hashable {
    /// The SQL text, with a `?` placeholder for each argument.
    public var sql: String
    /// The values bound to the placeholders in `sql`, in order.
    public var arguments: [SQLiteValue]

    package init(_ sql: String, _ arguments: [SQLiteValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    package static func + (lhs: SQLFragment, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(lhs.sql + rhs.sql, lhs.arguments + rhs.arguments)
    }
}
