/// The entity migration policies and manager hook a migration may use, by the names mapping
/// models give them.
///
/// A name matches exactly, or by its last dot-separated part, so Xcode's module-qualified class
/// names (`CoreDataMigration_Example.Post2ToPost3MigrationPolicy`) find a policy registered as
/// `Post2ToPost3MigrationPolicy`.
public struct PolicyRegistry: Sendable {
    private var policies: [String: any EntityMigrationPolicy] = [:]
    /// The manager-level hook, if any.
    public var delegate: (any MigrationManagerDelegate)?

    public init() {}

    public mutating func register(_ policy: any EntityMigrationPolicy, as name: String) {
        policies[name] = policy
    }

    public func policy(named name: String) -> (any EntityMigrationPolicy)? {
        policies[name] ?? name.split(separator: ".").last.flatMap { policies[String($0)] }
    }

    public var names: [String] { policies.keys.sorted() }

    /// Whether an entity mapping goes through Swift (its policy, or the default policy because
    /// the manager hook observes it) rather than running entirely inside SQLite.
    public func runsInSwift(_ mapping: EntityMapping) -> Bool {
        mapping.policy != nil || delegate?.observes(mapping) == true
    }
}
