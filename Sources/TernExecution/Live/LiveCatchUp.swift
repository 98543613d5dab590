import Foundation
import Logging
import TernSQLite
import TernModel
import TernStore
import TernPlanning
import TernDurability

/// Keeps a migrated store up with the live store the app goes on writing: round after round,
/// the change log past the last applied entry is read in one read transaction of the live
/// store, the rows it names are copied into the mirror (a private copy of the live store,
/// which the migrated store was made from), and the destination objects of those rows, with
/// their links, are written again from the mirror by the step's own SQL
/// (`StepMigrator.catchUp`). The position reached commits with the round, in both stores:
/// it is the resume point.
///
/// The mirror is the held snapshot: between rounds it is the live store as of one instant, so
/// a full verification of the migrated store against it proves every object, while the app
/// writes on; afterwards only the objects changed since need proving (`verifyChanged`).
package final class LiveCatchUp {
    /// What one round did.
    package struct Round: Sendable {
        /// Log entries applied.
        package var entries: Int64 = 0
        /// Destination objects written again.
        package var objects = 0
        package var duration: Duration = .zero
    }

    /// How far the migrated store is behind the live one.
    package struct Lag: Sendable {
        /// Log entries not yet applied.
        package var entries: Int64
        /// Age of the oldest of them.
        package var seconds: Double
    }

    private let connection: Connection
    private let migrator: StepMigrator
    private let captured: [LiveCapture.Table]
    /// Per logged table, the source tables whose objects its rows name, one per key column:
    /// an entity's table names its own objects; a join table's two columns each name one end.
    private let ends: [String: [String]]
    let migrated: String
    let mirror: String
    /// Whether the destination model limits how many objects a to-many holds.
    private let hasToManyCountRules: Bool
    /// The live store's `data_version` when the last round found nothing new: while it stands
    /// still, no one committed, and a round opens no transaction.
    private var idleAt: Int64?

    /// Opens the migrated store with the mirror attached as the step's source (`src`) and the
    /// live store read-only as `live`. The position starts at `start` (the log's last entry the
    /// mirror was copied with) unless both stores recorded one already.
    package init(
        plan: StepPlan, migrated: String, mirror: String, live: String, captured: [LiveCapture.Table], start: Int64, options: MigrationOptions,
        logger: Logger
    ) throws {
        self.migrated = migrated
        self.mirror = mirror
        self.captured = captured
        connection = try Connection(path: migrated, configuration: .init(mode: .readWrite))
        migrator = try StepMigrator(
            plan: plan, connection: connection, sourceAttachURI: mirror, externalData: ExternalDataFolders(source: mirror, destination: migrated),
            options: options, logger: logger)
        try connection.execute("ATTACH DATABASE \(quoteLiteral(ReadOnlyStore.uri(live, query: "mode=ro"))) AS live")
        // Rounds commit often, beside an app whose commits wait on the same disk: each sync of
        // Tern's, even one per checkpoint, took the app's p99 commit latency from 0.7 to 4.5 ms
        // (1,000 commits/s). So the two private stores never sync while rounds run. A kill
        // loses nothing (the kernel keeps what was written); a power cut or a crash of the
        // system may leave them stale or torn, which is why a run resumed after a reboot
        // (`LiveRecord.boot`) copies them again. `finish` makes the migrated store durable.
        try connection.execute("PRAGMA src.journal_mode = WAL")
        for schema in ["main", "src"] { try connection.execute("PRAGMA \(schema).synchronous = OFF") }
        let source = plan.step.sourceLayout
        var ends: [String: [String]] = [:]
        for table in captured where table.keys == ["Z_PK"] { ends[table.name] = [table.name] }
        for join in source.joinTables {
            guard let table = captured.first(where: { $0.name == join.table }),
                let target = plan.step.source.allRelationships(of: join.entity).first(where: { $0.name == join.relationship })?.destination,
                let ownerTable = source.entities[join.entity]?.table, let targetTable = source.entities[target]?.table
            else { continue }
            ends[join.table] = table.keys.map { $0 == join.ownerColumn ? ownerTable : targetTable }
        }
        self.ends = ends
        hasToManyCountRules = plan.step.destination.entities.contains { entity in
            entity.relationships.contains { $0.isToMany && !$0.isTransient && ($0.minCount > 0 || $0.maxCount > 0 || !$0.isOptional) }
        }
        try LiveChanges.create(on: connection)
        // The mirror first: a migrated store finished by a cut-over that was then refused (a
        // process opened the store) lost its position, but holds every round the mirror's says.
        for schema in ["src", "main"] {
            try connection.execute("CREATE TABLE IF NOT EXISTS \(schema).\(LiveChanges.state) (applied INTEGER NOT NULL)")
            try connection.execute(
                "INSERT INTO \(schema).\(LiveChanges.state) (applied) SELECT coalesce((SELECT applied FROM src.\(LiveChanges.state)), ?) WHERE NOT EXISTS (SELECT 1 FROM \(schema).\(LiveChanges.state))",
                start)
        }
    }

    /// The last log entry both stores have applied (the mirror's commit and the migrated
    /// store's are two files: after a kill between them, the one behind decides).
    private func position() throws -> Int64 {
        try connection.scalar("SELECT min((SELECT applied FROM main.\(LiveChanges.state)), (SELECT applied FROM src.\(LiveChanges.state)))")?.int64 ?? 0
    }

    /// Applies every log entry past the position, in one transaction; an idle round (nothing
    /// logged) writes nothing.
    package func round() throws -> Round {
        let started = ContinuousClock.now
        var round = Round()
        let version = try connection.scalar("PRAGMA live.data_version")?.int64
        if let idleAt, version == idleAt { return round }
        try connection.beginTransaction(.immediate)
        do {
            let applied = try position()
            // The live store's snapshot begins here: the rows read below are as of this entry.
            let last = try connection.scalar("SELECT coalesce(max(Z_SEQ), 0) FROM live.\(LiveCapture.log)")?.int64 ?? 0
            guard last > applied else {
                try connection.rollback()
                idleAt = version
                return round
            }
            idleAt = nil
            let entries = "FROM live.\(LiveCapture.log) WHERE Z_SEQ > \(applied) AND Z_SEQ <= \(last)"
            for table in captured {
                let name = quoteIdentifier(table.name)
                let keys = "(\(table.keys.map(quoteIdentifier).joined(separator: ", ")))"
                let logged =
                    "SELECT \(["Z_KEY1", "Z_KEY2"].prefix(table.keys.count).joined(separator: ", ")) \(entries) AND Z_TABLE = \(quoteLiteral(table.name))"
                try connection.execute("DELETE FROM src.\(name) WHERE \(keys) IN (\(logged))")
                try connection.execute("INSERT INTO src.\(name) SELECT * FROM live.\(name) WHERE \(keys) IN (\(logged))")
            }
            try connection.execute("DELETE FROM \(LiveChanges.round)")
            for (table, sources) in ends.sorted(by: { $0.key < $1.key }) {
                for (column, source) in zip(["Z_KEY1", "Z_KEY2"], sources) {
                    try connection.execute(
                        "INSERT OR IGNORE INTO \(LiveChanges.round) (tbl, key) SELECT \(quoteLiteral(source)), \(column) \(entries) AND Z_TABLE = \(quoteLiteral(table)) AND \(column) IS NOT NULL"
                    )
                }
            }
            try connection.execute("INSERT OR IGNORE INTO \(LiveChanges.unverified) SELECT tbl, key FROM \(LiveChanges.round)")
            round.objects = try migrator.catchUp()
            for schema in ["main", "src"] { try connection.execute("UPDATE \(schema).\(LiveChanges.state) SET applied = ?", last) }
            try connection.commit()
            round.entries = last - applied
        } catch {
            try? connection.rollback()
            throw error
        }
        round.duration = ContinuousClock.now - started
        return round
    }

    /// How far behind the live store the migrated store is.
    package func lag() throws -> Lag {
        let applied = try position()
        let statement = try connection.prepare(
            "SELECT count(*), coalesce((julianday('now') - min(Z_TIME)) * 86400.0, 0) FROM live.\(LiveCapture.log) WHERE Z_SEQ > ?")
        try statement.bind([applied])
        guard try statement.step() else { return Lag(entries: 0, seconds: 0) }
        return Lag(entries: statement.row.int64(at: 0), seconds: statement.row.double(at: 1))
    }

    /// Proves every object and link of the migrated store against the mirror as it is (a held
    /// snapshot: no round runs meanwhile), and the destination model's rules over every object;
    /// then only the objects changed from here on remain to prove.
    package func verifyAll() throws {
        try migrator.validateForCatchUp(onlyKeys: nil)
        try migrator.verifyForCatchUp(onlyKeys: nil)
        try connection.execute("DELETE FROM \(LiveChanges.unverified)")
    }

    /// Proves the objects changed since the last full verification (and links kept apart from
    /// their objects, whole), and checks the rules over those objects.
    package func verifyChanged() throws {
        // A to-many's count rule holds over an owner whose links changed in other objects'
        // rows: with such rules, every object is checked.
        try migrator.validateForCatchUp(onlyKeys: hasToManyCountRules ? nil : LiveChanges.unverifiedKeys)
        try migrator.verifyForCatchUp(onlyKeys: LiveChanges.unverifiedKeys)
    }

    /// Makes the migrated store what the app opens, from the mirror as it is now: the key
    /// counters the app advanced, its metadata, and none of Tern's tables; nothing left in its
    /// `-wal`. Closes the connection.
    package func finish() throws {
        try connection.execute("PRAGMA main.synchronous = FULL")
        try connection.transaction(.immediate) {
            try migrator.recordKeysHandedOutForCatchUp()
            // The work tables catching up made, and its own: a finished store holds none.
            try migrator.workspace.finish(keepingAssociations: false)
            for table in LiveChanges.tables { try connection.execute("DROP TABLE IF EXISTS \(table)") }
            try connection.execute("PRAGMA incremental_vacuum")
            try connection.setPragma("user_version", .integer(0))
        }
        try StoreFile.carryAppMetadata(from: mirror, into: connection, path: migrated)
        try connection.execute("DETACH DATABASE live")
        try connection.execute("DETACH DATABASE src")
        try connection.checkpointWAL()
        try connection.close()
        try DurableFile.syncFile(migrated, what: "the migrated store")
    }

    /// Sends what the rounds wrote to the disk now, gently (`GentleWriteback`), while the app
    /// still has the store open: the cut-over's own sync then has only the last seconds to
    /// write, and a failed write surfaces before it.
    package func writeOut() throws {
        for file in [migrated + "-wal", migrated, mirror + "-wal", mirror] where FileManager.default.fileExists(atPath: file) {
            try GentleWriteback.writeOut(file, what: "the migrated store")
        }
    }

    /// Closes the connection without finishing (a stop, a failure): what committed stays.
    package func close() {
        try? connection.close()
    }
}
