import Foundation
import Tern
import TernCommands

/// Why a store failed, as a fleet records it: retrying can help or it cannot.
struct FleetError: Codable, Equatable, Error, CustomStringConvertible {
    /// Whether another attempt can help.
    enum Class: String, Codable, CustomStringConvertible {
        /// Bad input, validation or verification: retrying cannot help.
        case permanent
        /// I/O, an interruption, the store in use or its lease held elsewhere.
        case retryable

        var description: String { rawValue }
    }

    /// Whether retrying can help (recorded as "permanent" or "retryable").
    var `class`: Class
    /// The failure's kind (`FailureKind`), as the single-store exit codes have it.
    var kind: String
    var message: String

    var isPermanent: Bool { self.class == .permanent }
    var description: String { message }

    init(class: Class, kind: String, message: String) {
        self.class = `class`; self.kind = kind; self.message = message
    }

    /// Classifies any error: the kinds a later attempt can get past are retryable.
    init(_ error: any Error) {
        if let error = error as? LeaseError {
            self.init(
                class: error.isPermanent ? .permanent : .retryable, kind: error.code == ENOENT || error.code == ENOTDIR ? "missingInput" : "io",
                message: error.description)
            return
        }
        let kind = FailureKind(of: error)
        let retryable: Bool =
            switch kind {
            case .interrupted, .inUse, .sourceChanged, .io: true
            case .badInput, .missingInput, .validation, .verification, .noVersionMatches, .outputExists, .internal: false
            }
        self.init(class: retryable ? .retryable : .permanent, kind: "\(kind)", message: "\(error)")
    }
}
