import Foundation
import TernModel
import TernStore
import TernSQLite

/// Text operations whose meaning SQLite lacks or gets only for ASCII. Tern registers them as SQL
/// functions on the connections it reads with, so pushed-down SQL and the Swift evaluator run the
/// very same code for them.
enum TextFunctions {
    static func uppercase(_ text: String) -> String { text.uppercased() }
    static func lowercase(_ text: String) -> String { text.lowercased() }

    /// Folding for `[c]` (Unicode lowercase mapping) and `[d]` (diacritics removed).
    static func fold(_ text: String, _ options: ComparisonOptions) -> String {
        var result = text
        if options.contains(.diacriticInsensitive) {
            result = result.folding(options: .diacriticInsensitive, locale: nil)
        }
        if options.contains(.caseInsensitive) {
            result = result.lowercased()
        }
        return result
    }

    /// Why `pattern` cannot be a `MATCHES` pattern under `options`, or nil when it compiles.
    static func patternProblem(_ pattern: String, options: ComparisonOptions) -> String? {
        let folded = options.contains(.diacriticInsensitive) ? fold(pattern, [.diacriticInsensitive]) : pattern
        do {
            _ = try RegexCache().regex(for: folded, caseInsensitive: options.contains(.caseInsensitive))
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// `MATCHES`: the whole text matches the ICU regular expression.
    static func matches(_ text: String, pattern: String, options: ComparisonOptions, cache: RegexCache, limit: Duration = matchTimeLimit) throws -> Bool {
        let regex = try cache.regex(
            for: options.contains(.diacriticInsensitive) ? fold(pattern, [.diacriticInsensitive]) : pattern,
            caseInsensitive: options.contains(.caseInsensitive))
        let subject = options.contains(.diacriticInsensitive) ? fold(text, [.diacriticInsensitive]) : text
        let range = NSRange(subject.startIndex..., in: subject)
        // ICU reports progress while it backtracks: a pattern that would run for minutes over
        // one value is stopped after `limit` (ICU's own backtracking stack gives up on
        // (x+x+)+y over 5,000 x's after about half a second).
        let deadline = ContinuousClock.now + limit
        var whole = false
        var timedOut = false
        regex.enumerateMatches(in: subject, options: [.anchored, .reportProgress], range: range) { match, _, stop in
            if let match {
                whole = match.range == range
                stop.pointee = true
            } else if ContinuousClock.now > deadline {
                timedOut = true
                stop.pointee = true
            }
        }
        if timedOut { throw RegexCache.TooSlow(pattern: pattern, limit: limit) }
        return whole
    }

    /// The longest one `MATCHES` may take over one value.
    static let matchTimeLimit = Duration.seconds(2)

    /// Registers `tern_upper(x)`, `tern_lower(x)`, `tern_fold(x, options)` and
    /// `tern_matches(text, pattern, options)` on a connection; SQL compiled from expressions uses
    /// them. NULL in, NULL out.
    static func register(on connection: Connection) throws {
        try connection.createFunction("tern_upper", argumentCount: 1) { arguments in
            arguments[0].text.map { .text(uppercase($0)) } ?? .null
        }
        try connection.createFunction("tern_lower", argumentCount: 1) { arguments in
            arguments[0].text.map { .text(lowercase($0)) } ?? .null
        }
        try connection.createFunction("tern_fold", argumentCount: 2) { arguments in
            guard let text = arguments[0].text, let options = arguments[1].int64 else { return .null }
            return .text(fold(text, ComparisonOptions(rawValue: Int(options))))
        }
        let cache = RegexCache()
        try connection.createFunction("tern_matches", argumentCount: 3) { arguments in
            guard let text = arguments[0].text, let pattern = arguments[1].text, let options = arguments[2].int64 else { return .null }
            return .integer(try matches(text, pattern: pattern, options: ComparisonOptions(rawValue: Int(options)), cache: cache) ? 1 : 0)
        }
    }
}

/// Compiled regular expressions by pattern: patterns are almost always constants, so each is
/// compiled once per connection or evaluator, not once per row.
final class RegexCache {
    private var compiled: [String: NSRegularExpression] = [:]

    struct InvalidPattern: Error, CustomStringConvertible {
        let pattern: String
        var description: String { "not a valid regular expression: \(pattern)" }
    }

    /// A match that ran past the time limit: the pattern backtracks without bound on this value.
    struct TooSlow: Error, CustomStringConvertible {
        let pattern: String
        let limit: Duration
        var description: String {
            "the regular expression \(pattern) took more than \(limit) on one value (it backtracks without bound): write it without nested repetition"
        }
    }

    func regex(for pattern: String, caseInsensitive: Bool) throws -> NSRegularExpression {
        let key = (caseInsensitive ? "i:" : "s:") + pattern
        if let regex = compiled[key] { return regex }
        guard let regex = try? NSRegularExpression(pattern: pattern, options: caseInsensitive ? [.caseInsensitive] : []) else {
            throw InvalidPattern(pattern: pattern)
        }
        compiled[key] = regex
        return regex
    }
}
