import Foundation

/// What a derived attribute's value is computed from (`NSDerivedAttributeDescription`'s
/// derivation expression). Core Data keeps it current with SQL triggers; Tern computes the values
/// of the kinds it knows after loading a store and writes Core Data's triggers for them.
public enum Derivation: Sendable, Equatable, Codable, CustomStringConvertible {
    /// `relationship.@count`: how many objects a to-many reaches (CoreDataPlus's `pagesCount`).
    case count(relationship: String)
    /// Any other expression, kept as written: its values are copied as the mapping says, and a
    /// store gets no triggers for it (`StoreLayout.untriggeredDerivations` names them).
    case other(String)

    /// Reads Xcode's text (`pages.@count`) or the function form a compiled model archives
    /// (`count:(pages)`).
    public init(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let name = { (candidate: Substring) -> String? in
            guard let first = candidate.first, first.isLetter || first == "_",
                candidate.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
            else { return nil }
            return String(candidate)
        }
        if trimmed.hasSuffix(".@count"), let relationship = name(trimmed.dropLast(".@count".count)) {
            self = .count(relationship: relationship)
        } else if trimmed.hasPrefix("count:("), trimmed.hasSuffix(")"), let relationship = name(trimmed.dropFirst("count:(".count).dropLast()) {
            self = .count(relationship: relationship)
        } else {
            self = .other(trimmed)
        }
    }

    /// `NSExpression.predicateFormat` of it: what its version hash digests (`count:(pages)`;
    /// Core Data turns `pages.@count` into this function form when the expression is set).
    public var predicateFormat: String {
        switch self {
        case .count(let relationship): "count:(\(relationship))"
        case .other(let text): text
        }
    }

    /// Xcode's text for it.
    public var description: String {
        switch self {
        case .count(let relationship): "\(relationship).@count"
        case .other(let text): text
        }
    }
}
