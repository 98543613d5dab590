import Foundation
import TernSQLite

/// Writes values as expression text that `ExpressionParser` reads back to the same value.
public enum ExpressionText {
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
