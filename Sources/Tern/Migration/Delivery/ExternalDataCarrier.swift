import Crypto
import TernModel
import TernStore
import TernMapping
import Foundation
import Synchronization
import TernLoop
import TernSQLite

/// Carries the files of externally stored values (`ExternalBinaryData`) with a migrated store,
/// and proves them: a migration that moved the rows but not the files would lose every large
/// attachment while its small, inline ones survive.
///
/// Values are copied as they are, so a migrated value names the same file as its source value;
/// the files are hard links of the source's (copies across filesystems), made before the store
/// that refers to them is delivered, and each is checked to hold the source file's bytes.
enum ExternalDataCarrier {
    /// Gives every file `migrated` refers to a name in `destination` (a store's
    /// `_EXTERNAL_DATA` folder), from the first of `sources` that has it, and proves each holds
    /// that file's bytes, on `lanes` threads: a link's time is mostly the system's, and two
    /// make them in two thirds of one's. Returns how many files it proved.
    ///
    /// - Throws: `MigrationFailure.verification` naming the entity, attribute, key and file of a
    ///   reference whose file is missing or differs (the first in entity and key order).
    @discardableResult
    static func carry(
        into migrated: String, model: ObjectModel, from sources: [String], to destination: String, lanes: Int = 1,
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) throws -> Int {
        let proved = Atomic<Int>(0)
        let folders = sources.compactMap(OpenFolder.init)
        let target = LazyFolder(destination)
        try forEachReference(in: migrated, model: model, lanes: lanes, shouldStop: shouldStop) { file, owner in
            try carry(file, from: folders, to: target, naming: owner, missingFrom: sources.first)
            proved.add(1, ordering: .relaxed)
        }
        try syncNames(in: destination)
        return proved.load(ordering: .relaxed)
    }

    /// Makes the names carried into `folder` (and the folder's own, in the support folder)
    /// survive a power cut; the store's directory is synced once the store is in place.
    private static func syncNames(in folder: String) throws {
        guard FileManager.default.fileExists(atPath: folder) else { return }
        try DurableFile.syncDirectory(folder, what: "external data")
        try DurableFile.syncDirectory(containing: folder, what: "external data")
    }

    /// Proves every file `store` refers to is a regular file in one of `folders`, before any
    /// work: a value read from a missing file is named here rather than lost later.
    static func checkReferences(in store: String, model: ObjectModel, folders: [String], shouldStop: @escaping @Sendable () -> Bool = { false }) throws {
        let opened = folders.compactMap(OpenFolder.init)
        try forEachReference(in: store, model: model, lanes: 1, shouldStop: shouldStop) { file, owner in
            _ = try locate(file, in: opened, naming: owner, missingFrom: folders.first)
        }
    }

    /// Who refers to an external file: an attribute of one object.
    private struct Reference: CustomStringConvertible, Comparable {
        /// The entity's and the attribute's places in the walk's order, then the object's key.
        var order: [Int64]
        var entity: String
        var attribute: String
        var key: Int64 { order[2] }
        var description: String { "\(entity) \(key), \(attribute)" }

        static func < (a: Self, b: Self) -> Bool { a.order.lexicographicallyPrecedes(b.order) }
        static func == (a: Self, b: Self) -> Bool { a.order == b.order }
    }

    /// Calls `body` with each file name `store` refers to and who refers to it, in entity and
    /// key order; with `lanes` above one, on that many threads, each taking the keys of its own
    /// remainder. Every lane goes on to its own first failure, so the one thrown is the first in
    /// that order, whatever the threads' timing.
    private static func forEachReference(
        in store: String, model: ObjectModel, lanes: Int, shouldStop: @escaping @Sendable () -> Bool,
        _ body: @escaping @Sendable (_ file: String, _ owner: Reference) throws -> Void
    ) throws {
        guard lanes > 1 else {
            if let (_, error) = walkReferences(in: store, model: model, lane: 0, of: 1, shouldStop: shouldStop, body) { throw error }
            return
        }
        let failures = Mutex<[(Reference?, any Error)]>([])
        try OSThread.run(lanes) { lane in
            if let failure = walkReferences(in: store, model: model, lane: lane, of: lanes, shouldStop: shouldStop, body) {
                failures.withLock { $0.append(failure) }
            }
        }
        if let (_, error) = failures.withLock({ $0.min { precedes($0.0, $1.0) } }) { throw error }
    }

    /// Whether a lane's failure at `a` comes before one at `b`: a failure before any reference
    /// (the store could not be read) comes first of all.
    private static func precedes(_ a: Reference?, _ b: Reference?) -> Bool {
        guard let b else { return false }
        guard let a else { return true }
        return a < b
    }

