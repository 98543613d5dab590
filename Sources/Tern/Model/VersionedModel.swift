/// A model with all its versions, oldest first, and the one apps use today.
public struct VersionedModel: Sendable, Equatable {
    /// The model's name, for messages.
    public var name: String
    /// Oldest first: the order a chain of migrations walks.
    public var versions: [ObjectModel]
    /// The name of the version apps use today: the version a migration targets by default.
    public var currentVersionName: String
    /// Where the model was read from.
    public var path: String

    /// A model with `versions`, oldest first; `currentVersionName` should name one of them.
    public init(name: String, versions: [ObjectModel], currentVersionName: String, path: String) {
        self.name = name
        self.versions = versions
        self.currentVersionName = currentVersionName
        self.path = path
    }

    /// The version called `name`, or nil when the model has none.
    public func version(named name: String) -> ObjectModel? {
        versions.first { $0.versionName == name }
    }

    /// The same model with another version as the current one.
    public func withCurrent(_ version: String) -> VersionedModel {
        VersionedModel(name: name, versions: versions, currentVersionName: version, path: path)
    }

    /// The current version; the loader guarantees it exists.
    public var current: ObjectModel {
        version(named: currentVersionName) ?? versions[versions.count - 1]
    }
}
