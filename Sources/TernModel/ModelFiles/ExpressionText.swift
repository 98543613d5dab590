import Foundation
import TernSQLite

/// NSExpression's text format, as far as writing it goes: what expression text a model
/// (derivations), a compiled archive or a mapping file is written in, and what `ExpressionParser`
/// reads back to the same value.
public enum ExpressionText {
    /// The words of the format: a key named like one is written `#word`.
    package static let reservedWords: Set<String> = [
        "AND", "OR", "NOT", "ANY", "SOME", "ALL", "NONE", "IN", "BETWEEN", "LIKE", "MATCHES", "CONTAINS",
        "BEGINSWITH", "ENDSWITH", "TRUE", "FALSE", "YES", "NO", "NIL", "NULL", "SELF", "FUNCTION",
        "TRUEPREDICATE", "FALSEPREDICATE", "SUBQUERY", "SIZE", "FIRST", "LAST",
    ]

    /// A string literal in double quotes, with backslash escapes.
    public static func literal(_ text: String) -> String {
        "\""
            + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n") + "\""
    }

    /// A literal for a stored value; nil for binary data, which expressions cannot spell.
    public static func literal(_ value: SQLiteValue) -> String? {
        switch value {
        case .null: "nil"
        case .integer(let number): number == .min ? "(-9223372036854775807 - 1)" : String(number)
        case .real(let number): number.isFinite ? "\(number)" : nil
        case .text(let text): literal(text)
        case .blob: nil
        }
    }
}