    /// One lane's walk: the references whose key leaves `lane` over `lanes`. Returns its first
    /// failure, and the reference it came at (nil before any).
    private static func walkReferences(
        in store: String, model: ObjectModel, lane: Int, of lanes: Int, shouldStop: () -> Bool,
        _ body: (_ file: String, _ owner: Reference) throws -> Void
    ) -> (Reference?, any Error)? {
        var current: Reference?
        do {
            let layout = StoreLayout(model: model)
            // Read without leaving a -wal or -shm beside a file about to be renamed.
            let reader = try ReadOnlyStore(path: store)
            let connection = try reader.connect()
            defer { try? connection.close() }
            for (entityOrder, entity) in model.entitiesInStoreOrder.enumerated() where !entity.isAbstract {
                guard let entityLayout = layout.entities[entity.name] else { continue }
                for (attributeOrder, attribute) in model.allAttributes(of: entity.name).enumerated() where attribute.allowsExternalStorage {
                    guard let column = entityLayout.attributeColumns[attribute.name] else { continue }
                    let statement = try connection.prepare(
                        """
                        SELECT Z_PK, \(quoteIdentifier(column)) FROM \(quoteIdentifier(entityLayout.table))
                        WHERE Z_ENT = \(entityLayout.number) AND substr(\(quoteIdentifier(column)), 1, 1) = X'02' AND Z_PK % \(lanes) = \(lane)
                        ORDER BY Z_PK
                        """)
                    var rows = statement.rows()
                    while let row = try rows.next() {
                        current = Reference(
                            order: [Int64(entityOrder), Int64(attributeOrder), row.int64(at: 0)], entity: entity.name, attribute: attribute.name)
                        if shouldStop() { throw MigrationInterrupted() }
                        // A value that only starts like a reference is bytes stored without a
                        // marker (written before the attribute allowed external storage): copied
                        // as it is.
                        guard let file = row.blob(at: 1).flatMap(ExternalBinaryData.reference) else { continue }
                        try body(file, current!)
                    }
                }
            }
            return nil
        } catch {
            return (current, error)
        }
    }

