import Foundation
import Logging
import TernSQLite

/// The default migration process: find the store's version, the chain to the target version,
/// migrate through temporary stores beside the original, verify, and only then put the result
/// in place.
public struct StoreMigration {
    public struct Plan: Sendable {
        public let storeVersion: String
        public let targetVersion: String
        public let steps: [MigrationStep]
    }

    public struct Report: Sendable {
        public var plan: Plan
        public var steps: [StepReport]
        /// Where the migrated store is, and where the original was kept (nil with --out).
        public var destination: String
        public var backup: String?
        public var duration: Duration
    }

    public let store: String
    public let model: VersionedModel
    public var options: MigrationOptions
    public var logger: Logger

    public init(store: String, model: VersionedModel, options: MigrationOptions = MigrationOptions(), logger: Logger = Logger(label: "tern.migrate")) {
        self.store = store
        self.model = model
        self.options = options
        self.logger = logger
    }

    /// Reads the store's version and works out the steps to `target` (default: the current
    /// version).
    ///
    /// - Throws: `TernError` when no version wrote the store, or a step has no mapping.
    public func plan(to target: String? = nil, mappingFiles extra: [String] = [], appleHashes: [String: [String: String]] = [:]) throws -> Plan {
        let match = try VersionMatch.find(in: model, storeAt: store, appleHashes: appleHashes)
        let version: String
        let targetVersion = target ?? model.currentVersionName
        switch match.verdict {
        case .compatible(let name, _):
            version = name
        case .migrationNeeded(let from, _, _):
            version = from
        case .noMatch(let closest, let differences):
            throw MigrationError.noVersionMatches(closest: closest, differences: differences, store: store)
        }
        guard version != targetVersion else {
            return Plan(storeVersion: version, targetVersion: targetVersion, steps: [])
        }
        let files = MigrationPlanner.mappingFiles(for: model)
        let steps = try MigrationPlanner.chain(in: model, from: version, to: targetVersion, mappingFiles: files, overriding: extra, now: options.now)
        return Plan(storeVersion: version, targetVersion: targetVersion, steps: steps)
    }

    /// Runs the plan. With `output`, the migrated store is written there and the original left
    /// alone; otherwise the original is kept as `NAME~.sqlite` and the migrated store takes its
    /// place, but only once it is complete and verified.
    public func run(_ plan: Plan, output: String? = nil) throws -> Report {
        let started = ContinuousClock.now
        let fileManager = FileManager.default
        let storeURL = URL(fileURLWithPath: store)
        let finalPath = output ?? store
        if let output, fileManager.fileExists(atPath: output) {
            throw MigrationError.destinationExists(output)
        }
        let backup = output == nil ? Self.backupPath(for: store) : nil
        if let backup, fileManager.fileExists(atPath: backup) {
            throw MigrationError.destinationExists(backup)
        }
        let directory = URL(fileURLWithPath: finalPath).deletingLastPathComponent()
        var reports: [StepReport] = []
        var current = store
        var temporaries: [String] = []
        defer {
            for path in temporaries where path != finalPath {
                for suffix in ["", "-wal", "-shm", "-journal"] { try? fileManager.removeItem(atPath: path + suffix) }
            }
        }
        for (index, step) in plan.steps.enumerated() {
            let next = directory.appendingPathComponent(".\(storeURL.deletingPathExtension().lastPathComponent).tern-step\(index + 1)-\(UUID().uuidString.prefix(8)).sqlite").path
            temporaries.append(next)
            logger.info("migrating", metadata: ["from": "\(step.source.versionName)", "to": "\(step.destination.versionName)", "mapping": "\(step.origins.joined(separator: ", "))"])
            let result: String
            do {
                if let (report, path) = try Self.applyInPlace(step, from: current, working: next, isOriginal: current == store) {
                    reports.append(report)
                    result = path
                } else {
                    reports.append(try Migrator.migrate(step, from: current, to: next, options: options, logger: logger))
                    result = next
                }
            } catch let error as SQLiteError {
                throw MigrationError.io(error.description, path: next)
            }
            if current != store && current != result {
                for suffix in ["", "-wal", "-shm"] { try? fileManager.removeItem(atPath: current + suffix) }
            }
            current = result
        }
        guard current != store else {
            return Report(plan: plan, steps: [], destination: store, backup: nil, duration: ContinuousClock.now - started)
        }
        try Self.place(current, at: finalPath, keepingOriginalAt: backup)
        return Report(plan: plan, steps: reports, destination: finalPath, backup: backup, duration: ContinuousClock.now - started)
    }

