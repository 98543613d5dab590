import Foundation
import TernModel
import TernStore
import TernMapping
import TernSQLite
import TernPlanning
import TernDurability
import TernExecution

/// What a migration will do, worked out without writing anything: for `tern plan` and
/// `tern migrate --dry-run`. Row counts of the first step are counted in the store (filters
/// applied); later steps are estimated from what the steps before them create, one destination
/// object per selected source object.
public struct PlanEstimate: Sendable, Codable {
    /// Where a mapping's work runs: inside SQLite, or through Swift batches.
    public enum Engine: String, Sendable, Codable, CustomStringConvertible {
        /// SQLite runs the whole mapping as set-based statements.
        case sql = "SQL"
        /// Batches of source objects go through a policy (or the manager hook) on the workers.
        case swift = "Swift"

        public var description: String { rawValue }
    }

    /// What a property mapping sets.
    public enum PropertyKind: String, Sendable, Codable, CustomStringConvertible {
        case attribute, relationship

        public var description: String { rawValue }
    }

    /// One version-to-version step of the plan.
    public struct Step: Sendable, Codable {
        /// The version names it migrates from and to.
        public var source: String
        /// The version name it migrates to.
        public var destination: String
        /// Where the mapping comes from: file names, or "inferred".
        public var origin: [String]
        /// Why a step that qualifies to run in place copies the store (`MigrationStep.copiedInstead`).
        public var copiedInstead: String?
        /// The SQL that applies the step in place, when it runs as schema changes.
        public var schemaChanges: [String]?
        /// Its passes in run order; empty when it runs as schema changes.
        public var passes: [Pass]
        /// What an inferred step drops: counted in the store for the first step (elements that
        /// hold nothing left out), listed without counts for later ones.
        public var dropped: [DroppedData]
    }

    /// One pass of a step: its entity mappings in run order.
    public struct Pass: Sendable, Codable {
        /// 1-based within its step.
        public var number: Int
        /// Its entity mappings, in run order.
        public var entityMappings: [EntityMapping]
        /// Source rows the pass reads, and the batches they make, over all its entity mappings.
        public var rows: Int
        /// Batches those rows make, over all its entity mappings.
        public var batches: Int
    }

    /// One entity mapping of a pass, as it will run.
    public struct EntityMapping: Sendable, Codable {
        /// The entity mapping's name.
        public var name: String
        /// Its type: add, remove, copy, transform or custom.
        public var type: EntityMappingType
        /// The source entity (nil for an add mapping).
        public var source: String?
        /// The destination entity (nil for a remove mapping).
        public var destination: String?
        /// The filter predicate's text, when the mapping has one.
        public var filter: String?
        /// The policy's name, when the mapping names one.
        public var policy: String?
        /// Where its objects are made: in SQL, or in Swift batches through a policy.
        public var runsIn: Engine
        /// Source rows selected (filter applied), counted or estimated (`rowsCounted`).
        public var rows: Int
        /// False when the count is estimated from an earlier step rather than counted.
        public var rowsCounted: Bool
        /// Batches of at most the plan's batch size.
        public var batches: Int
        /// Its property mappings: attributes, then relationships.
        public var properties: [Property]
    }

    /// One property mapping: the destination property and the value expression that sets it.
    public struct Property: Sendable, Codable {
        /// The destination property's name.
        public var name: String
        /// Whether it is an attribute or a relationship.
        public var kind: PropertyKind
        /// The value expression's text; nil for the property's default.
        public var expression: String?
        /// Relationships are always recreated in SQL, from the association tables.
        public var runsIn: Engine
    }

    /// The version the store is at, and the one it is migrated to.
    public var storeVersion: String
    /// The version it is migrated to.
    public var targetVersion: String
    /// The batch size the estimate was made with.
    public var batchSize: Int
    /// The workers the estimate was made with.
    public var workers: Int
    /// The steps, in order.
    public var steps: [Step]
    /// True when the store's own model (`Z_MODELCACHE`) is the source version: no version of the
    /// model given wrote it.
    public var fromStoreModel = false
    /// The plan itself, as `tern migrate --plan` runs it (`MigrationPlan.read(from:)`).
    public var plan: MigrationPlan

    /// How `tern plan --json` writes an estimate, and how a saved one is checked for edits.
    public static var encoder: JSONEncoder { MigrationPlan.encoder }
}

