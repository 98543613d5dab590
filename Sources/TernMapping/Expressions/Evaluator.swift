import TernSQLite
import TernModel
import TernStore

/// Supplies the elements of a to-many relationship for quantified predicates (`ANY pages.text …`)
/// evaluated in Swift: each element's values for `inputs`.
public protocol ElementSource {
    func elements(of relationship: String, entity: String, owner: Int64, inputs: [Input]) throws -> [[SQLiteValue]]
}

/// A value expression compiled to Swift closures once; `evaluate` takes the expression's input
/// values for one object (in `CompiledExpression.inputs` order).
public struct ExpressionProgram {
    /// The expression this program runs, with the inputs it expects.
    public let compiled: CompiledExpression
    private let code: Code

    /// Inputs come as a slice of a longer row, so each object's are read where they lie.
    typealias Code = (ArraySlice<SQLiteValue>) throws -> SQLiteValue

    /// Compiles `compiled` to closures once, so each `evaluate` call does no parsing or dispatch on syntax.
    public init(_ compiled: CompiledExpression) {
        self.compiled = compiled
        code = Self.compile(compiled.expression, regexes: RegexCache())
    }

    /// The expression's value for one object, given its values for `compiled.inputs`, in that order.
    /// Throws `TernError` (`.badInput`) when a function gets a value of the wrong kind.
    public func evaluate(_ inputs: [SQLiteValue]) throws -> SQLiteValue {
        try code(inputs[...])
    }

    /// The same, given the inputs where they lie in a longer row (a batch's read of every
    /// value, say), without copying them out for each object.
    public func evaluate(_ inputs: ArraySlice<SQLiteValue>) throws -> SQLiteValue {
        try code(inputs)
    }

    static func compile(_ expression: BoundExpression, regexes: RegexCache) -> Code {
        switch expression {
        case .constant(let value):
            return { _ in value }
        case .input(let index):
            return { $0[$0.startIndex + index] }
        case .binary(let op, let lhs, let rhs):
            let left = compile(lhs, regexes: regexes)
            let right = compile(rhs, regexes: regexes)
            return { inputs in Semantics.arithmetic(op, try left(inputs), try right(inputs)) }
        case .negate(let operand):
            let inner = compile(operand, regexes: regexes)
            return { inputs in Semantics.negate(try inner(inputs)) }
        case .function(let function, let arguments):
            let parts = arguments.map { compile($0, regexes: regexes) }
            return { inputs in
                let values = try parts.map { try $0(inputs) }
                return try call(function, values)
            }
        }
    }

    /// A built-in function over its arguments' values: the Swift evaluator's, and SQL's where
    /// the compiler calls it as a function (`SQLCompiler.calledOnce`).
    static func call(_ function: BuiltinFunction, _ values: [SQLiteValue]) throws -> SQLiteValue {
        if function == .ifNil { return values[0] == .null ? values[1] : values[0] }
        if values.contains(.null) { return .null }
        // Text functions take text (a column of a string attribute always holds text in a store
        // Core Data wrote; the anomaly scan refuses stores where it does not).
        let textArguments: Int =
            switch function {
            case .uppercase, .lowercase, .length, .trim, .substring: 1
            case .substringBefore, .substringAfter: 2
            case .concat: values.count
            default: 0
            }
        if let bad = values.prefix(textArguments).first(where: { $0.text == nil }) {
            throw TernError(.badInput, "\(function) got \(bad.sqlLiteral.prefix(40)) where text is expected")
        }
        switch function {
        case .uppercase: return .text(TextFunctions.uppercase(values[0].text!))
        case .lowercase: return .text(TextFunctions.lowercase(values[0].text!))
        case .length: return .integer(Int64(values[0].text!.utf16.count))
        case .trim:
            var scalars = Substring(values[0].text!).unicodeScalars[...]
            while scalars.first == " " { scalars.removeFirst() }
            while scalars.last == " " { scalars.removeLast() }
            return .text(String(String.UnicodeScalarView(scalars)))
        case .substringBefore, .substringAfter:
            let text = Array(values[0].text!.utf8)
            let separator = Array(values[1].text!.utf8)
            guard let found = firstIndex(of: separator, in: text) else {
                return function == .substringBefore ? values[0] : .text("")
            }
            let part = function == .substringBefore ? text[..<found] : text[(found + separator.count)...]
            return .text(String(decoding: part, as: UTF8.self))
        case .substring:
            let scalars = Array(values[0].text!.unicodeScalars)
            guard let start = Semantics.integer(values[1]), let count = Semantics.integer(values[2]) else {
                throw TernError(.badInput, "\(function) got \(values[1].sqlLiteral.prefix(40)), \(values[2].sqlLiteral.prefix(40)) where numbers are expected")
            }
            guard start >= 0, count >= 0 else { return .null }
            guard start < Int64(scalars.count) else { return .text("") }
            let end = Int(min(Int64(scalars.count), start + min(count, Int64(scalars.count))))
            return .text(String(String.UnicodeScalarView(scalars[Int(start)..<end])))
        case .concat:
            return .text(values.map { $0.text! }.joined())
        case .abs:
            return (Semantics.compare(values[0], .integer(0)) ?? 0) < 0 ? Semantics.negate(values[0]) : values[0]
        case .now, .add, .subtract, .multiply, .divide, .ifNil:
            preconditionFailure("\(function) is bound to a constant or an operator, or handled above")
        }
    }

