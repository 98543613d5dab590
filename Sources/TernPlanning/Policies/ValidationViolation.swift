/// A destination object that breaks a rule of the destination model.
public struct ValidationViolation: Sendable, Equatable, CustomStringConvertible {
    /// The object's entity and key (`Z_PK`) in the migrated store.
    public var entity: String
    /// The object's `Z_PK`.
    public var key: Int64
    /// The rule it breaks, in words ("title: required", "price: below the minimum 0").
    public var rule: String
    /// A violation of `rule` by object `key` of `entity`.
    public init(entity: String, key: Int64, rule: String) {
        self.entity = entity
        self.key = key
        self.rule = rule
    }

    public var description: String { "\(entity) \(key): \(rule)" }
}
