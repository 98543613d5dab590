import TernSQLite
import TernModel
import TernStore
import TernMapping

/// A chain with a step that carries no object from its source into its destination would leave
/// an empty store: what a mistyped `--model` looks like (the store's own model taken as the
/// source, every entity "removed"). Refused before anything is written, whatever the flags, so a
/// wrong path is never a wipe.
package enum NothingCarried {
    /// Throws when some step carries nothing and the store holds objects, naming what the store
    /// holds and what the target version has.
    package static func check(_ steps: [MigrationStep], store: String, storeVersion: ObjectModel) throws {
        if let first = steps.first { try checkSelection(of: first, store: store) }
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

    /// Throws when `step`'s entity mappings select none of the objects of the store at `store`
    /// (its input): every entity filtered away. The first step's input is the store, checked
    /// while planning; a later step's is the run's own, checked when the step starts. A mapping
    /// that creates objects from nothing (no source entity) is left to its author.
    package static func checkSelection(of step: MigrationStep, store: String) throws {
        let entries = step.passes.flatMap(\.entities)
        guard !step.isInferred, entries.contains(where: { $0.filter != nil }), entries.allSatisfy({ $0.mapping.sourceEntity != nil }) else { return }
        let layout = step.sourceLayout
        let reader = try ReadOnlyStore(path: store)
        let held: [(entity: String, count: Int64)] = try withExtendedLifetime(reader) {
            let connection = try reader.connect()
            try SQLCompiler.prepare(connection)
            var compiler = SQLCompiler(layout: layout)
            for entry in entries {
                guard let name = entry.mapping.sourceEntity, let entity = layout.entities[name] else { continue }
                var query = SQLFragment("SELECT EXISTS (SELECT 1 FROM \(quoteIdentifier(entity.table)) s WHERE s.\"Z_ENT\" = \(entity.number)")
                if let filter = entry.filter { query = query + SQLFragment(" AND (") + compiler.sql(filter, alias: "s") + SQLFragment(")") }
                let statement = try connection.prepare(query.sql + ")")
                try statement.bind(query.arguments)
                var rows = statement.rows()
                if try rows.next()?.int64(at: 0) == 1 { return [] }
            }
            return try objectCounts(in: connection, layout: layout, version: step.source).filter { $0.count > 0 }
        }
        guard !held.isEmpty else { return }
        throw TernError(
            .badInput,
            "refusing to migrate: the entity mappings of step \(step.identity) select none of the store's objects (their filters leave every one out), "
                + "so the store would be left empty. The store holds \(held.map { "\($0.entity) (\($0.count))" }.joined(separator: ", ")); "
                + "check the mapping model's filters", path: store)
    }

    /// Objects per concrete entity of `version` in the store.
    private static func objectCounts(in store: String, version: ObjectModel) throws -> [(entity: String, count: Int64)] {
        let reader = try ReadOnlyStore(path: store)
        return try withExtendedLifetime(reader) {
            try objectCounts(in: try reader.connect(), layout: StoreLayout(model: version), version: version)
        }
    }

    private static func objectCounts(in connection: Connection, layout: StoreLayout, version: ObjectModel) throws -> [(entity: String, count: Int64)] {
        try version.entities.compactMap { entity in
            guard let own = layout.entities[entity.name] else { return nil }
            let count = try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(own.table)) WHERE Z_ENT = \(own.number)")?.int64 ?? 0
            return (entity.name, count)
        }
    }
}
