import Foundation
import TernModel
import TernStore
import TernMapping
import Logging
import TernSQLite

/// Runs migration steps between stores at given paths. The source is only ever read.
public enum Migrator {
    /// Migrates the store at `source` through `step` into a new store at `destination`, which
    /// must not exist. On failure the partial destination is removed and the source is untouched.
    @discardableResult
    ///
    /// - Parameter externalData: where values stored outside the stores are found and new files go
    ///   (default: the source's folder, and the destination's).
    public static func migrate(
        _ step: MigrationStep, from source: String, to destination: String,
        options: MigrationOptions = MigrationOptions(), logger: Logger = .ternDefault,
        externalData: ExternalDataFolders? = nil, resume: Bool = false
    ) throws -> StepReport {
        try migrate(
            StepPlan(step, registry: options.registry), from: source, to: destination, options: options, logger: logger,
            externalData: externalData, resume: resume)
    }

    /// Runs a step as planned.
    static func migrate(
        _ plan: StepPlan, from source: String, to destination: String, options: MigrationOptions, logger: Logger,
        externalData: ExternalDataFolders?, resume: Bool, startChecks: StartChecks? = nil, keptScansHold: Bool = false
    ) throws -> StepReport {
        let reader = try ReadOnlyStore(path: source)
        do {
            let connection: Connection
            if resume, FileManager.default.fileExists(atPath: destination), try Self.hasSchema(destination) {
                connection = try Connection(path: destination, configuration: .init(mode: .readWrite))
            } else {
                if resume { StoreMigration.remove(destination) }  // cut before its schema was committed
                // The store keeps its identity: object URIs an app saved (x-coredata://UUID/…) go on
                // naming its objects, as after Core Data's own migration.
                let uuid = try StoreMetadata.read(storeAt: source, countingRows: false).uuid.flatMap(UUID.init(uuidString:)) ?? UUID()
                connection = try StoreFile.create(at: destination, model: plan.step.destination, uuid: uuid)
            }
            if let extraPages = options.extraPages, let used = try connection.pragma("page_count")?.int64 {
                try connection.setPragma("max_page_count", .integer(used + Int64(extraPages)))
            }
            // A store finished by an earlier run gets no work tables back (and is not attached to).
            if try StepWorkspace.isCompleted(connection) {
                try connection.close()
                var report = StepReport()
                report.verified.append("finished by an earlier run")
                return report
            }
            let migrator = try StepMigrator(
                plan: plan, connection: connection, sourceAttachURI: reader.attachPath,
                externalData: externalData ?? ExternalDataFolders(source: source, destination: destination),
                options: options, logger: logger, startChecks: startChecks, keptScansHold: keptScansHold)
            try migrator.run()
            try connection.checkpointWAL()
            try connection.close()
            return migrator.report
        } catch {
            if !(resume && StoreMigration.isResumable(error)) {
                StoreMigration.remove(destination)
            }
            throw error
        }
    }

    /// Whether a partly written step store got as far as its schema (created in one transaction).
    private static func hasSchema(_ path: String) throws -> Bool {
        guard let connection = try? Connection(path: path, configuration: .init(mode: .readOnly)) else { return false }
        return (try? connection.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'Z_METADATA'")) == .integer(1)
    }
}
