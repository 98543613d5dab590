import Foundation
import TernModel
import TernStore
import TernMapping
import TernSQLite
import TernPlanning
import TernDurability
@_spi(Testing) import TernExecution

/// The last moment of a run: handing the migrated store over, only if the source is still what
/// was migrated.
extension StoreMigration {
    /// Puts `migrated` at `finalPath` once the source has been proved unchanged since the run
    /// began. In place, SQLite's write lock on the source is held from that proof to the swap,
    /// so no one can commit in between, and a store another process has open is not swapped.
    /// Returns the time spent reading the source's digest.
    ///
    /// - Parameters:
    ///   - externalData: the folders the migrated store's external references name files in.
    ///   - whileHeld: the last work on the migrated store, done once no one can commit to the
    ///     source any more (a live migration's last round), before it is put in place.
    func deliver(
        _ migrated: String, at version: ObjectModel, from store: String, to finalPath: String, keepingOriginalAt backup: String?,
        externalData: ExternalDataFolders, recorded: StoreDigest?, users: StoreUsers?, commits: SourceCommits?, whileHeld: () throws -> Void = {}
    ) throws -> Duration {
        var hold: SourceHold?
        var busy: (any Error)?
        if backup != nil {
            do { hold = try SourceHold(store: store, users: users, connection: commits?.connection) } catch { busy = error }
        }
        defer { hold?.release() }
        // A change outranks a busy store: waiting for the app to quit cannot help then. No
        // commit since the start digest proves it unchanged; otherwise its content is compared.
        let reading = ContinuousClock.now
        if let recorded, commits?.noneSinceStart(store: store) != true, case let changes = try digest(of: store).changes(since: recorded),
            !changes.isEmpty
        {
            throw MigrationError.changedDuringMigration(store: store, changes: changes)
        }
        let checking = ContinuousClock.now - reading
        if let busy { throw busy }
        if let users, case let others = users.others(), !others.isEmpty {
            throw MigrationError.openElsewhere(store: store, processes: others, resumable: true)
        }
        try whileHeld()
        // A process that opened the store meanwhile would commit into the backup once the lock
        // goes: refused, resumably, before the swap.
        if let users, case let others = users.others(), !others.isEmpty {
            throw MigrationError.openElsewhere(store: store, processes: others, resumable: true)
        }
        // The files of externally stored values, before the store that refers to them: the
        // backup's are the original's as they are, taken before new files join them in place.
        let files = ExternalBinaryData.folder(forStore: store)
        if let backup { try ExternalDataCarrier.mirror(files, to: ExternalBinaryData.folder(forStore: backup), shouldStop: options.shouldStop) }
        try ExternalDataCarrier.carry(
            into: migrated, model: version, from: externalData.lookup, to: ExternalBinaryData.folder(forStore: finalPath), lanes: options.workers,
            absent: externalData.absent, shouldStop: options.shouldStop)
        // In place, the migrated store's folder will be the original's: the files it no longer
        // refers to are listed now, from the private migrated file, and leave it after the swap
        // (they stay in the backup's folder). A file an app writes later is never on the list.
        let unreferenced = backup == nil ? [] : try ExternalDataCarrier.unreferencedFiles(in: files, by: migrated)
        try hold?.keepWALOnClose()
        // With --out too: the migrated store is the source's data, readable by whom the source is.
        Self.keepOwnership(of: store, for: migrated)
        try place(migrated, at: finalPath, keepingOriginalAt: backup)
        if let backup, !unreferenced.isEmpty {
            let removed = ExternalDataCarrier.remove(unreferenced, from: files, keptIn: ExternalBinaryData.folder(forStore: backup))
            logger.info("external data files the migrated store no longer refers to are in the backup's folder only", metadata: ["files": "\(removed)"])
        }
        // Exit 0 must mean the migrated store is there after a power cut too.
        try DurableFile.syncDirectory(containing: finalPath, what: "the migrated store")
        return checking
    }

    /// A verification that failed on a source someone committed to while the run read it is
    /// that change, not a fault of the mapping or the data: said as the change (exit 9, run
    /// again once the writer stops), never as a failed verification (7, which a fleet counts
    /// as permanent). Nil when the source is as the run began, or the failure is another.
    func changeBehind(_ error: any Error, store: String, recorded: StoreDigest?, commits: SourceCommits?) -> MigrationError? {
        guard case MigrationFailure.verification? = error as? MigrationFailure, let recorded, commits?.noneSinceStart(store: store) != true,
            let changes = try? digest(of: store).changes(since: recorded), !changes.isEmpty
        else { return nil }
        return MigrationError.changedDuringMigration(store: store, changes: changes)
    }