    /// Gives every file of `source` a name in `destination` too: the folder of a backup that
    /// must open alone.
    static func mirror(_ source: String, to destination: String, shouldStop: () -> Bool = { false }) throws {
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: source), let folder = OpenFolder(source) else { return }
        let target = LazyFolder(destination)
        for file in files.sorted() {
            if shouldStop() { throw MigrationInterrupted() }
            try carry(file, from: [folder], to: target, naming: "the backup's external data", missingFrom: source)
        }
        try syncNames(in: destination)
    }

    /// The files of `folder` that `store` does not refer to. In place, `store` is the migrated
    /// store, still private, and `folder` the original's, which becomes the migrated store's:
    /// these files are taken out of it after the swap (`remove(_:from:keptIn:)`). References are
    /// found by their marker in every column, without a model (a value that only looks like one
    /// keeps its file), gathered in a temporary table so memory does not grow with the store.
    static func unreferencedFiles(in folder: String, by store: String) throws -> [String] {
        guard let files = FileManager.default.enumerator(atPath: folder) else { return [] }
        let reader = try ReadOnlyStore(path: store)
        let connection = try reader.connect()
        defer { try? connection.close() }
        try connection.createFunction("tern_external_reference", argumentCount: 1) { arguments in
            guard case .blob(let value) = arguments[0], let name = ExternalBinaryData.reference(in: value) else { return .null }
            return .text(name)
        }
        try connection.execute("CREATE TEMP TABLE tern_referenced (name TEXT PRIMARY KEY) WITHOUT ROWID")
        for (table, column) in try ExternalBinaryData.entityColumns(in: connection) {
            try connection.execute(
                """
                INSERT OR IGNORE INTO temp.tern_referenced
                SELECT tern_external_reference(\(quoteIdentifier(column))) FROM \(quoteIdentifier(table))
                WHERE \(ExternalBinaryData.mayBeReference(column)) AND tern_external_reference(\(quoteIdentifier(column))) IS NOT NULL
                """)
        }
        var unreferenced: [String] = []
        for case let file as String in files {
            files.skipDescendants()
            if try connection.scalar("SELECT 1 FROM temp.tern_referenced WHERE name = ?", file) == nil { unreferenced.append(file) }
        }
        return unreferenced
    }

    /// Removes `files` from `folder`, each only where `backupFolder` — another folder — holds it
    /// with the same bytes (another name for the same file, or a copy), so no file leaves both
    /// stores. Returns how many went.
    @discardableResult
    static func remove(_ files: [String], from folder: String, keptIn backupFolder: String) -> Int {
        guard let own = FileIdentity(path: folder), let other = FileIdentity(path: backupFolder), own != other else { return 0 }
        var removed = 0
        for file in files {
            let path = folder + "/" + file
            let kept = backupFolder + "/" + file
            var info = stat()
            guard isRegularFile(path), isRegularFile(kept), lstat(path, &info) == 0 else { continue }
            let sameFile = FileIdentity(path: path) == FileIdentity(path: kept)
            guard sameFile ? info.st_nlink >= 2 : sameBytes(path, kept) else { continue }
            if unlink(path) == 0 { removed += 1 }
        }
        return removed
    }

    /// Removes from `destination` the files a run carried there — those holding the very bytes
    /// of the same-named file in one of `sources` — and the folders left empty; anything else
    /// stays, so a folder someone else put there keeps its files.
    static func removeCarried(from destination: String, sources: [String]) {
        let fileManager = FileManager.default
        // A folder is never its own source: every file would match itself.
        let sources = sources.filter { FileIdentity(path: $0) != FileIdentity(path: destination) && $0 != destination }
        for file in (try? fileManager.contentsOfDirectory(atPath: destination)) ?? [] {
            let carried = destination + "/" + file
            guard isRegularFile(carried),
                sources.contains(where: { source in
                    let original = source + "/" + file
                    return isRegularFile(original) && (FileIdentity(path: carried) == FileIdentity(path: original) || sameBytes(carried, original))
                })
            else { continue }
            unlink(carried)
        }
        rmdir(destination)
        rmdir(URL(fileURLWithPath: destination).deletingLastPathComponent().path)
    }

    /// The folder of `folders` holding `file`, a regular file (never a FIFO, which blocks for
    /// ever when opened, a directory or a link), and what it is there.
    private static func locate(
        _ file: String, in folders: [OpenFolder], naming owner: some CustomStringConvertible, missingFrom: String?
    ) throws -> (OpenFolder, stat) {
        for folder in folders {
            guard let found = folder.status(of: file) else { continue }
            guard found.isRegularFile else {
                throw MigrationFailure.verification("\(owner): its external file \(folder.path)/\(file) is not a regular file")
            }
            return (folder, found)
        }
        throw MigrationFailure.verification("\(owner): its external file \(file) does not exist in \(missingFrom ?? "its folder")")
    }

    /// Gives `file` a name in `destination` — a hard link of the first of `sources` that has it,
    /// or a copy across filesystems — and proves it holds that file's bytes.
    private static func carry(
        _ file: String, from sources: [OpenFolder], to destination: LazyFolder, naming owner: some CustomStringConvertible, missingFrom: String?
    ) throws {
        let (source, original) = try locate(file, in: sources, naming: owner, missingFrom: missingFrom)
        let carried = destination.path + "/" + file
        let target: OpenFolder
        do {
            target = try destination.opened()
            // Already there (its own folder, or a run before this one carried it): proved below.
            let linked = source.path == destination.path ? EEXIST : source.link(file, into: target)
            if linked != 0, linked != EEXIST {
                // A copy appears under its name only once whole: a kill leaves no partial file.
                let partial = carried + ".tern-partial"
                try? FileManager.default.removeItem(atPath: partial)
                try FileManager.default.copyItem(atPath: source.path + "/" + file, toPath: partial)
                try DurableFile.syncFile(partial, what: "external data")
                guard rename(partial, carried) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            }
        } catch {
            throw MigrationError.io("cannot carry an external data file: \(error.localizedDescription)", path: carried)
        }
        guard let copy = target.status(of: file), copy.isRegularFile, copy.isSameFile(as: original) || sameBytes(source.path + "/" + file, carried) else {
            throw MigrationFailure.verification("\(owner): its external file \(carried) does not hold the bytes of \(source.path)/\(file)")
        }
    }

    private static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.isRegularFile
    }

    /// Whether two regular files hold the same bytes (SHA-256 of each); false when either
    /// cannot be read to its end.
    private static func sameBytes(_ a: String, _ b: String) -> Bool {
        guard let first = digest(of: a), let second = digest(of: b) else { return false }
        return first == second
    }

    private static func digest(of path: String) -> Data? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var hash = SHA256()
        do {
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hash.update(data: chunk) }
        } catch {
            return nil
        }
        return Data(hash.finalize())
    }
}