    static func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard !needle.isEmpty else { return 0 }
        guard needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<start + needle.count].elementsEqual(needle) { return start }
        }
        return nil
    }
}

/// A predicate compiled to Swift closures once. `evaluate` gives true, false, or nil for
/// "unknown" (a NULL was compared); `matches` treats unknown as false, as a filter does.
public struct PredicateProgram {
    /// The predicate this program runs, with the inputs it expects.
    public let compiled: CompiledPredicate
    private let code: Code

    typealias Code = (ArraySlice<SQLiteValue>) throws -> Bool?

    /// - Parameters:
    ///   - compiled: the predicate, bound to its entity and compiled to its inputs.
    ///   - elements: where to-many key paths find their elements; needed only for ANY/ALL/NONE.
    public init(_ compiled: CompiledPredicate, elements: ElementSource? = nil) {
        self.compiled = compiled
        code = Self.compile(compiled.predicate, entity: compiled.entity, inputs: compiled.inputs, elements: elements, regexes: RegexCache())
    }

    /// True, false, or nil when the result is unknown (a NULL was compared), given the object's values
    /// for `compiled.inputs`, in that order. Throws as `ExpressionProgram.evaluate` does, or when
    /// ANY/ALL/NONE runs without an `ElementSource`.
    public func evaluate(_ inputs: [SQLiteValue]) throws -> Bool? {
        try code(inputs[...])
    }

    /// Whether the object passes the predicate as a filter: unknown counts as false.
    public func matches(_ inputs: [SQLiteValue]) throws -> Bool {
        try code(inputs[...]) == true
    }

