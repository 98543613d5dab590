import Tern
import Foundation
import TernSQLite

/// Makes plausible values for one attribute: names look like names, titles like titles, numbers
/// and lengths stay inside the attribute's validation rules. Everything that depends only on the
/// attribute is worked out once, so a row costs a few random numbers.
struct ValueSynthesizer {
    private static let firstNames = [
        "Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Margaret", "Dennis", "Radia", "John", "Jane", "Bill", "Jack", "Hedy",
    ]
    private static let lastNames = [
        "Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Hamilton", "Ritchie", "Perlman", "Doe", "Smith", "Brown", "Lamarr",
        "Backus",
    ]
    private static let words = [
        "silent", "river", "winter", "garden", "stone", "light", "harbor", "paper", "orchard", "glass", "north", "echo", "ember", "meadow", "signal", "atlas",
        "lantern", "tide", "copper", "hollow",
    ]
    private static let capitalized = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }
    private static let secondsFrom2000To2026: ClosedRange<Double> = -31_622_400...788_918_400

    /// What kind of text an attribute holds, guessed once from its name.
    private enum TextKind { case firstName, lastName, fullName, email, url, identifier, phrase }

    private let attribute: Attribute
    private let unique: Bool
    private let textKind: TextKind
    private let integers: ClosedRange<Int64>
    private let reals: ClosedRange<Double>
    private let blobLengths: ClosedRange<Int>
    /// Where values stored outside the store go, for an attribute that allows it.
    private let externalFolder: String?

    init(_ attribute: Attribute, unique: Bool, externalFolder: String? = nil) {
        self.attribute = attribute
        self.externalFolder = attribute.allowsExternalStorage && attribute.type == .binary ? externalFolder : nil
        self.unique = unique
        let name = attribute.name.lowercased()
        textKind =
            if name.contains("first") { .firstName } else if name.contains("last") || name.contains("surname") { .lastName } else if name.contains("email") {
                .email
            } else if name.contains("url") || attribute.type == .uri {
                .url
            } else if name.contains("author") || (name.hasSuffix("name") && !name.contains("file")) {
                .fullName
            } else if name.contains("uuid") || name == "id" || name.hasSuffix("id") { .identifier } else { .phrase }
        let rules = attribute.validation
        if let range = attribute.type.integerRange {
            let low = max(range.lowerBound, rules.minimumValue.map { Int64($0.rounded(.up)) } ?? 0)
            let high = min(range.upperBound, rules.maximumValue.map { Int64($0.rounded(.down)) } ?? max(low, 1_000))
            integers = low...max(low, high)
        } else {
            integers = 0...0
        }
        if attribute.type == .date {
            let low = rules.minimumValue ?? Self.secondsFrom2000To2026.lowerBound
            reals = low...max(low, rules.maximumValue ?? Self.secondsFrom2000To2026.upperBound)
        } else {
            let low = rules.minimumValue ?? 0
            reals = low...max(low, rules.maximumValue ?? max(low + 1, 100))
        }
        let shortest = max(rules.minimumLength ?? 16, 0)
        blobLengths = shortest...max(shortest, rules.maximumLength ?? 64)
    }

    /// A value for the object with key `key`; keys are unique across an inheritance tree's table,
    /// so values made unique from them stay unique across subentities too.
    func value(key: Int64, using rng: inout SplitMix64) throws -> SQLiteValue {
        let row = Int(key)
        if attribute.isOptional, rng.next() % 10 == 0 {
            return .null
        }
        switch attribute.type {
        case .integer16, .integer32, .integer64:
            return .integer(unique ? min(integers.upperBound, integers.lowerBound + Int64(row)) : Int64.random(in: integers, using: &rng))
        case .boolean:
            return .integer(Int64(rng.next() & 1))
        case .decimal, .double, .float:
            let cents = (Double.random(in: reals, using: &rng) * 100).rounded() / 100
            return .real(min(max(cents, reals.lowerBound), reals.upperBound))
        case .date:
            return .real(Double.random(in: reals, using: &rng).rounded())
        case .string, .uri:
            return .text(fit(text(row: row, using: &rng)))
        case .uuid:
            var bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
            bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
            return .blob(bytes)
        case .binary where externalFolder != nil:
            return .blob(try markedValue(using: &rng))
        case .binary, .transformable:
            return .blob((0..<Int.random(in: blobLengths, using: &rng)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        case .undefined:
            return .null  // transient alone: never stored
        }
    }

    /// A value as Core Data stores one that may live outside the store: one in four is a file of
    /// 100–160 KiB (above Core Data's threshold) in `externalFolder`, the rest are inline.
    private func markedValue(using rng: inout SplitMix64) throws -> [UInt8] {
        guard let externalFolder, rng.next() % 4 == 0 else {
            return ExternalBinaryData.inlineValue(bytes(Int.random(in: blobLengths, using: &rng), using: &rng))
        }
        let b = bytes(16, using: &rng)
        let name = UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])).uuidString
        let contents = Data(bytes(Int.random(in: 102_400...163_840, using: &rng), using: &rng))
        let file = externalFolder + "/" + name
        guard FileManager.default.createFile(atPath: file, contents: contents) else {
            throw TernError(.io, "cannot write an external data file", path: file)
        }
        return ExternalBinaryData.referenceValue(name)
    }

    private func bytes(_ count: Int, using rng: inout SplitMix64) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(count + 8)
        while bytes.count < count {
            withUnsafeBytes(of: rng.next()) { bytes.append(contentsOf: $0) }
        }
        return Array(bytes.prefix(count))
    }

    private func text(row: Int, using rng: inout SplitMix64) -> String {
        let suffix = unique ? " \(row)" : ""
        switch textKind {
        case .firstName: return Self.firstNames.randomElement(using: &rng)! + suffix
        case .lastName: return Self.lastNames.randomElement(using: &rng)! + suffix
        case .fullName: return Self.firstNames.randomElement(using: &rng)! + " " + Self.lastNames.randomElement(using: &rng)! + suffix
        case .email: return Self.firstNames.randomElement(using: &rng)!.lowercased() + ".\(row)@example.org"
        case .url: return "https://example.org/" + Self.words.randomElement(using: &rng)! + "/\(row)"
        case .identifier: return "00000000-0000-4000-8000-" + String(String(row + 1_000_000_000_000).suffix(12))
        case .phrase:
            var phrase = Self.capitalized.randomElement(using: &rng)!
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                phrase += " " + Self.words.randomElement(using: &rng)!
            }
            return phrase + suffix
        }
    }

    /// Pads or trims text into the attribute's length bounds.
    private func fit(_ text: String) -> String {
        let rules = attribute.validation
        guard rules.minimumLength != nil || rules.maximumLength != nil else { return text }
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
