import TernSQLite
import TernModel
import TernStore

/// Parses NSExpression and NSPredicate syntax.
///
/// Errors give the line and column and what was expected. Keywords are case-insensitive;
/// a reserved word used as a key must be escaped with `#` (`$source.#size`).
public struct ExpressionParser {
    private let text: String
    private let tokens: [(token: Token, offset: Int)]
    private var position = 0
    /// How deep the tree being parsed nests here: each parenthesis, function call, list, unary
    /// minus, NOT and arithmetic operator of a chain adds one (`enter`).
    private var depth = 0

    /// The deepest an expression or predicate may nest. Recursion over the tree (binding, Swift
    /// evaluation) stays far from the stack's end, and the SQL compiled from it stays within
    /// SQLite's parser (about 30 nested calls): a deeper tree is refused when the mapping loads,
    /// naming it. Chains of AND and OR are kept balanced, so thousands of terms nest only a few
    /// levels deep.
    public static let maximumDepth = 24

    /// Words that cannot be keys unless escaped with `#`.
    private init(_ text: String) throws(ExpressionError) {
        self.text = text
        tokens = try Lexer.tokenize(text)
    }

    /// Parses a value expression such as `($source.temperature - 32.0) / 1.8`.
    public static func expression(_ text: String) throws(ExpressionError) -> ExpressionSyntax {
        var parser = try ExpressionParser(text)
        let expression = try parser.parseExpression()
        try parser.expectEnd()
        return expression
    }

    /// Parses a predicate such as `price > 10 AND title BEGINSWITH[c] "the"`.
    public static func predicate(_ text: String) throws(ExpressionError) -> PredicateSyntax {
        var parser = try ExpressionParser(text)
        let predicate = try parser.parseOr()
        try parser.expectEnd()
        return predicate
    }

    // MARK: Helpers

    private var current: Token { tokens[position].token }
    private var offset: Int { tokens[position].offset }

    private func error(_ message: String, at offset: Int? = nil) -> ExpressionError {
        ExpressionError(message, at: SourcePosition(offset: offset ?? self.offset, in: text))
    }

    private func unexpected(_ expected: String) -> ExpressionError {
        error("expected \(expected), found \(current.text)")
    }

    private mutating func advance() { if position < tokens.count - 1 { position += 1 } }

    private mutating func accept(_ symbol: String) -> Bool {
        guard current == .symbol(symbol) else { return false }
        advance()
        return true
    }

    private mutating func acceptKeyword(_ word: String) -> Bool {
        guard current.isKeyword(word) else { return false }
        advance()
        return true
    }

    private mutating func expect(_ symbol: String, _ what: String? = nil) throws(ExpressionError) {
        guard accept(symbol) else { throw unexpected(what ?? "'\(symbol)'") }
    }

    private mutating func expectEnd() throws(ExpressionError) {
        guard current == .end else { throw unexpected("the end of the text") }
    }

    /// One level deeper (undone by `leave`), refused past `maximumDepth`.
    private mutating func enter(_ levels: Int = 1) throws(ExpressionError) {
        guard depth + levels <= Self.maximumDepth else {
            throw error(
                "nests deeper than \(Self.maximumDepth) levels (parentheses, function calls, unary minus, NOT and chains of + - * / each count); split it or simplify it"
            )
        }
        depth += levels
    }

    private mutating func leave(_ levels: Int = 1) { depth -= levels }

    /// `items` joined by `join` as a balanced tree, in order: AND and OR are associative (in
    /// SQL's three-valued logic too), so a chain of n terms nests log2(n) levels, not n.
    private static func balanced(_ items: ArraySlice<PredicateSyntax>, _ join: (PredicateSyntax, PredicateSyntax) -> PredicateSyntax) -> PredicateSyntax {
        guard items.count > 1 else { return items.first! }
        let middle = items.startIndex + items.count / 2
        return join(balanced(items[..<middle], join), balanced(items[middle...], join))
    }

    // MARK: Predicates

    private mutating func parseOr() throws(ExpressionError) -> PredicateSyntax {
        var terms = [try parseAnd()]
        while accept("||") || acceptKeyword("OR") {
            terms.append(try parseAnd())
        }
        return Self.balanced(terms[...], PredicateSyntax.or)
    }

    private mutating func parseAnd() throws(ExpressionError) -> PredicateSyntax {
        var terms = [try parseNot()]
        while accept("&&") || acceptKeyword("AND") {
            terms.append(try parseNot())
        }
        return Self.balanced(terms[...], PredicateSyntax.and)
    }

    private mutating func parseNot() throws(ExpressionError) -> PredicateSyntax {
        if accept("!") || acceptKeyword("NOT") {
            try enter()
            defer { leave() }
            return .not(try parseNot())
        }
        return try parsePrimaryPredicate()
    }

    private mutating func parsePrimaryPredicate() throws(ExpressionError) -> PredicateSyntax {
        if acceptKeyword("TRUEPREDICATE") { return .constant(true) }
        if acceptKeyword("FALSEPREDICATE") { return .constant(false) }
        if current == .symbol("(") {
            // A parenthesised predicate, or an expression such as `(a + b) > 3`: try the first.
            let saved = position
            advance()
            try enter()
            let inner = try? parseOr()
            leave()
            if let inner, accept(")"), !startsComparison {
                return inner
            }
            position = saved
        }
        return try parseComparison()
    }

