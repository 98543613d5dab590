import TernModel
import TernStore
import TernMapping
/// What one step will do, worked out in one place from the step and the policy registry: the
/// schema changes that apply it in place, if it qualifies; otherwise, per pass, the entity
/// mappings in the order they run, each marked SQL or Swift (with its policy), keeping keys or
/// not, with its association table and its selection. `tern plan`, `tern migrate` (its record,
/// its outline) and the engine all read this value.
struct StepPlan {
    let step: MigrationStep
    /// The SQL that applies the step as schema changes (`LightweightInPlace`), when it qualifies.
    let inPlace: [String]?
    /// Every entity mapping that copies objects, pass by pass, in the order it runs.
    let mappings: [PlannedMapping]

    init(_ step: MigrationStep, registry: PolicyRegistry) {
        self.step = step
        inPlace = step.schemaChanges
        // `MappingOrder.copying` gives only mappings with both entities.
        var all: [(pass: Int, entity: ValidatedMapping.Entity, source: String, destination: String)] = []
        for (pass, mapping) in step.passes.enumerated() {
            all += MappingOrder.copying(mapping, destination: step.destination, runsInSwift: registry.runsInSwift).compactMap { entity in
                guard let source = entity.mapping.sourceEntity, let destination = entity.mapping.destinationEntity else { return nil }
                return (pass, entity, source, destination)
            }
        }
        let source = step.sourceLayout
        let destination = StoreLayout(model: step.destination)
        // Keys can follow the source's when every mapping into a destination table reads one
        // source table and has no filter: each source key then names at most one destination object.
        let table = { (entity: String) in destination.entities[entity]?.table ?? entity }
        let groups = Dictionary(grouping: all, by: { table($0.destination) })
        let keysFollowSource = { (element: (pass: Int, entity: ValidatedMapping.Entity, source: String, destination: String)) -> Bool in
            let group = groups[table(element.destination)] ?? []
            let sourceTables = Set(group.map { source.entities[$0.source]?.table ?? $0.source })
            // Two mappings of one source entity into one table would give two objects one key.
            let sourceEntities = group.map(\.source)
            return sourceTables.count == 1 && Set(sourceEntities).count == sourceEntities.count && group.allSatisfy { $0.entity.filter == nil }
        }
        mappings = all.enumerated().map { number, element in
            let runsInSwift = registry.runsInSwift(element.entity.mapping)
            let follows = keysFollowSource(element)
            return PlannedMapping(
                pass: element.pass, number: number + 1, mapping: element.entity, sourceEntity: element.source, destinationEntity: element.destination,
                keepsKeys: follows && !runsInSwift, policyMayKeepKeys: follows && runsInSwift, runsInSwift: runsInSwift,
                valuesFollowExpressions: registry.valuesFollowExpressions(element.entity.mapping))
        }
    }

    /// The entity mappings of one pass, in the order they run: those that copy objects, then
    /// those with nothing to copy (a source or a destination entity missing).
    func entityMappings(inPass pass: Int) -> [(entity: ValidatedMapping.Entity, planned: PlannedMapping?)] {
        mappings.filter { $0.pass == pass }.map { ($0.mapping, $0) }
            + step.passes[pass].entities.filter { $0.mapping.sourceEntity == nil || $0.mapping.destinationEntity == nil }.map { ($0, nil) }
    }
}

/// One entity mapping of a step as it will run.
struct PlannedMapping {
    let pass: Int
    /// Position across all passes: names the association table `TERN_ASSOC_<number>`.
    let number: Int
    let mapping: ValidatedMapping.Entity
    /// The entity its objects are read from (a mapping that copies objects names both).
    let sourceEntity: String
    /// The entity its objects are made of.
    let destinationEntity: String
    /// The entity mapping as written.
    var entityMapping: EntityMapping { mapping.mapping }
    /// Destination keys equal source keys: no association table is needed.
    let keepsKeys: Bool
    /// A policy's first object of the destination table for each source object gets the source
    /// key (others get keys above every source key). When every source object got exactly one,
    /// lookups treat the mapping as keeping keys (`AssociationTables.keptKeys`).
    let policyMayKeepKeys: Bool
    /// Batches go through a policy (its own, or the default one for a manager hook) on the
    /// worker threads, rather than running entirely inside SQLite.
    let runsInSwift: Bool
    /// No policy or hook may change the values: verification checks each against its expression.
    let valuesFollowExpressions: Bool
    var table: String { "TERN_ASSOC_\(number)" }
}
