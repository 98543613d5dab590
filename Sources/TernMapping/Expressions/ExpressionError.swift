import TernModel
import TernStore
/// A position in expression text, 1-based, for messages.
public struct SourcePosition: Sendable, Equatable, CustomStringConvertible {
    /// The line, 1-based.
    public var line: Int
    /// The column, 1-based, counted in Unicode scalars (not UTF-8 bytes).
    public var column: Int

    /// The position of the UTF-8 byte `offset` in `text`.
    init(offset: Int, in text: String) {
        var line = 1
        var column = 1
        for byte in text.utf8.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {  // count characters, not continuation bytes
                column += 1
            }
        }
        self.line = line
        self.column = column
    }

    public var description: String { "\(line):\(column)" }
}

/// A problem with an expression or predicate: where it is and what was expected.
public struct ExpressionError: Error, Equatable, CustomStringConvertible {
    /// Where in the expression text the problem is.
    public var position: SourcePosition
    /// What is wrong, or what was expected there; does not repeat the position.
    public var message: String

    /// A problem described by `message` at `position` in the expression text.
    public init(_ message: String, at position: SourcePosition) {
        self.message = message
        self.position = position
    }

    public var description: String { "\(position): \(message)" }
}
