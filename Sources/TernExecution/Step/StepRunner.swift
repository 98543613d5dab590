import Foundation
import TernModel
import TernStore
import TernMapping
import Logging
import TernSQLite
import TernPlanning
import TernDurability

/// Runs one planned step from the store at one path into a new store at another, the source
/// only ever read; `StepSequence` runs a plan's steps with it, one after another.
package enum StepRunner {
    /// Runs a step as planned into `destination`, which must not exist unless `resume` takes up
    /// a partly written one. On failure that a resume cannot take up, the partial destination is
    /// removed; the source is untouched either way.
    package static func run(
        _ plan: StepPlan, from source: String, to destination: String, options: MigrationOptions, logger: Logger = .ternDefault,
        externalData: ExternalDataFolders? = nil, resume: Bool = false, startChecks: StartChecks? = nil, keptScansHold: Bool = false
    ) throws -> StepReport {
        let reader = try ReadOnlyStore(path: source)
        do {
            let connection: Connection
            if resume, FileManager.default.fileExists(atPath: destination), try Self.hasSchema(destination) {
                connection = try Connection(path: destination, configuration: .init(mode: .readWrite))
            } else {
                if resume { StoreFiles.remove(destination) }  // cut before its schema was committed
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
            if !(resume && FailureKind.isResumable(error)) {
                StoreFiles.remove(destination)
                SourceScanCache(stepStore: destination).remove()
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
