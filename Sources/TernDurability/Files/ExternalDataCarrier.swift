import TernDigest
import TernModel
import TernStore
import TernMapping
import Foundation
import Synchronization
import TernLoop
import TernSQLite
import TernPlanning

/// Carries the files of externally stored values (`ExternalBinaryData`) with a migrated store,
/// and proves them: a migration that moved the rows but not the files would lose every large
/// attachment while its small, inline ones survive.
///
/// Values are copied as they are, so a migrated value names the same file as its source value;
/// the files are hard links of the source's (copies across filesystems), made before the store
/// that refers to them is delivered, and each is checked to hold the source file's bytes.
package enum ExternalDataCarrier {
    /// Gives every file `migrated` refers to a name in `destination` (a store's
    /// `_EXTERNAL_DATA` folder), from the first of `sources` that has it, and proves each holds
    /// that file's bytes, on up to `lanes` threads (`mostLanes`). Returns how many files it proved.
    ///
    /// - Throws: `MigrationFailure.verification` naming the entity, attribute, key and file of a
    ///   reference whose file is missing or differs (the first in entity, attribute and key order).
    @discardableResult
    package static func carry(
        into migrated: String, model: ObjectModel, from sources: [String], to destination: String, lanes: Int = 1, absent: Set<String> = [],
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) throws -> Int {
        let proved = Atomic<Int>(0)
        let folders = sources.compactMap(OpenFolder.init)
        let target = LazyFolder(destination)
        try forEachReference(in: migrated, model: model, lanes: min(lanes, mostLanes), shouldStop: shouldStop) { file, owner in
            // Absent when the run began, and carried as the reference it is (Core Data reads no value).
            if absent.contains(file), !folders.contains(where: { $0.status(of: file) != nil }) { return }
            try carry(file, from: folders, to: target, naming: owner, missingFrom: sources.first)
            proved.add(1, ordering: .relaxed)
        }
        try syncNames(in: destination)
        return proved.load(ordering: .relaxed)
    }

    /// Threads that carry files at once: a link's time is mostly the system's, in the one folder
    /// all links go into, and two make them in two thirds of one's time; four, no faster.
    static let mostLanes = 2

    /// Makes the names carried into `folder` (and the folder's own, in the support folder)
    /// survive a power cut; the store's directory is synced once the store is in place.
    private static func syncNames(in folder: String) throws {
        guard FileManager.default.fileExists(atPath: folder) else { return }
        try DurableFile.syncDirectory(folder, what: "external data")
        try DurableFile.syncDirectory(containing: folder, what: "external data")
    }

    /// Proves every file `store` refers to is a regular file in one of `folders`: a value read
    /// from a missing file is named before it is needed rather than lost later.
    package static func checkReferences(
        in store: String, model: ObjectModel, folders: [String], tolerating absent: Set<String> = [],
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) throws {
        let opened = folders.compactMap(OpenFolder.init)
        try forEachReference(in: store, model: model, lanes: 1, shouldStop: shouldStop) { file, owner in
            if absent.contains(file), !opened.contains(where: { $0.status(of: file) != nil }) { return }
            _ = try locate(file, in: opened, naming: owner, missingFrom: folders.first)
        }
    }

    /// The references of `store` whose file is in none of `folders` — what Core Data reads as no
    /// value, and a migration carries as the reference it is — as anomalies per attribute (a
    /// count and the first object) with the files' names. A name that is there but not a
    /// regular file is refused as `checkReferences` refuses it.
    package static func absentReferences(
        in store: String, model: ObjectModel, folders: [String], shouldStop: @escaping @Sendable () -> Bool = { false }
    ) throws -> (anomalies: [StoreAnomaly], files: Set<String>) {
        let opened = folders.compactMap(OpenFolder.init)
        let found = Mutex<(anomalies: [String: StoreAnomaly], order: [String], files: Set<String>)>(([:], [], []))
        try forEachReference(in: store, model: model, lanes: 1, shouldStop: shouldStop) { file, owner in
            // No folder at all is a store copied without its support folder, not a file Core
            // Data lost: refused, naming the folder, as before.
            guard !opened.isEmpty, !opened.contains(where: { $0.status(of: file) != nil }) else {
                _ = try locate(file, in: opened, naming: owner, missingFrom: folders.first)
                return
            }
            found.withLock { found in
                let place = "\(owner.entity).\(owner.attribute)"
                if found.anomalies[place] == nil {
                    found.order.append(place)
                    found.anomalies[place] = StoreAnomaly(
                        place: place, problem: "referring to an external data file that does not exist (Core Data reads no value)", count: 0,
                        example: owner.key, isTolerated: true)
                }
                found.anomalies[place]!.count += 1
                found.files.insert(file)
            }
        }
        return found.withLock { found in (found.order.map { found.anomalies[$0]! }, found.files) }
    }

    /// Where a walk of the references is: an attribute of one object, or the start of an
    /// attribute's rows (`key` `Int64.min`), or before any (`entity` -1), ordered as the walk goes.
    private struct Reference: CustomStringConvertible, Comparable {
        var entityOrder: Int
        var attributeOrder: Int
        var key: Int64
        var entity: String
        var attribute: String
        var description: String { "\(entity) \(key), \(attribute)" }

        static let start = Reference(entityOrder: -1, attributeOrder: -1, key: .min, entity: "", attribute: "")

        static func < (a: Self, b: Self) -> Bool { (a.entityOrder, a.attributeOrder, a.key) < (b.entityOrder, b.attributeOrder, b.key) }
        static func == (a: Self, b: Self) -> Bool { (a.entityOrder, a.attributeOrder, a.key) == (b.entityOrder, b.attributeOrder, b.key) }
    }

    /// Calls `body` with each file name `store` refers to and who refers to it, in entity,
    /// attribute and key order. With `lanes` above one, on that many threads: each walks every
    /// reference in that order and takes the files its lane owns by name, so no two lanes ever
    /// carry one file. The failure thrown is the first in that order, whatever the threads'
    /// timing: a lane stops at its first failure, or once it is past the earliest any lane met.
    private static func forEachReference(
        in store: String, model: ObjectModel, lanes: Int, shouldStop: @escaping @Sendable () -> Bool,
        _ body: @escaping @Sendable (_ file: String, _ owner: Reference) throws -> Void
    ) throws {
        let earliest = Mutex<(at: Reference, error: any Error)?>(nil)
        let walk: @Sendable (Int) -> Void = { lane in
            walkReferences(in: store, model: model, lane: lane, of: max(1, lanes), earliest: earliest, shouldStop: shouldStop, body)
        }
        if lanes > 1 { try OSThread.run(lanes, walk) } else { walk(0) }
        if let failure = earliest.withLock({ $0 }) { throw failure.error }
    }

    /// One lane's walk: the references to files whose name falls to `lane` of `lanes`. Records
    /// its failure in `earliest` unless a lane failed earlier in the walk's order.
    private static func walkReferences(
        in store: String, model: ObjectModel, lane: Int, of lanes: Int, earliest: borrowing Mutex<(at: Reference, error: any Error)?>,
        shouldStop: () -> Bool, _ body: (_ file: String, _ owner: Reference) throws -> Void
    ) {
        var current = Reference.start
        /// Whether another lane failed before `current`: nothing after it can be reported.
        func passedAFailure() -> Bool { earliest.withLock { $0.map { $0.at < current } ?? false } }
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
                    current = Reference(entityOrder: entityOrder, attributeOrder: attributeOrder, key: .min, entity: entity.name, attribute: attribute.name)
                    let statement = try connection.prepare(
                        """
                        SELECT Z_PK, \(quoteIdentifier(column)) FROM \(quoteIdentifier(entityLayout.table))
                        WHERE Z_ENT = \(entityLayout.number) AND substr(\(quoteIdentifier(column)), 1, 1) = X'02' ORDER BY Z_PK
                        """)
                    var rows = statement.rows()
                    while let row = try rows.next() {
                        current.key = row.int64(at: 0)
                        if shouldStop() { throw MigrationInterrupted() }
                        // A value that only starts like a reference is bytes stored without a
                        // marker (written before the attribute allowed external storage): copied
                        // as it is.
                        guard let file = row.blob(at: 1).flatMap(ExternalBinaryData.reference), lanes == 1 || lane == Self.lane(of: file, among: lanes)
                        else { continue }
                        if lanes > 1, passedAFailure() { return }
                        try body(file, current)
                    }
                }
            }
        } catch {
            earliest.withLock { found in
                if found.map({ current < $0.at }) ?? true { found = (current, error) }
            }
        }
    }

    /// The lane that carries `file` among `lanes`: by its name, the same in every walk.
    private static func lane(of file: String, among lanes: Int) -> Int {
        // FNV-1a over the name's bytes: stable from run to run, unlike `hashValue`.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in file.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return Int(hash % UInt64(lanes))
    }

    /// Gives every file of `source` a name in `destination` too: the folder of a backup that
    /// must open alone.
    package static func mirror(_ source: String, to destination: String, shouldStop: () -> Bool = { false }) throws {
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
    package static func unreferencedFiles(in folder: String, by store: String) throws -> [String] {
        // Foundation on Linux enumerates a missing folder as an empty one: without this, every
        // column of every table was read for nothing (0.5 s of a 1M-object swap's downtime).
        guard FileManager.default.fileExists(atPath: folder), let files = FileManager.default.enumerator(atPath: folder) else { return [] }
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
    package static func remove(_ files: [String], from folder: String, keptIn backupFolder: String) -> Int {
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
    package static func removeCarried(from destination: String, sources: [String]) {
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
