import Foundation
import Logging
import Synchronization
import Tern
import TernSQLite

/// Builds a fleet's manifest: plans every store exactly as `tern migrate` would, so a store the
/// run will refuse is listed with its reason now, and hashes what the migration depends on.
struct FleetPlanner {
    var modelPath: String
    var target: String?
    var mappingOverrides: [String]
    var versionInfo: String?
    var stepByStep: Bool
    var registry: PolicyRegistry

    /// The migration every task runs, checked against the files as they are now.
    func header(manifestAt manifestPath: String, model: VersionedModel, stores: Int, objects: Int) throws -> FleetManifest.Header {
        func input(_ path: String) throws -> FleetManifest.Input {
            FleetManifest.Input(path: FleetManifest.written(path, manifestAt: manifestPath), sha256: try ContentHash.of(path))
        }
        let mappingFiles = (MigrationPlanner.mappingFiles(for: model) + mappingOverrides).sorted()
        return FleetManifest.Header(
            created: ISO8601DateFormatter().string(from: Date()),
            model: try input(modelPath),
            target: target ?? model.currentVersionName,
            mappings: try mappingFiles.map(input),
            mappingOverrides: mappingOverrides.map { FleetManifest.written($0, manifestAt: manifestPath) },
            versionInfo: try versionInfo.map(input),
            stepByStep: stepByStep,
            stores: stores,
            objects: objects
        )
    }

    /// Plans each store (`parallel` at once) and returns the manifest, entries sorted by path.
    func manifest(stores: [String], at manifestPath: String, parallel: Int) throws -> FleetManifest {
        let model = try ModelLoader.load(modelPath)
        if let target, model.version(named: target) == nil {
            throw TernError(.badInput, "no version \(target); versions: \(model.versions.map(\.versionName).joined(separator: ", "))", path: modelPath)
        }
        let apple = try versionInfo.map(VersionMatch.appleHashes(versionInfoAt:)) ?? [:]
        let written = stores.map { FleetManifest.written($0, manifestAt: manifestPath) }
        let entries = Mutex([FleetManifest.Entry?](repeating: nil, count: stores.count))
        let next = Atomic<Int>(0)
        let planOne: @Sendable () -> Void = { [self] in
            while true {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < stores.count else { return }
                let entry = self.entry(store: stores[index], written: written[index], model: model, appleHashes: apple)
                entries.withLock { $0[index] = entry }
            }
        }
        onThreads(min(parallel, stores.count)) { _ in planOne() }
        let sorted = entries.withLock { $0.compactMap { $0 } }.sorted { $0.path < $1.path }
        let objects = sorted.reduce(0) { $0 + $1.objects }
        return FleetManifest(header: try header(manifestAt: manifestPath, model: model, stores: sorted.count, objects: objects),
                             entries: sorted, path: manifestPath)
    }

    private func entry(store: String, written: String, model: VersionedModel, appleHashes: [String: [String: String]]) -> FleetManifest.Entry {
        let id = FleetManifest.id(forPath: written)
        do {
            var options = MigrationOptions(registry: registry)
            options.composeSteps = !stepByStep
            let migration = StoreMigration(store: store, model: model, options: options, logger: Logger(label: "tern.fleet.plan", factory: { _ in SwiftLogNoOpLogHandler() }))
            let plan = try migration.plan(to: target, mappingFiles: mappingOverrides, appleHashes: appleHashes)
            guard let source = plan.steps.first?.source ?? model.version(named: plan.storeVersion) else {
                throw TernError(.badInput, "the store's version \(plan.storeVersion) is not in the model", path: store)
            }
            return FleetManifest.Entry(id: id, path: written, state: plan.steps.isEmpty ? .current : .pending, version: plan.storeVersion,
                                       objects: try Self.objects(inStoreAt: store, model: source), steps: plan.steps.count, error: nil)
        } catch {
            return FleetManifest.Entry(id: id, path: written, state: .unreadable, version: nil, objects: 0, steps: 0, error: FleetError(error))
        }
    }

    /// Objects in a store of `model`'s layout: the rows of its entity tables.
    static func objects(inStoreAt path: String, model: ObjectModel) throws -> Int {
        let connection = try ReadOnlyStore(path: path).connect()
        defer { try? connection.close() }
        let tables = Set(StoreLayout(model: model).entities.values.map(\.table)).sorted()
        return try tables.reduce(0) { total, table in
            total + Int(try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(table))")?.int64 ?? 0)
        }
    }
}

/// The stores a fleet plan names: a glob's matches or a list file's lines, as absolute paths,
/// without tern's own files and without a file named twice.
enum StoreList {
    /// The stores, and what was left out with the reason.
    struct Listing {
        var stores: [String] = []
        var leftOut: [(path: String, reason: String)] = []
    }

    /// The files a shell-style pattern matches (`/data/users/*/App.sqlite`).
    static func matching(_ pattern: String) throws -> [String] {
        var found = glob_t()
        defer { globfree(&found) }
        let status = glob(pattern, 0, nil, &found)
        guard status == 0 || status == GLOB_NOMATCH else { throw TernError(.io, "cannot list the stores the pattern matches (glob error \(status))", path: pattern) }
        return (0..<Int(found.gl_pathc)).compactMap { found.gl_pathv[$0].map { String(cString: $0) } }
    }

    /// The paths of a list file: one per line; blank lines and `#` comments skipped.
    static func read(_ listFile: String) throws -> [String] {
        guard let text = try? String(contentsOfFile: listFile, encoding: .utf8) else {
            throw FileManager.default.fileExists(atPath: listFile) ? TernError(.badInput, "not a UTF-8 text file", path: listFile) : TernError(.missingInput, "no such list", path: listFile)
        }
        return text.split(separator: "\n", omittingEmptySubsequences: true).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// `paths` as stores: absolute and normalised, sorted; tern's own files left out (a pattern
    /// over a fleet migrated before matches its backups), and a file reached by two names (a
    /// symbolic or hard link) listed once, so no two tasks can take it for two stores.
    static func stores(_ paths: [String]) -> Listing {
        var listing = Listing()
        var seen: [String: String] = [:]  // device and inode → the path kept
        for path in Set(paths.map { URL(fileURLWithPath: $0).standardizedFileURL.path }).sorted() {
            if let reason = ternsOwnFile(path) {
                listing.leftOut.append((path, reason))
                continue
            }
            var info = stat()
            if stat(path, &info) == 0 {
                let identity = "\(info.st_dev):\(info.st_ino)"
                if let first = seen[identity] {
                    listing.leftOut.append((path, "the same file as \(first) (a link to it)"))
                    continue
                }
                seen[identity] = path
            }
            listing.stores.append(path)
        }
        return listing
    }

    /// Why `path` is one of the files tern keeps beside a store rather than a store, or nil.
    static func ternsOwnFile(_ path: String) -> String? {
        let url = URL(fileURLWithPath: path)
        let name = url.lastPathComponent
        if name.hasPrefix("."), name.contains(".tern-") { return "a working file of tern (a step store, lock, lease or run record)" }
        if url.deletingPathExtension().lastPathComponent.hasSuffix("~") { return "a backup tern or Core Data kept of a store before migrating it (NAME~.sqlite)" }
        if ["-wal", "-shm", "-journal"].contains(where: name.hasSuffix) { return "a journal file of SQLite, part of the store beside it" }
        return nil
    }
}
