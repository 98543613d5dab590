import Foundation
import TernSQLite

extension AttributeType {
    /// Why a stored value cannot belong to this type, or nil when it can.
    func rejectionReason(for value: SQLiteValue) -> String? {
        switch (self, value) {
        case (_, .null):
            return nil
        case (.integer16, .integer(let number)), (.integer32, .integer(let number)), (.integer64, .integer(let number)), (.boolean, .integer(let number)):
            return integerRange!.contains(number) ? nil : "is out of range for \(xcodeName) (\(integerRange!))"
        case (.decimal, .real), (.double, .real), (.float, .real), (.date, .real),
            (.decimal, .integer), (.double, .integer), (.float, .integer), (.date, .integer):
            return nil
        case (.string, .text), (.uri, .text):
            return nil
        case (.uuid, .blob(let bytes)):
            return bytes.count == 16 ? nil : "is not 16 bytes"
        case (.binary, .blob), (.transformable, .blob):
            return nil
        default:
            return "is not a \(xcodeName)"
        }
    }

    /// Parses a default value written as text, as Xcode's `defaultValueString` and Tern's model
    /// files do: numbers, `YES`/`NO`/`true`/`false`, a UUID string, dates as seconds since
    /// 2001-01-01 or ISO 8601.
    ///
    /// - Throws: a message saying what was expected.
    public func parseDefault(_ text: String) throws(ModelTextError) -> SQLiteValue {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch self {
        case .integer16, .integer32, .integer64:
            guard let number = Int64(trimmed) else { throw ModelTextError("\(text) is not an integer") }
            return .integer(number)
        case .boolean:
            switch trimmed.lowercased() {
            case "yes", "true", "1": return .integer(1)
            case "no", "false", "0": return .integer(0)
            default: throw ModelTextError("\(text) is not a boolean (YES or NO)")
            }
        case .decimal, .double, .float:
            guard let number = Double(trimmed), number.isFinite else { throw ModelTextError("\(text) is not a number") }
            return .real(number)
        case .date:
            if let seconds = Double(trimmed) { return .real(seconds) }
            if let date = ISO8601DateFormatter().date(from: trimmed) { return .real(date.timeIntervalSinceReferenceDate) }
            throw ModelTextError("\(text) is not a date (seconds since 2001-01-01, or ISO 8601)")
        case .string, .uri:
            return .text(text)
        case .uuid:
            guard let uuid = UUID(uuidString: trimmed) else { throw ModelTextError("\(text) is not a UUID") }
            return .blob(withUnsafeBytes(of: uuid.uuid) { Array($0) })
        case .binary, .transformable:
            guard let data = Data(base64Encoded: trimmed) else { throw ModelTextError("\(text) is not base64") }
            return .blob([UInt8](data))
        case .undefined:
            throw ModelTextError("\(text): an attribute of undefined type has no default")
        }
    }
}

/// A problem with one value written in a model file.
public struct ModelTextError: Error, CustomStringConvertible {
    /// What is wrong with the value, quoting it.
    public let description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