    /// The source's content, read without leaving a mark on it.
    func digest(of store: String) throws -> StoreDigest {
        let started = ContinuousClock.now
        let source = try ReadOnlyStore(path: store)
        let digest = try MigrationInterrupted.whenAsked(options.shouldStop) {
            try StoreDigest.read(storeAt: source.attachPath, workers: options.workers, shouldStop: options.shouldStop)
        }
        logger.info("read the source's digest", metadata: ["seconds": "\((ContinuousClock.now - started).seconds)", "tables": "\(digest.tables.count)"])
        return digest
    }

    /// Why `output` cannot name the migrated store's file, seen from the path alone, or nil: an
    /// empty path, or one naming a directory (`x.sqlite/`, an existing folder) would be found only
    /// when the finished store is moved into place.
    public static func outputPlaceProblem(_ output: String) -> String? {
        if output.isEmpty { return "\(RecoveryWording.output) is empty: give the path of a new store file" }
        var isDirectory: ObjCBool = false
        if output.hasSuffix("/") || output.hasSuffix("/.") || output.hasSuffix("/..") || output == "." || output == ".."
            || (FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory) && isDirectory.boolValue)
        {
            return "\(RecoveryWording.output) \(output) names a directory: give the path of a new store file (DIR/Store.sqlite)"
        }
        return nil
    }

    /// `--out` must name a place in an existing directory, and not a symbolic link: renaming the
    /// migrated store onto a link would replace the link, not what it points to.
    static func checkOutputPlace(_ output: String) throws {
        if let problem = outputPlaceProblem(output) { throw TernError(.badInput, problem, path: output.isEmpty ? nil : output) }
        var info = stat()
        if lstat(output, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
            throw TernError(.badInput, "\(RecoveryWording.output) is a symbolic link; give the path of a new file instead", path: output)
        }
        let directory = URL(fileURLWithPath: output).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw TernError(.missingInput, "the directory for \(RecoveryWording.output) does not exist (create it first)", path: directory)
        }
    }

    /// `Store.sqlite` → `Store~.sqlite`, Core Data's name for the pre-migration copy.
    public static func backupPath(for store: String) -> String {
        let url = URL(fileURLWithPath: store)
        let base = url.deletingPathExtension().lastPathComponent + "~"
        return url.deletingLastPathComponent().appendingPathComponent(url.pathExtension.isEmpty ? base : "\(base).\(url.pathExtension)").path
    }

    /// Puts the migrated store in place so that at every instant a complete store is at `path`:
    /// the original, whose `-wal` a `SourceHold` emptied into its main file, gets a second name
    /// (a hard link) as the backup, then the migrated store is renamed over `path` in one atomic
    /// step. A crash before the rename leaves the original; after it, the migrated store.
    func place(_ migrated: String, at path: String, keepingOriginalAt backup: String?) throws {
        let fileManager = FileManager.default
        guard let backup else {
            try Self.linkWithoutReplacing(migrated, at: path)
            Self.remove(migrated)
            return
        }
        if fileManager.fileExists(atPath: backup) {
            // A backup that is the original itself (a hard link) was left by a placement a crash cut.
            guard FileIdentity(path: backup) == FileIdentity(path: path) else { throw MigrationError.deliveryBlocked(backup) }
            try fileManager.removeItem(atPath: backup)
        }
        if fileManager.fileExists(atPath: backup + "-wal") { throw MigrationError.deliveryBlocked(backup + "-wal") }
        Self.keepOwnership(of: path, for: migrated)
        do {
            try fileManager.linkItem(atPath: path, toPath: backup)
        } catch {
            try fileManager.copyItem(atPath: path, toPath: backup)
            try DurableFile.syncFile(backup, what: "the backup")
        }
        // The backup's name is durable before the original's name is given to the migrated store.
        try DurableFile.syncDirectory(containing: backup, what: "the backup")
        options.reached?(.backupLinked)
        guard rename(migrated, path) == 0 else {
            throw MigrationError.io("cannot move the migrated store into place: \(String(cString: strerror(errno)))", path: path)
        }
        options.reached?(.renamed)
        // The original's journal files belong to the backup now, or to nothing.
        for suffix in ["-wal", "-shm"] { try? fileManager.removeItem(atPath: path + suffix) }
    }

    /// Gives `migrated` a second name, `path`, failing rather than replacing a file that appeared
    /// there while the migration ran (`rename` would replace it). Where the filesystem has no hard
    /// links, the check and the rename are two steps.
    private static func linkWithoutReplacing(_ migrated: String, at path: String) throws {
        if link(migrated, path) == 0 { return }
        switch errno {
        case EEXIST:
            // Linked before a crash cut the run: it is the migrated store already.
            guard FileIdentity(path: migrated) == FileIdentity(path: path) else { throw MigrationError.deliveryBlocked(path) }
        case EPERM, ENOTSUP, EOPNOTSUPP, EMLINK:
            guard !FileManager.default.fileExists(atPath: path) else { throw MigrationError.deliveryBlocked(path) }
            guard rename(migrated, path) == 0 else {
                throw MigrationError.io("cannot move the migrated store into place: \(String(cString: strerror(errno)))", path: path)
            }
        default:
            throw MigrationError.io("cannot move the migrated store into place: \(String(cString: strerror(errno)))", path: path)
        }
    }

    /// The migrated store takes the original's permissions and, where this user may give it,
    /// its owner: the app that used the original must be able to open it, and nobody else.
    private static func keepOwnership(of original: String, for migrated: String) {
        var info = stat()
        guard stat(original, &info) == 0 else { return }
        chmod(migrated, info.st_mode & 0o7777)
        _ = chown(migrated, info.st_uid, info.st_gid)
    }
}

