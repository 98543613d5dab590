import Foundation
import TernModel
import TernStore
import TernMapping
import TernSQLite
import TernPlanning

/// The on-disk work state of one step, kept in the step's own store so that it commits in the
/// same transaction as the rows it describes — never ahead of them, never behind: Tern's work
/// tables (`TERN_*`: progress, key counters, association tables, policy links and identities)
/// and the checkpoint they hold. Verification's source side read early is a cache, not a
/// checkpoint: it is kept beside the store (`SourceScanCache`).
///
/// `commit(_:done:_:)` is how checkpointed work is saved: it opens the transaction, runs the
/// work and records the unit's progress in it (`done` from its argument). The step's two
/// idempotent passes over the finished rows — numbering unnumbered lists, and `finish` — commit
/// on their own, and simply run again on a resume. A finished step sets the
/// file's `user_version` to `completedMarker`, in the transaction that drops the tables.
package final class StepWorkspace {
    /// How far one unit got.
    package struct Progress: Equatable {
        /// The last source key committed (instance creation goes in key order).
        package var lastKey: Int64 = 0
        /// Objects or links written so far.
        package var count = 0
        package var done = false
        /// For stage 1 of an entity mapping run by a policy: it kept every source key
        /// (`WorkUnit.keptKeys`), recorded with the unit.
        package var keptKeys = false

        package init(lastKey: Int64 = 0, count: Int = 0, done: Bool = false, keptKeys: Bool = false) {
            self.lastKey = lastKey
            self.count = count
            self.done = done
            self.keptKeys = keptKeys
        }
    }

    /// 'TERN' in ASCII.
    package static let completedMarker: Int64 = 0x5445_524E
    static let progressTable = "TERN_PROGRESS"
    /// Links policies make, applied in stage 2; a target_mapping means `target` is a source key
    /// to look up in that entity mapping's associations.
    package static let linksTable = "TERN_LINKS"
    /// Objects made with findOrCreate, by entity and identifying values.
    package static let uniqueTable = "TERN_UNIQUE"
    /// Which entity mappings wrote objects in Swift into which root tables: a policy may make
    /// objects of any entity, and verification must know every writer of a table.
    package static let writersTable = "TERN_WRITERS"
    /// Where an earlier Tern kept verification's source side read early; now `SourceScanCache`.
    /// Dropped from such a step's store as it finishes.
    private static let earlierSourceScansTable = "TERN_SOURCE_SCANS"
    private static let keysTable = "TERN_KEYS"

    let connection: Connection
    /// Whether the step has policies, and so the tables of their links and identities.
    package let hasPolicyTables: Bool
    private(set) var progress: [WorkUnit: Progress] = [:]
    /// Catching up a live store: every unit's work runs again each round, inside the round's
    /// one transaction, whose checkpoint is the change log's position (`LiveCatchUp`); nothing
    /// is recorded per unit.
    package var catchingUp = false
    /// Next destination key per destination root table, saved with every commit.
    package var nextKeys: [String: Int64] = [:]
    private var savedKeys: [String: Int64] = [:]
    private let associations: AssociationTables
    /// Verification's source side as read early, kept beside the step's store for a resume
    /// (read when a resume may trust it, removed once the step finishes).
    package let scanCache: SourceScanCache

    /// Opens the work state in `connection`'s store, creating the tables a new step needs, and
    /// reads what earlier runs committed.
    ///
    /// - Throws: `TernError(.badInput)` when the store's checkpoint holds a unit Tern never writes.
    package init(connection: Connection, associations: AssociationTables, withPolicies: Bool) throws {
        self.connection = connection
        self.associations = associations
        hasPolicyTables = withPolicies
        scanCache = SourceScanCache(stepStore: connection.path)
        var statements =
            [
                "CREATE TABLE IF NOT EXISTS \(Self.progressTable) (unit TEXT PRIMARY KEY, last_key INTEGER NOT NULL, count INTEGER NOT NULL, done INTEGER NOT NULL)",
                "CREATE TABLE IF NOT EXISTS \(Self.keysTable) (root TEXT PRIMARY KEY, next INTEGER NOT NULL)",
            ]
            + associations.entries.filter { !$0.keepsKeys }.map {
                // `entity`: the destination object's entity number where a policy made it (it may make
                // objects of several tables); NULL where SQL made it, of the mapping's destination entity.
                "CREATE TABLE IF NOT EXISTS \(quoteIdentifier($0.table)) (source INTEGER NOT NULL, destination INTEGER NOT NULL, entity INTEGER)"
            }
        if withPolicies {
            statements += [
                "CREATE TABLE IF NOT EXISTS \(Self.linksTable) (owner INTEGER NOT NULL, owner_entity TEXT NOT NULL, relationship TEXT NOT NULL, target INTEGER NOT NULL, target_entity TEXT NOT NULL, target_mapping TEXT)",
                "CREATE TABLE IF NOT EXISTS \(Self.uniqueTable) (entity TEXT NOT NULL, identity TEXT NOT NULL, destination INTEGER NOT NULL, PRIMARY KEY (entity, identity))",
                "CREATE TABLE IF NOT EXISTS \(Self.writersTable) (entry INTEGER NOT NULL, root TEXT NOT NULL, PRIMARY KEY (entry, root)) WITHOUT ROWID",
            ]
        }
        for statement in statements { try connection.execute(statement) }
        for (unit, unitProgress) in try Self.recorded(in: connection, path: connection.path) {
            progress[unit] = unitProgress
            if case .keptKeys(let number) = unit { associations.keptByPolicy.insert(number) }
        }
        // A step begun anew reads its source anew: a cache left beside it is another run's.
        if progress.isEmpty { scanCache.remove() }
        let keys = try connection.prepare("SELECT root, next FROM \(Self.keysTable)")
        var rows = keys.rows()
        while let row = try rows.next() { nextKeys[row.text(at: 0)!] = row.int64(at: 1) }
        savedKeys = nextKeys
    }

    package subscript(unit: WorkUnit) -> Progress {
        catchingUp ? Progress() : progress[unit] ?? Progress()
    }

    /// Runs `work` and records the progress it returns for `unit` (and the key counters) in one
    /// transaction: the rows and the checkpoint that describes them commit together or not at all.
    package func commit(_ unit: WorkUnit, done: Bool = false, _ work: () throws -> Progress) throws {
        if catchingUp {
            _ = try connection.savepoint { try work() }
            return
        }
        var reached = Progress()
        try connection.transaction(.immediate) {
            reached = try work()
            reached.done = done
            try connection.execute(
                "INSERT INTO \(Self.progressTable) (unit, last_key, count, done) VALUES (?, ?, ?, ?) ON CONFLICT (unit) DO UPDATE SET last_key = excluded.last_key, count = excluded.count, done = excluded.done",
                unit.key, reached.lastKey, reached.count, done)
            if reached.keptKeys, case .createInstances(let number, _) = unit {
                try connection.execute(
                    "INSERT OR REPLACE INTO \(Self.progressTable) (unit, last_key, count, done) VALUES (?, 0, 0, 1)", WorkUnit.keptKeys(mapping: number).key)
            }
            for (root, next) in nextKeys where savedKeys[root] != next {
                try connection.execute(
                    "INSERT INTO \(Self.keysTable) (root, next) VALUES (?, ?) ON CONFLICT (root) DO UPDATE SET next = excluded.next", root, next)
            }
        }
        progress[unit] = reached
        savedKeys = nextKeys
        if reached.keptKeys, case .createInstances(let number, _) = unit { associations.keptByPolicy.insert(number) }
    }

    /// The entity mappings that wrote objects in Swift, by the root table they wrote into,
    /// across resumes (committed with each batch).
    package func swiftWriters() throws -> [String: Set<Int>] {
        guard hasPolicyTables else { return [:] }
        var writers: [String: Set<Int>] = [:]
        let rows = try connection.prepare("SELECT root, entry FROM \(Self.writersTable)")
        var cursor = rows.rows()
        while let row = try cursor.next() { writers[row.text(at: 0) ?? "", default: []].insert(Int(row.int64(at: 1))) }
        return writers
    }

    /// Every relationship a policy linked objects through, across resumes.
    package var policyLinkedRelationships: Set<PropertyIdentity> {
        Set(
            progress.keys.compactMap { unit in
                if case .policyLinks(_, let entity, let relationship) = unit { return PropertyIdentity(entity: entity, property: relationship) }
                return nil
            })
    }

    /// Drops every work table (the association tables too, unless kept for auditing) and marks
    /// the step finished; call inside the step's last transaction.
    package func finish(keepingAssociations: Bool) throws {
        if !keepingAssociations {
            for entry in associations.entries where !entry.keepsKeys {
                try connection.execute("DROP TABLE IF EXISTS \(quoteIdentifier(entry.table))")
            }
        }
        for table in [Self.linksTable, Self.uniqueTable, Self.writersTable, Self.earlierSourceScansTable, Self.progressTable, Self.keysTable] {
            try connection.execute("DROP TABLE IF EXISTS \(table)")
        }
        try connection.setPragma("user_version", .integer(Self.completedMarker))
    }

    /// Whether the store at this connection holds a finished step.
    package static func isCompleted(_ connection: Connection) throws -> Bool {
        try connection.pragma("user_version")?.int64 == completedMarker
    }

    /// The units the step store at `path` recorded, in the order they first committed; empty
    /// when it recorded none.
    ///
    /// - Throws: `TernError(.badInput)` naming the store and the unit when one is not Tern's.
    static func recorded(inStoreAt path: String) throws -> [(WorkUnit, Progress)] {
        do {
            let connection = try Connection(path: path, configuration: .init(mode: .readOnly))
            defer { try? connection.close() }
            guard try connection.scalar("SELECT count(*) FROM sqlite_master WHERE name = ?", progressTable) == .integer(1) else { return [] }
            return try recorded(in: connection, path: path)
        } catch let error as SQLiteError where error.code == .SQLITE_READONLY_ROLLBACK {
            // Killed inside a transaction: the committed checkpoint is what rolling the journal
            // back leaves, which a read-only reader may not do. Roll back a copy instead; the
            // resume rolls back the store itself.
            return try recordedInCopy(of: path)
        }
    }

    /// The copy goes beside the step store, on the same volume (a pod's temporary folder may be
    /// too small for it); a resume rolling the journal back meanwhile makes the pair torn, so the
    /// files are compared before and after copying, and the read is tried again when they moved.
    private static func recordedInCopy(of path: String, attempts: Int = 3) throws -> [(WorkUnit, Progress)] {
        let fileManager = FileManager.default
        let copy = path + ".tern-checkpoint-\(UUID().uuidString)"
        defer { for suffix in ["", "-journal"] { try? fileManager.removeItem(atPath: copy + suffix) } }
        func identity() -> [String] {
            [path, path + "-journal"].map { file in
                var info = stat()
                return stat(file, &info) == 0 ? "\(info.st_ino):\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)" : "-"
            }
        }
        let before = identity()
        do {
            try fileManager.copyItem(atPath: path, toPath: copy)
            try fileManager.copyItem(atPath: path + "-journal", toPath: copy + "-journal")
        } catch {
            // The journal went (a resume rolled it back): the store reads as it is now.
            if attempts > 1, !fileManager.fileExists(atPath: path + "-journal") { return try recorded(inStoreAt: path) }
            throw TernError(.io, "cannot copy the step store and its journal to read their checkpoint: \(error.localizedDescription)", path: path)
        }
        guard identity() == before else {
            guard attempts > 1 else { throw TernError(.io, "the step store changed while its checkpoint was read: a resume is running", path: path) }
            return try recordedInCopy(of: path, attempts: attempts - 1)
        }
        let connection = try Connection(path: copy)
        defer { try? connection.close() }
        guard try connection.scalar("SELECT count(*) FROM sqlite_master WHERE name = ?", progressTable) == .integer(1) else { return [] }
        return try recorded(in: connection, path: path)
    }

    private static func recorded(in connection: Connection, path: String) throws -> [(WorkUnit, Progress)] {
        let statement = try connection.prepare("SELECT unit, last_key, count, done FROM \(progressTable) ORDER BY rowid")
        var rows = statement.rows()
        var units: [(WorkUnit, Progress)] = []
        while let row = try rows.next() {
            guard let unit = row.text(at: 0).flatMap(WorkUnit.init(key:)) else {
                throw TernError(
                    .badInput, "the migration's checkpoint is damaged: \(row.value(at: 0).sqlLiteral) is not a unit of work (\(RecoveryWording.restart))",
                    path: path)
            }
            units.append((unit, Progress(lastKey: row.int64(at: 1), count: Int(row.int64(at: 2)), done: row.int64(at: 3) != 0)))
        }
        return units
    }
}
