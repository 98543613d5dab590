import TernMapping
import TernModel
import TernStore

/// What the planner decided for one entity mapping that copies objects: saved with its step
/// (`MigrationStep.decisions`), so a run, its record, a resume and `tern plan` read one decision
/// and none makes it again.
public struct MappingDecision: Sendable, Codable, Equatable {
    /// The pass it runs in, from 0.
    public var pass: Int
    /// Its place among the pass's entity mappings (`ValidatedMapping.entities`).
    public var entity: Int
    /// Position across all passes, from 1: names its association table (`TERN_ASSOC_<number>`).
    public var number: Int
    /// Destination keys equal source keys: no association table is needed.
    public var keepsKeys: Bool
    /// A policy's first object of the destination table for each source object may take the
    /// source's key (`PlannedMapping.policyMayKeepKeys`).
    public var policyMayKeepKeys: Bool
    /// Batches go through a policy (its own, or the default one for a manager hook) on the
    /// worker threads, rather than entirely inside SQLite.
    public var runsInSwift: Bool
    /// No policy or hook may change the values: verification checks each against its expression.
    public var valuesFollowExpressions: Bool
}

extension MappingDecision {
    /// Decides, once, how each entity mapping of `step` that copies objects runs: in the order
    /// `MappingOrder` gives, SQL or Swift as `registry` says, and keeping keys where every
    /// mapping into its destination table reads one source table and has no filter (each
    /// source key then names at most one destination object).
    package static func decide(_ step: MigrationStep, registry: PolicyRegistry) -> [MappingDecision] {
        decide(step, runsInSwift: { registry.runsInSwift($1) }, valuesFollowExpressions: { registry.valuesFollowExpressions($1) })
    }

    /// The decisions for `step` given, per pass and entity mapping, whether it runs in Swift and
    /// whether its values follow their expressions: everything else follows from these and the
    /// step (how a decoded plan's decisions are checked: made again from their own answers).
    package static func decide(
        _ step: MigrationStep, runsInSwift: (Int, EntityMapping) -> Bool, valuesFollowExpressions: (Int, EntityMapping) -> Bool
    ) -> [MappingDecision] {
        var all: [(pass: Int, index: Int, entity: ValidatedMapping.Entity, source: String, destination: String)] = []
        for (pass, mapping) in step.passes.enumerated() {
            // `MappingOrder.copying` gives only mappings with both entities.
            for entity in MappingOrder.copying(mapping, destination: step.destination, runsInSwift: { runsInSwift(pass, $0) }) {
                guard let source = entity.mapping.sourceEntity, let destination = entity.mapping.destinationEntity,
                    let index = mapping.entities.firstIndex(where: { $0.mapping.name == entity.mapping.name })
                else { continue }
                all.append((pass, index, entity, source, destination))
            }
        }
        let source = step.sourceLayout
        let destination = StoreLayout(model: step.destination)
        let table = { (entity: String) in destination.entities[entity]?.table ?? entity }
        let groups = Dictionary(grouping: all, by: { table($0.destination) })
        return all.enumerated().map { number, element in
            let group = groups[table(element.destination)] ?? []
            let sourceTables = Set(group.map { source.entities[$0.source]?.table ?? $0.source })
            // Two mappings of one source entity into one table would give two objects one key.
            let sourceEntities = group.map(\.source)
            let follows = sourceTables.count == 1 && Set(sourceEntities).count == sourceEntities.count && group.allSatisfy { $0.entity.filter == nil }
            let inSwift = runsInSwift(element.pass, element.entity.mapping)
            return MappingDecision(
                pass: element.pass, entity: element.index, number: number + 1, keepsKeys: follows && !inSwift,
                policyMayKeepKeys: follows && inSwift, runsInSwift: inSwift,
                valuesFollowExpressions: valuesFollowExpressions(element.pass, element.entity.mapping))
        }
    }
}

/// One step as it will run, read from the decisions its plan holds: the schema changes that
/// apply it in place, if it qualifies; otherwise, per pass, the entity mappings in the order
/// they run, each marked SQL or Swift (with its policy), keeping keys or not, with its
/// association table and its selection. Made only by `MigrationPlan.stepPlans`.
package struct StepPlan {
    package let step: MigrationStep
    /// The SQL that applies the step as schema changes (`LightweightInPlace`), when it qualifies.
    package let inPlace: [String]?
    /// Every entity mapping that copies objects, pass by pass, in the order it runs.
    package let mappings: [PlannedMapping]

    /// The step as its decisions say it runs.
    init(_ step: MigrationStep, decisions: [MappingDecision]) {
        self.step = step
        inPlace = step.schemaChanges
        mappings = decisions.map { decision in
            let entity = step.passes[decision.pass].entities[decision.entity]
            return PlannedMapping(
                pass: decision.pass, number: decision.number, mapping: entity, sourceEntity: entity.mapping.sourceEntity!,
                destinationEntity: entity.mapping.destinationEntity!, keepsKeys: decision.keepsKeys, policyMayKeepKeys: decision.policyMayKeepKeys,
                runsInSwift: decision.runsInSwift, valuesFollowExpressions: decision.valuesFollowExpressions)
        }
    }

    /// The entity mappings of one pass, in the order they run: those that copy objects, then
    /// those with nothing to copy (a source or a destination entity missing).
    package func entityMappings(inPass pass: Int) -> [(entity: ValidatedMapping.Entity, planned: PlannedMapping?)] {
        mappings.filter { $0.pass == pass }.map { ($0.mapping, $0) }
            + step.passes[pass].entities.filter { $0.mapping.sourceEntity == nil || $0.mapping.destinationEntity == nil }.map { ($0, nil) }
    }
}

/// One entity mapping of a step as it will run.
package struct PlannedMapping {
    package let pass: Int
    /// Position across all passes: names the association table `TERN_ASSOC_<number>`.
    package let number: Int
    package let mapping: ValidatedMapping.Entity
    /// The entity its objects are read from (a mapping that copies objects names both).
    package let sourceEntity: String
    /// The entity its objects are made of.
    package let destinationEntity: String
    /// The entity mapping as written.
    package var entityMapping: EntityMapping { mapping.mapping }
    /// Destination keys equal source keys: no association table is needed.
    package let keepsKeys: Bool
    /// A policy's first object of the destination table for each source object gets the source
    /// key (others get keys above every source key). When every source object got exactly one,
    /// lookups treat the mapping as keeping keys (`AssociationTables.keptKeys`).
    package let policyMayKeepKeys: Bool
    /// Batches go through a policy (its own, or the default one for a manager hook) on the
    /// worker threads, rather than running entirely inside SQLite.
    package let runsInSwift: Bool
    /// No policy or hook may change the values: verification checks each against its expression.
    package let valuesFollowExpressions: Bool
    package var table: String { "TERN_ASSOC_\(number)" }
}
