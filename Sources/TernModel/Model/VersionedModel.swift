/// A model with all its versions (as it lists them) and the one apps use today.
public struct VersionedModel: Sendable, Equatable {
    /// The model's name, for messages.
    public var name: String
    /// As the model lists them (an Xcode bundle's by file name): no order of age, which
    /// versions do not have; a route between them comes from their content (`VersionFacts`).
    public var versions: [ObjectModel]
    /// The name of the version apps use today: the version a migration targets by default.
    public var currentVersionName: String
    /// Where the model was read from.
    public var path: String
    /// What the loader read as Xcode's model compiler does though it looks wrong (a Boolean's
    /// `YES` as an Integer 32's default), each naming version, file, entity and attribute: for
    /// people (`warnings(for:)` says each once).
    public var warnings: [ModelWarning]

    /// A model with `versions`, as the model lists them; `currentVersionName` should name one of them.
    public init(name: String, versions: [ObjectModel], currentVersionName: String, path: String, warnings: [ModelWarning] = []) {
        self.name = name
        self.versions = versions
        self.currentVersionName = currentVersionName
        self.path = path
        self.warnings = warnings
    }

    /// The version called `name`, or nil when the model has none.
    public func version(named name: String) -> ObjectModel? {
        versions.first { $0.versionName == name }
    }

    /// The same model with another version as the current one.
    public func withCurrent(_ version: String) -> VersionedModel {
        VersionedModel(name: name, versions: versions, currentVersionName: version, path: path, warnings: warnings)
    }

    /// The current version first, then the others as the model lists them: where several
    /// versions fit a store (hash-identical versions are one schema), the current one is taken.
    /// No order of age: versions have none (`VersionFacts`).
    public var currentFirst: [ObjectModel] {
        versions.filter { $0.versionName == currentVersionName } + versions.filter { $0.versionName != currentVersionName }
    }

    /// The current version; the loader guarantees it exists.
    public var current: ObjectModel {
        version(named: currentVersionName) ?? versions[versions.count - 1]
    }
}
