import TernModel
import TernStore
/// A lexical token of NSExpression/NSPredicate syntax.
enum Token: Equatable {
    case integer(Int64)
    case real(Double)
    case string(String)
    /// A name; `escaped` when written with `#` (a reserved word used as a key).
    case identifier(String, escaped: Bool)
    /// `$name`.
    case variable(String)
    /// Punctuation and operators: `( ) { } [ ] , . : + - * / == != < <= > >= && || !`.
    case symbol(String)
    case end

    var text: String {
        switch self {
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .string(let value): "\"\(value)\""
        case .identifier(let name, let escaped): escaped ? "#\(name)" : name
        case .variable(let name): "$\(name)"
        case .symbol(let symbol): symbol
        case .end: "the end"
        }
    }

    /// True for an unescaped identifier equal to `word`, ignoring case (keywords are case-insensitive).
    func isKeyword(_ word: String) -> Bool {
        if case .identifier(let name, false) = self { return name.uppercased() == word }
        return false
    }
}

/// Splits expression text into tokens, each with its UTF-8 offset.
struct Lexer {
    private let bytes: [UInt8]
    private let text: String
    private var index = 0

    init(_ text: String) {
        self.text = text
        bytes = Array(text.utf8)
    }

    static func tokenize(_ text: String) throws(ExpressionError) -> [(token: Token, offset: Int)] {
        var lexer = Lexer(text)
        var tokens: [(Token, Int)] = []
        while true {
            let (token, offset) = try lexer.next()
            tokens.append((token, offset))
            if token == .end { return tokens }
        }
    }

    private func error(_ message: String, at offset: Int) -> ExpressionError {
        ExpressionError(message, at: SourcePosition(offset: offset, in: text))
    }

    private mutating func next() throws(ExpressionError) -> (Token, Int) {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        let start = index
        guard index < bytes.count else { return (.end, start) }
        let byte = bytes[index]
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            return (try number(), start)
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return (.string(try string(quote: byte)), start)
        case UInt8(ascii: "$"):
            index += 1
            let name = identifierText()
            guard !name.isEmpty else { throw error("expected a variable name after $", at: start) }
            return (.variable(name), start)
        case UInt8(ascii: "#"):
            index += 1
            let name = identifierText()
            guard !name.isEmpty else { throw error("expected a name after #", at: start) }
            return (.identifier(name, escaped: true), start)
        case _ where Self.startsIdentifier(byte):
            return (.identifier(identifierText(), escaped: false), start)
        default:
            for symbol in ["==", "!=", "<>", "<=", ">=", "=<", "=>", "&&", "||"] where matches(symbol) {
                index += 2
                let canonical = ["<>": "!=", "=<": "<=", "=>": ">="][symbol] ?? symbol
                return (.symbol(canonical), start)
            }
            let single = String(UnicodeScalar(byte))
            guard "(){}[],.:+-*/<>=!".contains(single) else {
                throw error(
                    "unexpected character \(String(decoding: [byte], as: UTF8.self).isEmpty ? "byte \(byte)" : "'\(Character(UnicodeScalar(byte)))'")",
                    at: start)
            }
            index += 1
            return (.symbol(single == "=" ? "==" : single), start)
        }
    }

    private func matches(_ symbol: String) -> Bool {
        let pattern = Array(symbol.utf8)
        return index + pattern.count <= bytes.count && Array(bytes[index..<index + pattern.count]) == pattern
    }

    private static func startsIdentifier(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "@")
    }

    private mutating func identifierText() -> String {
        let start = index
        while index < bytes.count, Self.startsIdentifier(bytes[index]) || (bytes[index] >= 0x30 && bytes[index] <= 0x39) {
            index += 1
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func number() throws(ExpressionError) -> Token {
        let start = index
        while index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
        var isReal = false
        if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "."), bytes[index + 1] >= 0x30 && bytes[index + 1] <= 0x39 {
            isReal = true
            index += 1
            while index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            var look = index + 1
            if look < bytes.count, bytes[look] == UInt8(ascii: "+") || bytes[look] == UInt8(ascii: "-") { look += 1 }
            if look < bytes.count, bytes[look] >= 0x30 && bytes[look] <= 0x39 {
                isReal = true
                index = look
                while index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 { index += 1 }
            }
        }
        let literal = String(decoding: bytes[start..<index], as: UTF8.self)
        if isReal {
            guard let value = Double(literal), value.isFinite else { throw error("\(literal) is not a finite number", at: start) }
            return .real(value)
        }
        // Like SQLite, an integer literal too large for 64 bits is a real.
        guard let value = Int64(literal) else { return .real(Double(literal) ?? .infinity) }
        return .integer(value)
    }

    private mutating func string(quote: UInt8) throws(ExpressionError) -> String {
        let start = index
        index += 1
        var result: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            if byte == quote {
                index += 1
                return String(decoding: result, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\"), index + 1 < bytes.count {
                let escaped = bytes[index + 1]
                index += 2
                switch escaped {
                case UInt8(ascii: "n"): result.append(0x0A)
                case UInt8(ascii: "t"): result.append(0x09)
                case UInt8(ascii: "r"): result.append(0x0D)
                default: result.append(escaped)
                }
                continue
            }
            result.append(byte)
            index += 1
        }
        throw error("unterminated string: expected a closing \(Character(UnicodeScalar(quote)))", at: start)
    }
}