    /// Tries a lightweight step as schema changes. The original store is never altered: its
    /// first step works on a copy made with `VACUUM INTO` (which reads pages, not rows, and takes
    /// in rows that live only in a `-wal`); later steps alter the previous temporary store.
    /// Returns nil when the step must be copied instead, else the report and the store now at the
    /// destination version.
    static func applyInPlace(_ step: MigrationStep, from current: String, working next: String, isOriginal: Bool) throws -> (StepReport, String)? {
        guard let statements = LightweightInPlace.statements(for: step) else { return nil }
        let started = ContinuousClock.now
        let target = isOriginal ? next : current
        if isOriginal {
            let reader = try ReadOnlyStore(path: current)
            try reader.connect().execute("VACUUM INTO \(quoteLiteral(next))")
        }
        let connection = try Connection(path: target, configuration: .init(mode: .readWrite))
        guard try LightweightInPlace.apply(statements, step: step, to: connection) else {
            try connection.close()
            if isOriginal {
                for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: next + suffix) }
            }
            return nil
        }
        try connection.setJournalMode(.wal)
        try connection.close()
        var report = StepReport()
        report.appliedInPlace = statements
        report.verified.append("the store's tables and columns equal the destination layout")
        report.duration = ContinuousClock.now - started
        return (report, target)
    }

    /// `Store.sqlite` → `Store~.sqlite`, Core Data's name for the pre-migration copy.
    public static func backupPath(for store: String) -> String {
        let url = URL(fileURLWithPath: store)
        let base = url.deletingPathExtension().lastPathComponent + "~"
        return url.deletingLastPathComponent().appendingPathComponent(url.pathExtension.isEmpty ? base : "\(base).\(url.pathExtension)").path
    }

    /// Puts the migrated store in place so that at every instant a complete store is at `path`:
    /// the original's WAL is checkpointed into its main file, the original gets a second name
    /// (a hard link) as the backup, then the migrated store is renamed over `path` in one atomic
    /// step. A crash before the rename leaves the original; after it, the migrated store.
    static func place(_ migrated: String, at path: String, keepingOriginalAt backup: String?) throws {
        let fileManager = FileManager.default
        if let backup {
            do {
                let original = try Connection(path: path, configuration: .init(mode: .readWrite))
                try original.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                try original.close()
            } catch let error as SQLiteError {
                throw MigrationError.io("cannot checkpoint the original before replacing it: \(error.message)", path: path)
            }
            do {
                try fileManager.linkItem(atPath: path, toPath: backup)
            } catch {
                try fileManager.copyItem(atPath: path, toPath: backup)
            }
        }
        guard rename(migrated, path) == 0 else {
            throw MigrationError.io("cannot move the migrated store into place: \(String(cString: strerror(errno)))", path: path)
        }
        // The original's journal files belong to the backup now, or to nothing.
        for suffix in ["-wal", "-shm"] { try? fileManager.removeItem(atPath: path + suffix) }
    }
}

/// Why the default process stopped; the original store is untouched in every case.
public enum MigrationError: Error, CustomStringConvertible {
    case noVersionMatches(closest: String?, differences: [String], store: String)
    case destinationExists(String)
    case io(String, path: String)

    public var description: String {
        switch self {
        case .noVersionMatches(let closest, let differences, let store):
            "\(store): no version of the model wrote this store" + (closest.map { "; the closest, \($0), differs: " + differences.joined(separator: "; ") } ?? "")
        case .destinationExists(let path):
            "\(path): already exists; Tern never overwrites a store (move it away first)"
        case .io(let message, let path):
            "\(path): \(message)"
        }
    }
}