    static func compile(_ predicate: BoundPredicate, entity: String, inputs: [Input], elements: ElementSource?, regexes: RegexCache) -> Code {
        func value(_ expression: BoundExpression) -> ExpressionProgram.Code {
            ExpressionProgram.compile(expression, regexes: regexes)
        }
        switch predicate {
        case .constant(let result):
            return { _ in result }
        case .not(let inner):
            let code = compile(inner, entity: entity, inputs: inputs, elements: elements, regexes: regexes)
            return { Semantics.not(try code($0)) }
        case .and(let lhs, let rhs):
            let left = compile(lhs, entity: entity, inputs: inputs, elements: elements, regexes: regexes)
            let right = compile(rhs, entity: entity, inputs: inputs, elements: elements, regexes: regexes)
            return { Semantics.and(try left($0), try right($0)) }
        case .or(let lhs, let rhs):
            let left = compile(lhs, entity: entity, inputs: inputs, elements: elements, regexes: regexes)
            let right = compile(rhs, entity: entity, inputs: inputs, elements: elements, regexes: regexes)
            return { Semantics.or(try left($0), try right($0)) }
        case .compare(let lhs, let op, let options, let rhs):
            let left = value(lhs)
            let right = value(rhs)
            return { inputs in try compare(try left(inputs), op, options, try right(inputs), regexes: regexes) }
        case .between(let subject, let low, let high):
            let code = value(subject)
            let lower = value(low)
            let upper = value(high)
            return { inputs in
                let v = try code(inputs)
                let aboveLow = Semantics.compare(v, try lower(inputs)).map { $0 >= 0 }
                let belowHigh = Semantics.compare(v, try upper(inputs)).map { $0 <= 0 }
                return Semantics.and(aboveLow, belowHigh)
            }
        case .isIn(let subject, let items):
            let code = value(subject)
            let list = items.map(value)
            return { inputs in
                let v = try code(inputs)
                return try list.contains { Semantics.identical(v, try $0(inputs)) }
            }
        case .quantified(let quantifier, let relationship, let elementEntity, let inner, let elementInputs):
            let code = compile(inner, entity: elementEntity, inputs: elementInputs, elements: elements, regexes: regexes)
            let ownKey = inputs.firstIndex { $0.final == .ownKey && $0.relationships.isEmpty }!
            return { inputs in
                guard let elements, let owner = inputs[inputs.startIndex + ownKey].int64 else {
                    throw ElementSourceMissing(relationship: relationship)
                }
                let results = try elements.elements(of: relationship, entity: entity, owner: owner, inputs: elementInputs).map { try code($0[...]) }
                switch quantifier {
                case .anyElement: return results.contains(true)
                case .everyElement: return !results.contains(false)
                case .noElement: return !results.contains(true)
                }
            }
        }
    }

    static func compare(_ lhs: SQLiteValue, _ op: ComparisonOperator, _ options: ComparisonOptions, _ rhs: SQLiteValue, regexes: RegexCache) throws -> Bool? {
        var left = lhs
        var right = rhs
        if !options.isEmpty, op != .matches {
            if case .text(let text) = left { left = .text(TextFunctions.fold(text, options)) }
            if case .text(let text) = right { right = .text(TextFunctions.fold(text, options)) }
        }
        switch op {
        case .equal: return Semantics.identical(left, right)
        case .notEqual: return !Semantics.identical(left, right)
        case .less: return Semantics.compare(left, right).map { $0 < 0 }
        case .lessOrEqual: return Semantics.compare(left, right).map { $0 <= 0 }
        case .greater: return Semantics.compare(left, right).map { $0 > 0 }
        case .greaterOrEqual: return Semantics.compare(left, right).map { $0 >= 0 }
        default: break
        }
        guard let text = left.text, let pattern = right.text else { return nil }
        switch op {
        case .beginsWith: return text.utf8.starts(with: pattern.utf8)
        case .endsWith: return text.utf8.reversed().starts(with: pattern.utf8.reversed())
        case .contains: return ExpressionProgram.firstIndex(of: Array(pattern.utf8), in: Array(text.utf8)) != nil
        case .like: return glob(Array(text.unicodeScalars)[...], Array(pattern.unicodeScalars)[...])
        case .matches: return try TextFunctions.matches(text, pattern: pattern, options: options, cache: regexes)
        default: preconditionFailure("handled above")
        }
    }

    /// NSPredicate's LIKE: `*` matches any run of characters, `?` exactly one; all else literally.
    static func glob(_ text: ArraySlice<Unicode.Scalar>, _ pattern: ArraySlice<Unicode.Scalar>) -> Bool {
        var t = text.startIndex
        var p = pattern.startIndex
        var star: (pattern: Int, text: Int)?
        while t < text.endIndex {
            if p < pattern.endIndex, pattern[p] == "?" || (pattern[p] != "*" && pattern[p] == text[t]) {
                t += 1
                p += 1
            } else if p < pattern.endIndex, pattern[p] == "*" {
                star = (p, t)
                p += 1
            } else if let last = star {
                p = last.pattern + 1
                t = last.text + 1
                star = (last.pattern, last.text + 1)
            } else {
                return false
            }
        }
        while p < pattern.endIndex, pattern[p] == "*" { p += 1 }
        return p == pattern.endIndex
    }
}

/// ANY/ALL/NONE were evaluated in Swift without a source of elements.
struct ElementSourceMissing: Error, CustomStringConvertible {
    let relationship: String
    var description: String { "evaluating ANY/ALL/NONE over \(relationship) needs the store's elements" }
}
