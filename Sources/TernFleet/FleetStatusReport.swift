import TernCommands
import Foundation

/// Where a fleet stands, from its manifest, its results folder and the leases held now: safe to
/// read while tasks are running (it only reads, and a line being written is skipped).
struct FleetStatusReport: Encodable {
    /// Each store's standing: its last recorded outcome, `running` while a live lease says a task
    /// has it, `pending` before any attempt.
    enum Standing: String, Encodable, CaseIterable {
        case migrated, skipped, failed, interrupted, running, pending
    }

    struct Failure: Encodable {
        var id: String
        var path: String
        var attempt: Int
        var error: FleetError
    }

    struct Timing: Encodable {
        var id: String
        var path: String
        var seconds: Double
        var objects: Int
    }

    var manifest: String
    var model: String
    var target: String
    var stores: Int
    var counts: [String: Int]
    /// True when no store is pending, running or interrupted.
    var finished: Bool
    var migratedObjects: Int
    /// From the first attempt's start to the last outcome's end.
    var wallSeconds: Double
    var storesPerSecond: Double
    var objectsPerSecond: Double
    var failures: [Failure]
    var slowest: [Timing]

    init(manifest: FleetManifest, results: ResultsFolder, now: Double = Date().timeIntervalSince1970) {
        var counts = Dictionary(uniqueKeysWithValues: Standing.allCases.map { ($0.rawValue, 0) })
        var failures: [Failure] = []
        var timings: [Timing] = []
        var first = Double.infinity, last = 0.0
        var migratedStores = 0
        for entry in manifest.entries {
            let outcomes = results.outcomes(of: entry.id)
            first = min(first, outcomes.first?.started ?? .infinity)
            last = max(last, outcomes.compactMap(\.finished).max() ?? 0)
            let standing = Self.standing(of: entry, outcomes: outcomes, manifest: manifest, now: now)
            counts[standing.rawValue, default: 0] += 1
            if standing == .failed || standing == .interrupted, let final = outcomes.last(where: { $0.status != .started }), let error = final.error {
                failures.append(Failure(id: entry.id, path: entry.path, attempt: final.attempt, error: error))
            }
            if standing == .migrated, let migration = outcomes.last(where: { $0.status == .migrated }) {
                migratedStores += 1
                timings.append(Timing(id: entry.id, path: entry.path, seconds: migration.seconds, objects: migration.objects))
            }
        }
        self.manifest = manifest.path
        model = manifest.header.model.path
        target = manifest.header.target
        stores = manifest.entries.count
        self.counts = counts
        finished = counts["pending"]! + counts["running"]! + counts["interrupted"]! == 0
        migratedObjects = timings.reduce(0) { $0 + $1.objects }
        wallSeconds = last > first ? last - first : 0
        storesPerSecond = wallSeconds > 0 ? Double(migratedStores) / wallSeconds : 0
        objectsPerSecond = wallSeconds > 0 ? Double(migratedObjects) / wallSeconds : 0
        self.failures = failures
        slowest = Array(timings.sorted { $0.seconds > $1.seconds }.prefix(5))
    }

    /// This process, to judge leases as a task here would.
    private static let observer = LeaseIdentity(task: "tern fleet status")

    private static func standing(of entry: FleetManifest.Entry, outcomes: [StoreOutcome], manifest: FleetManifest, now: Double) -> Standing {
        // A live lease: not expired, and not a task of this machine that has ended.
        if let lease = try? StoreLease.read(StoreLease.path(for: manifest.storePath(entry)), length: 0), !observer.isStale(lease, now: now) { return .running }
        switch outcomes.last?.status {
        case nil: return .pending
        case .started?: return .interrupted  // began and recorded no end: killed
        case .migrated?: return .migrated
        // At the target: migrated if an attempt of this fleet did it, else it was there already.
        case .skipped?: return outcomes.contains { $0.status == .migrated } ? .migrated : .skipped
        case .failed?: return .failed
        case .interrupted?: return .interrupted
        }
    }

    /// 0 when every store is at the target, 12 when the rest failed permanently, 75 while stores
    /// are pending, running or left for a retry: `--wait` waits for the last two to end.
    var exitCode: Int32 { TernExitCode.fleet(retryable: !finished, permanent: counts["failed"]! > 0) }

    var text: String {
        var lines = ["Fleet \(manifest): \(stores) stores to \(target) (model \(model))"]
        for standing in Standing.allCases {
            lines.append("  " + standing.rawValue.padding(toLength: 13, withPad: " ", startingAt: 0) + "\(counts[standing.rawValue]!)")
        }
        if wallSeconds > 0 {
            lines.append(
                "Migrated \(Formatting.count(migratedObjects)) objects in \(Formatting.count(counts["migrated"]!)) stores over "
                    + String(format: "%.1f s: %.2f stores/s, ", wallSeconds, storesPerSecond) + "\(Formatting.count(Int(objectsPerSecond))) objects/s")
        }
        if !failures.isEmpty {
            lines.append("Failures:")
            lines += failures.map { "  \($0.path) (attempt \($0.attempt)): \($0.error.class), \($0.error.kind): \($0.error.message)" }
        }
        if !slowest.isEmpty {
            lines.append("Slowest:")
            lines += slowest.map { String(format: "  %8.2f s  ", $0.seconds) + "\(Formatting.count($0.objects)) objects  \($0.path)" }
        }
        lines.append(
            finished
                ? (failures.isEmpty ? "Done: every store is at \(target)." : "Done, except the failures above: retrying cannot help them.")
                : "Not done: stores are pending, running or left for a retry.")
        return lines.joined(separator: "\n")
    }
}
