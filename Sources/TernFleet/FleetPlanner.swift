import Foundation
import Logging
import Synchronization
import Tern
import TernCommands
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
        return FleetManifest(
            header: try header(manifestAt: manifestPath, model: model, stores: sorted.count, objects: objects),
            entries: sorted, path: manifestPath)
    }

    private func entry(store: String, written: String, model: VersionedModel, appleHashes: [String: [String: String]]) -> FleetManifest.Entry {
        let id = FleetManifest.id(forPath: written)
        do {
            var options = MigrationOptions(registry: registry)
            options.route = stepByStep ? .stepByStep : .coreData
            let migration = StoreMigration(
                store: store, model: model, options: options, logger: Logger(label: "tern.fleet.plan", factory: { _ in SwiftLogNoOpLogHandler() }))
            let plan = try migration.plan(to: target, mappingFiles: mappingOverrides, appleHashes: appleHashes)
            return FleetManifest.Entry(
                id: id, path: written, state: plan.steps.isEmpty ? .current : .pending, version: plan.storeVersion,
                objects: try Self.objects(inStoreAt: store), steps: plan.steps.count, error: nil)
        } catch {
            return FleetManifest.Entry(id: id, path: written, state: .unreadable, version: nil, objects: 0, steps: 0, error: FleetError(error))
        }
    }

    /// Objects in a store: the rows of each entity `Z_PRIMARYKEY` names, as `StoreMigration`
    /// counts them for its progress.
    static func objects(inStoreAt path: String) throws -> Int {
        try StoreMetadata.read(storeAt: path).entities.reduce(0) { $0 + Int($1.rowCount ?? 0) }
    }
}