extension StoreMigration {
    /// Estimates `plan` against the store: rows and batches per pass and entity mapping, and where
    /// each property mapping runs.
    public func estimate(_ plan: Plan) throws -> PlanEstimate {
        let reader = try ReadOnlyStore(path: store)
        let connection = try reader.connect()
        // A filter may read values stored outside the store.
        try SQLCompiler.prepare(connection, externalData: ExternalDataFolders(source: store, destination: nil))
        var steps: [PlanEstimate.Step] = []
        // Objects per entity of the step's source: counted for the store, estimated afterwards.
        var objects: [String: Int] = [:]
        // The store's own tables outside the model stay while steps apply in place, and are left
        // behind by the first step that copies the store.
        var outsideModelCarried = true
        let stepPlans = try plan.stepPlans(checkedAgainst: registry, path: nil)
        for (index, step) in plan.steps.enumerated() {
            let sourceLayout = step.sourceLayout
            var created: [String: Int] = [:]
            var passes: [PlanEstimate.Pass] = []
            let stepPlan = stepPlans[index]
            for number in step.passes.indices {
                var mappings: [PlanEstimate.EntityMapping] = []
                for (entity, planned) in stepPlan.entityMappings(inPass: number) {
                    let mapping = entity.mapping
                    var rows = 0
                    if let sourceName = mapping.sourceEntity, let destinationName = mapping.destinationEntity, let layout = sourceLayout.entities[sourceName] {
                        if index == 0 {
                            var compiler = SQLCompiler(layout: sourceLayout, schema: "main")
                            let selection = SourceBatches.selection(of: layout, filter: entity.filter, compiler: &compiler)
                            let count = try connection.prepare((SQLFragment("SELECT count(*) FROM \(quoteIdentifier(layout.table)) s WHERE ") + selection).sql)
                            try count.bind(selection.arguments)
                            _ = try count.step()
                            rows = Int(count.row.int64(at: 0))
                        } else {
                            rows = objects[sourceName, default: 0]
                        }
                        created[destinationName, default: 0] += rows
                    }
                    let engine: PlanEstimate.Engine = planned?.runsInSwift == true ? .swift : .sql
                    let properties =
                        mapping.attributeMappings.map { PlanEstimate.Property(name: $0.name, kind: .attribute, expression: $0.valueExpression, runsIn: engine) }
                        + mapping.relationshipMappings.map {
                            PlanEstimate.Property(name: $0.name, kind: .relationship, expression: $0.valueExpression, runsIn: .sql)
                        }
                    mappings.append(
                        PlanEstimate.EntityMapping(
                            name: mapping.name, type: mapping.type, source: mapping.sourceEntity, destination: mapping.destinationEntity,
                            filter: mapping.filterPredicate, policy: mapping.policy, runsIn: engine, rows: rows, rowsCounted: index == 0,
                            batches: Self.batches(rows, options.batchSize), properties: properties))
                }
                let rows = mappings.reduce(0) { $0 + $1.rows }
                passes.append(
                    PlanEstimate.Pass(
                        number: number + 1, entityMappings: mappings, rows: rows,
                        batches: mappings.reduce(0) { $0 + $1.batches }))
            }
            let dropped = DataLoss.dropped(by: step)
            steps.append(
                PlanEstimate.Step(
                    source: step.source.versionName, destination: step.destination.versionName,
                    origin: step.isInferred ? ["inferred"] : step.origins, copiedInstead: step.copiedInstead, schemaChanges: stepPlan.inPlace, passes: passes,
                    dropped: (index == 0 ? try DataLoss.count(dropped, of: step, in: store) : dropped)
                        + (outsideModelCarried && stepPlan.inPlace == nil
                            ? try DataLoss.tablesOutsideModel(of: plan.steps[0], in: store) + AppSchemaObjects.notCarried(by: step, from: store) : [])))
            if stepPlan.inPlace == nil { outsideModelCarried = false }
            objects = created
        }
        var estimate = PlanEstimate(
            storeVersion: plan.storeVersion, targetVersion: plan.targetVersion, batchSize: options.batchSize,
            workers: options.workers, steps: steps, plan: plan)
        estimate.fromStoreModel = plan.fromStoreModel
        return estimate
    }

    private static func batches(_ rows: Int, _ size: Int) -> Int {
        (rows + size - 1) / size
    }
}
