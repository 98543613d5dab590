import TernModel
import TernStore
import TernMapping
/// The migrated data did not pass: objects break the destination model's rules, or the result
/// differs from what the mapping makes of the source. For whoever fixes the data or the mapping;
/// the process itself ran as it should (that is `MigrationError`).
public enum MigrationFailure: Error, CustomStringConvertible {
    /// Destination objects break the destination model's rules.
    case validation([ValidationViolation])
    /// The migrated store does not match the source as the mapping says it should.
    case verification(String)

    public var description: String {
        switch self {
        case .validation(let violations):
            "validation failed:\n" + violations.map { "  - \($0)" }.joined(separator: "\n")
        case .verification(let message):
            "verification failed: \(message)"
        }
    }
}
