import TernModel
import TernStore

/// What a run will do: decided once by `StoreMigration.plan(to:mappingFiles:mappings:appleHashes:)`, read by the run,
/// `estimate(_:)` and `tern plan` alike.
public struct MigrationPlan: Sendable, Codable {
    /// The version that wrote the store.
    public let storeVersion: String
    /// The version the store is migrated to.
    public let targetVersion: String
    /// The steps in order; empty when the store is at the target already.
    public package(set) var steps: [MigrationStep]
    /// What people should know about the store before it is migrated (how its version was
    /// recognised), said with the plan.
    public package(set) var notes: [String] = []
    /// Why the steps go through the versions they do (`VersionRouter`), for people; nil
    /// when the store is at the target already.
    public package(set) var route: String?
    /// True when no version of the model wrote the store and its own model, read from its
    /// `Z_MODELCACHE`, is the source version (named `StoreModelCache.versionName`).
    public package(set) var fromStoreModel = false
    /// Core Data's own version hashes of the target version (entity → hex), when known (a
    /// `.momd`'s `VersionInfo.plist`): the migrated store carries them, so Core Data opens it.
    public package(set) var targetAppleHashes: [String: String]?
    /// The model and the store schema the plan was made from (nil in a plan built by hand):
    /// a run checks the store still has that schema before it writes anything. It holds the
    /// plan's seal, which is why a plan's fields are set only while it is made.
    public package(set) var origin: Origin?
    /// Every version the steps go through, from the store's to the target (the versions a
    /// step reads or writes): what a saved plan runs with, no model needed.
    public package(set) var versions: [ObjectModel] = []

    /// Each step as it runs, read from the decisions the plan holds: the one place a
    /// `StepPlan` is made. Nil when a step has no decisions (a plan made before Tern saved them).
    package var stepPlans: [StepPlan]? {
        var plans: [StepPlan] = []
        for step in steps {
            guard let decisions = step.decisions else { return nil }
            plans.append(StepPlan(step, decisions: decisions))
        }
        return plans
    }

    /// The plan's steps as it decided them, refused when it holds no decisions (a plan an earlier
    /// Tern made), when a policy it names is not registered, or when `registry` would run its
    /// mappings otherwise: a run binds the plan's policy names to instances, and decides nothing.
    package func stepPlans(checkedAgainst registry: PolicyRegistry, path: String?) throws -> [StepPlan] {
        guard let stepPlans else {
            throw TernError(.badInput, "the plan does not say how its entity mappings run (an earlier Tern made it): plan the migration again", path: path)
        }
        try registry.checkPolicies(of: steps.flatMap(\.entityMappings))
        if let step = steps.first(where: { $0.decisionsDiffer(from: registry) }) {
            throw TernError(
                .badInput,
                "step \(step.identity) was planned with other policies than those registered now (an entity mapping would run in Swift "
                    + "rather than SQL, or the other way round): plan the migration again with the policies it runs with", path: path)
        }
        return stepPlans
    }

    /// A plan of `steps` from `storeVersion` to `targetVersion`; the planner fills in the rest.
    package init(storeVersion: String, targetVersion: String, steps: [MigrationStep]) {
        self.storeVersion = storeVersion
        self.targetVersion = targetVersion
        self.steps = steps
    }
}
