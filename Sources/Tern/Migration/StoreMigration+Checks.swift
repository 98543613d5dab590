import Foundation
import TernMapping
import TernModel
import TernSQLite
import TernStore
import TernPlanning
import TernDurability
import TernExecution

/// The checks a run makes of its inputs: the store is the one planned (before anything is
/// written), and refers to no missing file (a resume's, at once; a new run's, with its other
/// reads of the source, in `StartChecks`).
extension StoreMigration {
    /// Every file the source refers to is a regular file in its folder (exit 7 naming the first
    /// that is not): a resume's check, before it goes on.
    func checkExternalData(_ plan: Plan, tolerating absent: Set<String> = []) throws {
        guard let first = plan.steps.first else { return }
        try ExternalDataCarrier.checkReferences(
            in: StoreFile.resolvingLinks(store), model: first.source,
            folders: [ExternalBinaryData.folder(forStore: StoreFile.resolvingLinks(store))], tolerating: absent, shouldStop: options.shouldStop)
    }

    /// A new run's check of the files the source refers to, before the first pass: a file in no
    /// folder is what Core Data reads as no value — carried as the reference it is, and listed
    /// (refused with --strict, exit 65); a name that is not a regular file is refused (exit 7).
    func absentExternalData(_ plan: Plan) throws -> (anomalies: [StoreAnomaly], files: Set<String>) {
        guard let first = plan.steps.first, first.source.entities.contains(where: { $0.attributes.contains(where: \.allowsExternalStorage) }) else {
            return ([], [])
        }
        let store = StoreFile.resolvingLinks(self.store)
        let found = try ExternalDataCarrier.absentReferences(
            in: store, model: first.source, folders: [ExternalBinaryData.folder(forStore: store)], shouldStop: options.shouldStop)
        if options.refuseDataLoss, !found.anomalies.isEmpty { throw MigrationError.sourceAnomalies(found.anomalies, store: self.store) }
        return found
    }

    /// A plan runs on a store with the schema and version hashes it was made from (a saved plan
    /// may be run on another store of that version); the policies it names are checked with its
    /// decisions (`MigrationPlan.stepPlans(checkedAgainst:path:)`).
    func checkPlanned(_ plan: Plan, store: String) throws {
        let (metadata, signature) = try Self.shape(ofStoreAt: store)
        if let origin = plan.origin, Plan.Origin.schema(metadata: metadata, signature: signature) != origin.storeSchema {
            throw TernError(
                .badInput,
                "the store's tables or version hashes are not those the plan was made from (\(plan.storeVersion) of \(origin.modelName)): "
                    + "plan the migration again", path: store)
        }
        // The first step's version is the store's: its hashes are the store's, or its layout is
        // the store's tables (a plan's versions are values like any other, and could be edited).
        if let first = plan.steps.first {
            let hashes = metadata.hasCoreDataHashes && first.source.hasVersionHashes(metadata.versionHashes)
            let differences = VersionMatch.differences(of: first.source, rules: first.sourceRules, from: metadata, signature: signature)
            guard hashes || differences.isEmpty else {
                throw TernError(
                    .badInput,
                    "the plan's first step reads version \(first.source.versionName)\(first.sourceRules == .earlierTern ? " as an earlier Tern laid it out" : ""), "
                        + "but the store is not of it: \(differences.joined(separator: "; "))", path: store)
            }
        }
        // What planning checks of the store, checked again of this store: a saved plan may be
        // run on another store of its schema, or on this one after the app changed it.
        guard let first = plan.steps.first else { return }
        try SchemaNameCheck.check(plan.steps, store: store)
        try NothingCarried.check(plan.steps, store: store, storeVersion: first.source)
        try AppSchemaObjects.check(plan.steps, store: store)
        _ = try StoreFile.appMetadata(ofStoreAt: store)
        if let index = try InPlaceRehearsal.stepsToCopy(plan.steps, store: store).first {
            throw TernError(
                .badInput,
                "step \(plan.steps[index].identity) was planned in place, but its schema changes do not give the new version's tables on this store "
                    + "(it has tables or columns the model does not lay out): plan the migration again", path: store)
        }
    }

    /// The store's metadata and tables, read without leaving files beside it.
    static func shape(ofStoreAt store: String) throws -> (StoreMetadata, LayoutSignature) {
        try StoreMetadata.reading(store) {
            let reader = try ReadOnlyStore(path: store)
            let connection = try reader.connect()
            return (try StoreMetadata.read(from: connection, path: store, countingRows: false), try LayoutSignature(connection: connection))
        }
    }

    /// The plan an unfinished migration into `finalPath` recorded (nil when there is none, or
    /// its record predates recorded plans): what `--resume` runs again.
    public static func unfinishedPlan(into finalPath: String) throws -> Plan? {
        try TernFailure.wrapping { try MigrationRun.loadForResume(at: MigrationRun.path(for: StoreFile.resolvingLinks(finalPath)))?.plan }
    }
}
