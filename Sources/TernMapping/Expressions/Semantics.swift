import TernSQLite
import TernModel
import TernStore

/// The meaning of expressions, written once for the Swift evaluator; the SQL compiler emits SQL
/// with the same meaning, and differential tests hold the two together.
///
/// - Any NULL operand gives NULL (comparisons give "unknown", which filters treat as false).
/// - `+ - *` on two integers give an integer, or a real when the result overflows 64 bits (as
///   SQLite does); with a real operand they give a real. `/` always divides as reals, like
///   NSExpression; dividing by zero gives NULL. A NaN result is NULL.
/// - Numbers compare by value across integers and reals, exactly; strings compare byte by byte
///   in UTF-8 (SQLite's BINARY collation), not by Swift's Unicode equivalence.
enum Semantics {
    static func arithmetic(_ op: ArithmeticOperator, _ lhs: SQLiteValue, _ rhs: SQLiteValue) -> SQLiteValue {
        if op == .divide {
            guard let a = lhs.double, let b = rhs.double else { return .null }
            return b == 0 ? .null : real(a / b)
        }
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)):
            let (result, overflow): (Int64, Bool)
            switch op {
            case .add: (result, overflow) = a.addingReportingOverflow(b)
            case .subtract: (result, overflow) = a.subtractingReportingOverflow(b)
            case .multiply: (result, overflow) = a.multipliedReportingOverflow(by: b)
            case .divide: preconditionFailure("handled above")
            }
            return overflow ? arithmetic(op, .real(Double(a)), .real(Double(b))) : .integer(result)
        default:
            guard let a = lhs.double, let b = rhs.double else { return .null }
            switch op {
            case .add: return real(a + b)
            case .subtract: return real(a - b)
            case .multiply: return real(a * b)
            case .divide: preconditionFailure("handled above")
            }
        }
    }

    /// Unary minus is `0 - x`, as SQLite evaluates it: never -0.0, and -Int64.min is a real.
    static func negate(_ value: SQLiteValue) -> SQLiteValue {
        arithmetic(.subtract, .integer(0), value)
    }

    private static func real(_ value: Double) -> SQLiteValue {
        value.isNaN ? .null : .real(value)
    }

    /// Orders two non-NULL values of one kind: numbers by value, texts by UTF-8 bytes, blobs by
    /// bytes. Nil when either is NULL.
    static func compare(_ lhs: SQLiteValue, _ rhs: SQLiteValue) -> Int? {
        switch (lhs, rhs) {
        case (.null, _), (_, .null): return nil
        case (.integer(let a), .integer(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.integer(let a), .real(let b)): return compare(integer: a, real: b)
        case (.real(let a), .integer(let b)): return -compare(integer: b, real: a)
        case (.real(let a), .real(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.text(let a), .text(let b)): return compareBytes(Array(a.utf8), Array(b.utf8))
        case (.blob(let a), .blob(let b)): return compareBytes(a, b)
        default:
            // SQLite's order of storage classes: numbers < text < blob.
            return rank(lhs) < rank(rhs) ? -1 : 1
        }
    }

    /// NSPredicate's `==`: NULL equals NULL, and NULL equals nothing else (SQL's `IS`).
    static func identical(_ lhs: SQLiteValue, _ rhs: SQLiteValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.null, _), (_, .null): false
        default: compare(lhs, rhs) == 0
        }
    }

    /// An integer and a real compared exactly, as SQLite does (no rounding of large integers).
    private static func compare(integer a: Int64, real b: Double) -> Int {
        if b.isNaN { return 1 }
        if b >= 9_223_372_036_854_775_808.0 { return -1 }
        if b < -9_223_372_036_854_775_808.0 { return 1 }
        let truncated = Int64(b)
        if a != truncated { return a < truncated ? -1 : 1 }
        let fraction = b - Double(truncated)
        return fraction > 0 ? -1 : (fraction < 0 ? 1 : 0)
    }

    private static func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.lexicographicallyPrecedes(b) ? -1 : (a == b ? 0 : 1)
    }

    private static func rank(_ value: SQLiteValue) -> Int {
        switch value {
        case .null: 0
        case .integer, .real: 1
        case .text: 2
        case .blob: 3
        }
    }

    /// SQLite's `CAST(x AS INTEGER)` of a number: truncation toward zero, saturating.
    static func integer(_ value: SQLiteValue) -> Int64? {
        switch value {
        case .integer(let a): return a
        case .real(let a):
            if a.isNaN { return 0 }
            if a >= 9_223_372_036_854_775_807.0 { return .max }
            if a <= -9_223_372_036_854_775_808.0 { return .min }
            return Int64(a)
        default: return nil
        }
    }

    // MARK: Three-valued logic (nil is "unknown")

    static func not(_ value: Bool?) -> Bool? { value.map { !$0 } }

    static func and(_ lhs: Bool?, _ rhs: Bool?) -> Bool? {
        if lhs == false || rhs == false { return false }
        if lhs == nil || rhs == nil { return nil }
        return true
    }

    static func or(_ lhs: Bool?, _ rhs: Bool?) -> Bool? {
        if lhs == true || rhs == true { return true }
        if lhs == nil || rhs == nil { return nil }
        return false
    }
}
