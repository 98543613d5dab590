/// Something a model file says that Xcode's model compiler accepts though it looks wrong (a
/// Boolean's `YES` as an Integer 32's default): loaded as Xcode loads it, and said to people.
///
/// A quirk copied into every version of a long history is one quirk: commands say each distinct
/// one once, and only for the versions they use (`VersionedModel.warnings(for:)`).
public struct ModelWarning: Sendable, Equatable, CustomStringConvertible {
    /// The version whose file says it.
    public var version: String
    /// The file, for people.
    public var file: String
    /// What it says and how it was read, naming the entity and property.
    public var message: String

    public init(version: String, file: String, message: String) {
        self.version = version
        self.file = file
        self.message = message
    }

    public var description: String { "\(file): \(message)" }
}

extension VersionedModel {
    /// Each distinct quirk of `versions` (every version when nil) once, with the versions whose
    /// files have it: "message (in A, B and 3 more versions of Model)".
    public func warnings(for versions: Set<String>? = nil) -> [String] {
        let used = warnings.filter { versions?.contains($0.version) ?? true }
        var order: [String] = []
        var where_: [String: [ModelWarning]] = [:]
        for warning in used {
            if where_[warning.message] == nil { order.append(warning.message) }
            where_[warning.message, default: []].append(warning)
        }
        return order.map { message in
            let found = where_[message]!
            guard found.count > 1 else { return found[0].description }
            let names = found.map(\.version)
            let shown = names.prefix(3).joined(separator: ", ")
            return "\(message) (in \(shown)\(names.count > 3 ? " and \(names.count - 3) more" : "") versions of \(name))"
        }
    }
}
