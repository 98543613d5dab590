import TernSQLite
import TernModel
import TernStore
import TernMapping

/// A chain with a step that carries no object from its source into its destination would leave
/// an empty store: what a mistyped `--model` looks like (the store's own model taken as the
/// source, every entity "removed"). Refused before anything is written, whatever the flags, so a
/// wrong path is never a wipe.
enum NothingCarried {
    /// Throws when some step carries nothing and the store holds objects, naming what the store
    /// holds and what the target version has.
    static func check(_ steps: [MigrationStep], store: String, storeVersion: ObjectModel) throws {
        guard
            let empty = steps.first(where: { step in
                !step.passes.contains { pass in pass.entities.contains { $0.mapping.sourceEntity != nil && $0.mapping.destinationEntity != nil } }
            })
        else { return }
        let held = try objectCounts(in: store, version: storeVersion).filter { $0.count > 0 }
        guard !held.isEmpty, let target = steps.last?.destination else { return }
        let holds = held.map { "\($0.entity) (\($0.count))" }.joined(separator: ", ")
        let has = target.entities.map(\.name).joined(separator: ", ")
        throw TernError(
            .badInput,
            "refusing to migrate: step \(empty.source.versionName) → \(empty.destination.versionName) keeps none of the store's objects, "
                + "so the store would be left empty. The store holds \(holds); version \(target.versionName) has \(has.isEmpty ? "no entities" : has). "
                + "Is --model the store's own model?", path: store)
    }

    /// Objects per concrete entity of `version` in the store.
    private static func objectCounts(in store: String, version: ObjectModel) throws -> [(entity: String, count: Int64)] {
        let layout = StoreLayout(model: version)
        let reader = try ReadOnlyStore(path: store)
        return try withExtendedLifetime(reader) {
            let connection = try reader.connect()
            return try version.entities.compactMap { entity in
                guard let own = layout.entities[entity.name] else { return nil }
                let count = try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(own.table)) WHERE Z_ENT = \(own.number)")?.int64 ?? 0
                return (entity.name, count)
            }
        }
    }
}
