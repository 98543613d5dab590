/// An error a person can act on: what went wrong, and which file or entity is at fault.
///
/// `kind` sorts failures by who must act, and decides the command-line exit status (see the
/// exit-code table in the article "Exit codes and guarantees").
public struct TernError: Error, Equatable, CustomStringConvertible {
    /// Who must act, and how: the exit status `tern` gives the error.
    public enum Kind: Sendable, Equatable {
        /// A file the user named does not exist.
        case missingInput
        /// A file exists but is not what it should be (not SQLite, not a Core Data store, a
        /// malformed model).
        case badInput
        /// Reading or writing failed (disk full, permissions, I/O error).
        case io
    }

    /// What sort of failure this is (see `Kind`).
    public let kind: Kind
    /// What went wrong, in words, without the path (`description` adds it).
    public let message: String
    /// The file at fault, when there is one.
    public let path: String?

    /// An error of `kind` saying `message` about the file at `path`, when there is one.
    public init(_ kind: Kind, _ message: String, path: String? = nil) {
        self.kind = kind
        self.message = message
        self.path = path
    }

    public var description: String {
        path.map { "\($0): \(message)" } ?? message
    }
}
