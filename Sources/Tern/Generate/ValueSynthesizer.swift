import Foundation
import TernSQLite

/// Makes plausible values for an attribute: names look like names, titles like titles, numbers
/// and lengths stay inside the attribute's validation rules.
struct ValueSynthesizer {
    private static let firstNames = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Margaret", "Dennis", "Radia", "John", "Jane", "Bill", "Jack", "Hedy"]
    private static let lastNames = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Hamilton", "Ritchie", "Perlman", "Doe", "Smith", "Brown", "Lamarr", "Backus"]
    private static let words = ["silent", "river", "winter", "garden", "stone", "light", "harbor", "paper", "orchard", "glass", "north", "echo", "ember", "meadow", "signal", "atlas", "lantern", "tide", "copper", "hollow"]
    private static let secondsFrom2000To2026: ClosedRange<Double> = -31_622_400...788_918_400

    /// A value for `attribute` of the object numbered `row` (rows are numbered from 0 per entity).
    /// `unique` asks for a value no other row of the entity gets.
    static func value(for attribute: Attribute, row: Int, unique: Bool, using rng: inout SplitMix64) -> SQLiteValue {
        if attribute.isOptional, Double.random(in: 0..<1, using: &rng) < 0.1 {
            return .null
        }
        let rules = attribute.validation
        switch attribute.type {
        case .integer16, .integer32, .integer64:
            let range = attribute.type.integerRange!
            let low = max(range.lowerBound, rules.minimumValue.map { Int64($0.rounded(.up)) } ?? 0)
            let high = min(range.upperBound, rules.maximumValue.map { Int64($0.rounded(.down)) } ?? max(low, 1_000))
            if unique { return .integer(min(high, low + Int64(row))) }
            return .integer(low <= high ? Int64.random(in: low...high, using: &rng) : low)
        case .boolean:
            return .integer(Bool.random(using: &rng) ? 1 : 0)
        case .decimal, .double, .float:
            let low = rules.minimumValue ?? 0
            let high = rules.maximumValue ?? max(low + 1, 100)
            let cents = (Double.random(in: low...high, using: &rng) * 100).rounded() / 100
            return .real(min(max(cents, low), high))
        case .date:
            let low = rules.minimumValue ?? secondsFrom2000To2026.lowerBound
            let high = rules.maximumValue ?? secondsFrom2000To2026.upperBound
            return .real(Double.random(in: low...max(low, high), using: &rng).rounded())
        case .string:
            return .text(fit(text(for: attribute.name, row: row, unique: unique, using: &rng), rules: rules, using: &rng))
        case .uri:
            return .text("https://example.org/\(words.randomElement(using: &rng)!)/\(row)")
        case .uuid:
            var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
            bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
            bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
            return .blob(bytes)
        case .binary, .transformable:
            let count = Int.random(in: max(rules.minimumLength ?? 16, 0)...max(rules.maximumLength ?? 64, rules.minimumLength ?? 16), using: &rng)
            return .blob((0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) })
        }
    }

    private static func text(for name: String, row: Int, unique: Bool, using rng: inout SplitMix64) -> String {
        let lower = name.lowercased()
        let suffix = unique ? " \(row)" : ""
        if lower.contains("first") { return firstNames.randomElement(using: &rng)! + suffix }
        if lower.contains("last") || lower.contains("surname") { return lastNames.randomElement(using: &rng)! + suffix }
        if lower.contains("author") || lower.hasSuffix("name") && !lower.contains("file") {
            return "\(firstNames.randomElement(using: &rng)!) \(lastNames.randomElement(using: &rng)!)\(suffix)"
        }
        if lower.contains("email") { return "\(firstNames.randomElement(using: &rng)!.lowercased()).\(row)@example.org" }
        if lower.contains("url") { return "https://example.org/\(words.randomElement(using: &rng)!)/\(row)" }
        if lower.contains("uuid") || lower == "id" || lower.hasSuffix("id") { return "00000000-0000-4000-8000-\(String(format: "%012d", row))" }
        let count = Int.random(in: 2...4, using: &rng)
        let phrase = (0..<count).map { _ in words.randomElement(using: &rng)! }.joined(separator: " ")
        return phrase.prefix(1).uppercased() + phrase.dropFirst() + suffix
    }

    /// Pads or trims text into the attribute's length bounds.
    private static func fit(_ text: String, rules: ValidationRules, using rng: inout SplitMix64) -> String {
        var result = text
        if let minimum = rules.minimumLength, result.count < minimum {
            result += String(repeating: "x", count: minimum - result.count)
        }
        if let maximum = rules.maximumLength, result.count > maximum {
            result = String(result.suffix(maximum))
        }
        return result
    }
}