    private var startsComparison: Bool {
        if case .symbol(let symbol) = current { return ["==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "."].contains(symbol) }
        return ["BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "BETWEEN", "IN"].contains { current.isKeyword($0) }
    }

    private mutating func parseComparison() throws(ExpressionError) -> PredicateSyntax {
        let start = offset
        var quantifier: Quantifier?
        if acceptKeyword("ANY") || acceptKeyword("SOME") {
            quantifier = .anyElement
        } else if acceptKeyword("ALL") {
            quantifier = .everyElement
        } else if acceptKeyword("NONE") {
            quantifier = .noElement
        }
        let lhs = try parseExpression()
        if acceptKeyword("BETWEEN") {
            let bounds = try parseExpression()
            guard case .list(let items, _) = bounds, items.count == 2 else {
                throw error("BETWEEN takes two bounds in braces: {low, high}", at: bounds.offset)
            }
            return .between(lhs, items[0], items[1], quantifier: quantifier, at: start)
        }
        if acceptKeyword("IN") {
            let list = try parseExpression()
            guard case .list(let items, _) = list else {
                throw error("IN takes a list in braces: {a, b, …}", at: list.offset)
            }
            return .isIn(lhs, items, quantifier: quantifier, at: start)
        }
        let op: ComparisonOperator
        if case .symbol(let symbol) = current, let found = ComparisonOperator(rawValue: symbol) {
            op = found
        } else if case .identifier(let word, false) = current, let found = ComparisonOperator(rawValue: word.uppercased()), found.isStringOperator {
            op = found
        } else {
            throw unexpected("a comparison (==, !=, <, <=, >, >=, BEGINSWITH, ENDSWITH, CONTAINS, LIKE, MATCHES, BETWEEN, IN)")
        }
        advance()
        var options: ComparisonOptions = []
        if op.isStringOperator || op == .equal || op == .notEqual, current == .symbol("[") {
            advance()
            guard case .identifier(let letters, false) = current, !letters.isEmpty,
                letters.lowercased().allSatisfy({ $0 == "c" || $0 == "d" })
            else {
                throw unexpected("comparison options c, d or cd")
            }
            if letters.lowercased().contains("c") { options.insert(.caseInsensitive) }
            if letters.lowercased().contains("d") { options.insert(.diacriticInsensitive) }
            advance()
            try expect("]")
        }
        return .comparison(lhs, op, options, try parseExpression(), quantifier: quantifier, at: start)
    }

    // MARK: Expressions

    /// A chain of `+` and `-` nests one level per operator (it is left-deep, and arithmetic is
    /// not reassociated: integer overflow to real depends on the order).
    mutating func parseExpression() throws(ExpressionError) -> ExpressionSyntax {
        var result = try parseTerm()
        var operators = 0
        defer { leave(operators) }
        while true {
            let at = offset
            let op: ArithmeticOperator
            if accept("+") { op = .add } else if accept("-") { op = .subtract } else { return result }
            try enter()
            operators += 1
            result = .binary(op, result, try parseTerm(), at: at)
        }
    }

    private mutating func parseTerm() throws(ExpressionError) -> ExpressionSyntax {
        var result = try parseUnary()
        var operators = 0
        defer { leave(operators) }
        while true {
            let at = offset
            let op: ArithmeticOperator
            if accept("*") { op = .multiply } else if accept("/") { op = .divide } else { return result }
            try enter()
            operators += 1
            result = .binary(op, result, try parseUnary(), at: at)
        }
    }

    private mutating func parseUnary() throws(ExpressionError) -> ExpressionSyntax {
        let at = offset
        if accept("-") {
            // Fold a negative number literal, so -9223372036854775808 is an integer.
            if case .integer(let value) = current {
                advance()
                return .literal(.integer(-value), isBoolean: false, at: at)
            }
            try enter()
            defer { leave() }
            return .negate(try parseUnary(), at: at)
        }
        if accept("+") {
            while accept("+") {}  // unary plus changes nothing, however many
            return try parseUnary()
        }
        return try parsePostfix()
    }

    private mutating func parsePostfix() throws(ExpressionError) -> ExpressionSyntax {
        let start = offset
        var base = try parsePrimary()
        var components: [String] = []
        while accept(".") {
            components.append(try keyName())
        }
        guard !components.isEmpty else { return base }
        if case .keyPath(let inner, let first, _) = base {
            base = .keyPath(base: inner, components: first + components, at: start)
            return base
        }
        return .keyPath(base: base, components: components, at: start)
    }

    private mutating func keyName() throws(ExpressionError) -> String {
        guard case .identifier(let name, let escaped) = current else { throw unexpected("a key name") }
        if !escaped && ExpressionText.reservedWords.contains(name.uppercased()) && !name.hasPrefix("@") {
            throw error("\(name) is a reserved word: write #\(name) to use it as a key")
        }
        advance()
        return name
    }

    private mutating func parsePrimary() throws(ExpressionError) -> ExpressionSyntax {
        let at = offset
        switch current {
        case .integer(let value):
            advance()
            return .literal(.integer(value), isBoolean: false, at: at)
        case .real(let value):
            advance()
            return .literal(.real(value), isBoolean: false, at: at)
        case .string(let value):
            advance()
            return .literal(.text(value), isBoolean: false, at: at)
        case .variable(let name):
            advance()
            return .variable(name, at: at)
        case .symbol("("):
            advance()
            try enter()
            defer { leave() }
            let inner = try parseExpression()
            try expect(")", "')' to close the parenthesis")
            return inner
        case .symbol("{"):
            advance()
            try enter()
            defer { leave() }
            var items: [ExpressionSyntax] = []
            if !accept("}") {
                repeat { items.append(try parseExpression()) } while accept(",")
                try expect("}", "'}' or ','")
            }
            return .list(items, at: at)
        case .identifier(let name, let escaped):
            if !escaped {
                switch name.uppercased() {
                case "YES", "TRUE": advance(); return .literal(.integer(1), isBoolean: true, at: at)
                case "NO", "FALSE": advance(); return .literal(.integer(0), isBoolean: true, at: at)
                case "NIL", "NULL": advance(); return .literal(.null, isBoolean: false, at: at)
                case "SELF": advance(); return .keyPath(base: nil, components: [], at: at)
                case "FUNCTION": return try parseManagerFunction()
                case "CAST": return try parseCast()
                default: break
                }
                if let function = try parseFunctionCall(name: name, at: at) { return function }
            }
            return .keyPath(base: nil, components: [try keyName()], at: at)
        default:
            throw unexpected("a value: a number, a string, a key path, $variable, YES/NO, nil, a function or '('")
        }
    }

    /// `name:(args)`, `name:by:(args)` or `name()`; nil when the identifier is a plain key.
    private mutating func parseFunctionCall(name: String, at: Int) throws(ExpressionError) -> ExpressionSyntax? {
        let saved = position
        advance()
        var selector = name
        if accept(":") {
            selector += ":"
            while case .identifier(let part, false) = current, tokens[position + 1].token == .symbol(":") {
                advance()
                advance()
                selector += part + ":"
            }
            guard current == .symbol("(") else {
                position = saved
                return nil
            }
        } else if current != .symbol("(") {
            position = saved
            return nil
        }
        try expect("(")
        try enter()
        defer { leave() }
        var arguments: [ExpressionSyntax] = []
        if !accept(")") {
            repeat { arguments.append(try parseExpression()) } while accept(",")
            try expect(")", "')' or ',' in the arguments of \(selector)")
        }
        return .function(selector, arguments, at: at)
    }

    /// `CAST(value, "NSDate")` or `CAST(value, "NSNumber")`: NSExpression's date literal, seconds
    /// since 2001-01-01, which is how dates are stored, so the value passes through unchanged.
    private mutating func parseCast() throws(ExpressionError) -> ExpressionSyntax {
        advance()
        try expect("(", "'(' after CAST")
        try enter()
        defer { leave() }
        let value = try parseExpression()
        try expect(",", "',' and a type name after the value")
        guard case .string(let type) = current, ["NSDate", "NSNumber"].contains(type) else {
            throw unexpected("\"NSDate\" or \"NSNumber\"")
        }
        advance()
        try expect(")", "')' to close CAST")
        return value
    }

    private mutating func parseManagerFunction() throws(ExpressionError) -> ExpressionSyntax {
        let at = offset
        advance()
        try expect("(", "'(' after FUNCTION")
        try enter()
        defer { leave() }
        let receiver = try parseExpression()
        try expect(",", "',' and a selector string after the receiver")
        guard case .string(let selector) = current else { throw unexpected("a selector string") }
        let selectorOffset = offset
        advance()
        var arguments: [ExpressionSyntax] = []
        while accept(",") { arguments.append(try parseExpression()) }
        try expect(")", "')' or ',' in FUNCTION(…)")
        guard let known = ManagerFunction(rawValue: selector) else {
            throw error(
                "FUNCTION accepts only \(ManagerFunction.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), not \"\(selector)\"",
                at: selectorOffset)
        }
        guard arguments.count == known.argumentCount else {
            throw error("\(selector) takes \(known.argumentCount) arguments after the selector, not \(arguments.count)", at: selectorOffset)
        }
        return .managerFunction(receiver: receiver, selector: selector, arguments: arguments, at: at)
    }
}

/// The migration manager's look-ups that value expressions may call through `FUNCTION($manager, …)`.
public enum ManagerFunction: String, Sendable, CaseIterable {
    /// The destination objects migrated from `sourceInstances` by the named entity mapping.
    case destinationInstancesForEntityMapping = "destinationInstancesForEntityMappingNamed:sourceInstances:"
    /// The destination objects migrated from `sourceInstances` by whichever mappings migrated the
    /// named source relationship's destinations.
    case destinationInstancesForSourceRelationship = "destinationInstancesForSourceRelationshipNamed:sourceInstances:"

    var argumentCount: Int { 2 }
}
