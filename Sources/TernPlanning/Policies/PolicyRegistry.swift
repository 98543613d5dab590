import Foundation
import TernModel
import TernStore
import TernMapping

/// The entity migration policies and manager hook a migration may use, by the names mapping
/// models give them.
///
/// A name matches exactly, or by its last dot-separated part, so Xcode's module-qualified class
/// names (`CoreDataMigration_Example.Post2ToPost3MigrationPolicy`) find a policy registered as
/// `Post2ToPost3MigrationPolicy`.
public struct PolicyRegistry: Sendable {
    private var policies: [String: any EntityMigrationPolicy] = [:]
    /// Names registered for one model only, with the folder of that model: used only for the
    /// model in that very folder, and kept apart in messages (a mapping of another model that
    /// names a class is told what was registered for every model).
    private var scoped: [String: String] = [:]
    /// The model folder the manager hook serves, when it was set for one model only.
    private var delegateScope: String?
    /// The manager-level hook, if any.
    public var delegate: (any MigrationManagerDelegate)? {
        didSet { delegateScope = nil }
    }

    /// An empty registry: no policies and no manager hook.
    public init() {}

    /// Registers `policy` under `name`, replacing any policy registered under that name before.
    public mutating func register(_ policy: any EntityMigrationPolicy, as name: String) {
        policies[name] = policy
        scoped[name] = nil
    }

    /// Registers `policy` under `name` for the model in `folder` only (its absolute path): a
    /// migration of any other model — a copy of it elsewhere included — does not see it, so a
    /// class of the same name in another app is never stood in for by it. A policy registered
    /// later under the same name replaces it.
    public mutating func register(_ policy: any EntityMigrationPolicy, as name: String, forModelAt folder: String) {
        policies[name] = policy
        scoped[name] = Self.canonical(folder)
    }

    /// Sets the manager hook for the model in `folder` only.
    public mutating func setDelegate(_ delegate: any MigrationManagerDelegate, forModelAt folder: String) {
        self.delegate = delegate
        delegateScope = Self.canonical(folder)
    }

    /// This registry for a migration of the model at `modelPath`: without what was registered
    /// for other models only (policies and manager hook).
    public func forModel(at modelPath: String) -> PolicyRegistry {
        let model = Self.canonical(modelPath)
        var registry = self
        for (name, folder) in scoped where folder != model {
            registry.policies[name] = nil
            registry.scoped[name] = nil
        }
        if let folder = delegateScope, folder != model {
            registry.delegate = nil
        }
        return registry
    }

    /// A folder's path with links resolved and no trailing slash, to compare two.
    private static func canonical(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// The policy registered as `name` or as its last dot-separated part; nil when neither is registered.
    public func policy(named name: String) -> (any EntityMigrationPolicy)? {
        policies[name] ?? name.split(separator: ".").last.flatMap { policies[String($0)] }
    }

    /// The registered names, sorted, for messages listing what is available: the ones registered
    /// with `register(_:as:)` for every model, not those registered for one model only.
    public var names: [String] { policies.keys.filter { scoped[$0] == nil }.sorted() }

    /// The policy `mapping` names, or an error naming the mapping, the policy and what is
    /// registered: checked when a migration is planned, not halfway through it.
    package func policy(for mapping: EntityMapping) throws -> (any EntityMigrationPolicy)? {
        guard let name = mapping.policy else { return nil }
        guard let policy = policy(named: name) else {
            throw TernError(
                .badInput,
                "entity mapping \(mapping.name) names the migration policy \(name), which is not registered "
                    + "(registered: \(names.isEmpty ? "none" : names.joined(separator: ", "))). It is the app's own NSEntityMigrationPolicy subclass: "
                    + "write it in Swift as an EntityMigrationPolicy and register it under this name in a program of your own: "
                    + "tern policy scaffold --model MODEL --out DIR writes that package, one policy type per class the mappings name "
                    + "(the article \"Using Tern as a library\", Entity migration policies)")
        }
        return policy
    }

    /// Checks that every policy the entity mappings name is registered.
    package func checkPolicies(of mappings: [EntityMapping]) throws {
        let missing = mappings.filter { mapping in mapping.policy.map { policy(named: $0) == nil } ?? false }
        guard let first = missing.first else { return }
        // The first names what to do; the others are listed, so one run shows every class to port.
        do {
            _ = try policy(for: first)
        } catch let error as TernError where missing.count > 1 {
            let others = missing.dropFirst().map { "\($0.policy!) (entity mapping \($0.name))" }
            var seen: Set<String> = []
            let unique = others.filter { seen.insert($0).inserted }
            throw TernError(error.kind, error.message + "; also not registered: " + unique.joined(separator: ", "), path: error.path)
        }
    }

    /// Whether an entity mapping goes through Swift (its policy, or the default policy because
    /// the manager hook observes it) rather than running entirely inside SQLite.
    public func runsInSwift(_ mapping: EntityMapping) -> Bool {
        mapping.policy != nil || delegate?.observes(mapping) == true
    }

    /// Whether every value of the mapping's objects is its value expression's (or its default):
    /// no policy and no manager hook may change them, so verification can check each one.
    public func valuesFollowExpressions(_ mapping: EntityMapping) -> Bool {
        mapping.policy == nil && delegate?.mayChangeValues(of: mapping) != true
    }
}

extension PolicyRegistry {
    /// The same registry with every entity mapping sent through Swift — its policy, or the
    /// default policy where it names none — and never run as SQL alone. The Swift path must give
    /// the same store as SQL; this is how tests (and `tern migrate --in-swift`) prove it.
    public func sendingEveryMappingThroughSwift() -> PolicyRegistry {
        var registry = self
        registry.delegate = ObservingEveryMapping(inner: delegate)
        return registry
    }
}

/// A manager hook that observes every mapping and passes associations on to the real hook only
/// for the mappings that hook observes.
private struct ObservingEveryMapping: MigrationManagerDelegate {
    let inner: (any MigrationManagerDelegate)?

    func observes(_ mapping: EntityMapping) -> Bool { true }

    func associate(source: SourceObject, destination: inout DestinationObject, mapping: EntityMapping) {
        guard let inner, inner.observes(mapping) else { return }
        inner.associate(source: source, destination: &destination, mapping: mapping)
    }

    func mayChangeValues(of mapping: EntityMapping) -> Bool {
        inner?.mayChangeValues(of: mapping) ?? false
    }
}