/// SQLite's write lock on the source store, taken with an empty `-wal`: while it is held no
/// connection anywhere can commit to the store, and the main file alone holds all of it, so it
/// can become the backup by a hard link.
final class SourceHold {
    private let connection: Connection

    /// Checkpoints the source's `-wal` into its main file, then takes the write lock; a commit
    /// that slips in between is checkpointed on the next try.
    /// - Parameter connection: an open read-write connection to the store to take the lock on
    ///   (`SourceCommits`'), or nil to open one.
    init(store: String, users: StoreUsers?, connection given: Connection? = nil) throws {
        let busy = { MigrationError.openElsewhere(store: store, processes: users?.others() ?? [], resumable: true) }
        connection = try given ?? Connection(path: store, configuration: .init(mode: .readWrite, busyTimeout: .seconds(2)))
        do {
            for _ in 0..<5 {
                let checkpoint = try connection.prepare("PRAGMA wal_checkpoint(TRUNCATE)")
                guard try checkpoint.step(), checkpoint.row.int64(at: 0) == 0 else { throw busy() }
                let before = try connection.pragma("data_version")
                try connection.execute("BEGIN IMMEDIATE")
                if try connection.pragma("data_version") == before { return }
                try connection.execute("ROLLBACK")
            }
            throw busy()
        } catch let error as SQLiteError where error.code.primary == .SQLITE_BUSY {
            try? connection.close()
            throw busy()
        } catch {
            try? connection.close()
            throw error
        }
    }

    /// The store is about to be renamed away: its `-wal` and `-shm` names will belong to the
    /// migrated store, so closing must not delete them (see `Connection.keepWALOnClose`).
    func keepWALOnClose() throws {
        try connection.keepWALOnClose()
    }

    func release() {
        try? connection.execute("ROLLBACK")
        try? connection.close()
    }
}

extension StoreMigration {
    /// Makes the last step's store what the app opens: Core Data's `user_version`, the run's
    /// fingerprint, the app's own metadata carried over, Core Data's hashes where a plist gave
    /// them, no cached model of the old version, and nothing left in its `-wal`.
    static func finishLastStore(_ final: String, plan: Plan, run: MigrationRun, source: String) throws {
        let connection = try Connection(path: final, configuration: .init(mode: .readWrite))
        try connection.setPragma("user_version", .integer(0))  // a finished store looks like Core Data's
        if let inputs = run.inputs { try StoreFile.setMetadata(StoreFile.migratedFromKey, to: inputs.fingerprint, in: connection, path: final) }
        try StoreFile.carryAppMetadata(from: source, into: connection, path: final)
        if let apple = plan.targetAppleHashes { try StoreFile.useAppleHashes(apple, in: connection, path: final) }
        // The source's cached model describes the old version: neither Tern nor Core Data
        // may take it for the migrated store's (Core Data writes a new one when it opens it).
        try connection.execute("DROP TABLE IF EXISTS Z_MODELCACHE")
        // The main file alone is delivered (a hard link): nothing may stay in its -wal.
        try connection.checkpointWAL()
        try connection.close()
    }
}
