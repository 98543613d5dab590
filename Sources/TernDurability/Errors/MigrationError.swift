import Foundation
import TernModel
import TernStore
import TernMapping
import TernSQLite
import TernPlanning

/// Why the migration process could not go on — the store, its files, other processes, the
/// run's record, a policy — for whoever runs it (what the data itself fails is
/// `MigrationFailure`). The original store is untouched in every case.
public enum MigrationError: Error, CustomStringConvertible {
    case noVersionMatches(closest: String?, differences: [String], store: String)
    case destinationExists(String)
    /// With `--resume`, the output exists and its metadata names this run's inputs: an earlier
    /// run finished it (or was killed as it finished); it is not taken as this run's.
    case finishedEarlier(String)
    /// A file appeared at the output or backup path while the migration ran; the migrated store
    /// is kept for `--resume`.
    case deliveryBlocked(String)
    case io(String, path: String)
    /// A migration of this store was started and did not finish.
    case unfinished(MigrationRun, manifest: String)
    /// `--resume` was asked for, but the unfinished migration had other inputs: `differences`
    /// names each one that changed.
    case resumeMismatch(MigrationRun, manifest: String, differences: [String])
    /// Another process has the store open (in place, it would go on using the old file).
    /// `resumable`: the migrated store is kept for `--resume` once the store is free.
    case openElsewhere(store: String, processes: [String], resumable: Bool)
    /// `--no-data-loss`, and an inferred step would drop values (`DataLoss`); nothing was kept.
    case dataLoss(step: StepIdentity, dropped: [DroppedData])
    /// The disk filled up; the work so far is kept in `keptFiles` (name, bytes) for `--resume`.
    /// A step needs about `sourceBytes` (the store) and `externalBytes` (its external data files).
    case diskFull(directory: String, keptFiles: [(String, Int)], sourceBytes: Int, externalBytes: Int)
    /// The disk or a lock failed after the work began (`cause`: an I/O error, a busy database):
    /// the work so far is kept, with its record at `record`, for `--resume`.
    case stoppedResumably(cause: any Error, record: String)
    /// The source changed while it was migrated; nothing was swapped, the work is discarded.
    case changedDuringMigration(store: String, changes: [String])
    /// Another `tern` is migrating into this store now (`StoreLock`).
    case inUse(store: String, holder: String)
    /// `--live` found a live migration of the store under way (its record, at `phase`), and no
    /// `--resume`: the store goes on logging its changes until one continues or aborts it.
    case liveUnfinished(store: String, phase: String)
    /// `--live` caught up, but the app wrote faster than the rounds applied, for the whole wait:
    /// no cut-over with a backlog. The store keeps logging, for `--resume`.
    case liveBehind(store: String, entries: Int64, seconds: Double, waited: Double)
    /// The store holds rows Core Data never writes (`StoreAnomalies`); nothing was written.
    case sourceAnomalies([StoreAnomaly], store: String)
    /// A migration policy (or the manager hook) threw: which one, in which entity mapping, over
    /// which source object when there is one, and what it said.
    case policyFailed(policy: String, mapping: String, sourceKey: Int64?, message: String)

    /// Runs a policy's hook, naming the policy, the mapping and the source key in what it
    /// throws. Tern's own errors pass through as they are, and so do the disk's and the locks'
    /// (running again may help); anything else — the policy's own errors, its SQL's — is the
    /// policy's failure.
    package static func inPolicy<Result>(_ policy: String, mapping: EntityMapping, sourceKey: Int64? = nil, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as TernError {
            // The policy's own words, or the API's about what it did (a key its source object
            // lacks): kept, with where it happened, and its kind (the exit status).
            let place = "the migration policy \(policy) failed in entity mapping \(mapping.name)\(sourceKey.map { " over source object \($0)" } ?? "")"
            throw error.message.hasPrefix("the migration policy ") ? error : TernError(error.kind, "\(place): \(error.message)", path: error.path)
        } catch let error
            where error is MigrationError || error is MigrationFailure || error is MigrationInterrupted
            || (error is SQLiteError && FailureKind.isResumable(error))
        {
            throw error
        } catch {
            throw MigrationError.policyFailed(policy: policy, mapping: mapping.name, sourceKey: sourceKey, message: "\(error)")
        }
    }

    /// One "  - item" line per item, for errors that list what they found.
    private static func bulleted(_ items: [some CustomStringConvertible]) -> String {
        items.map { "  - \($0)" }.joined(separator: "\n")
    }

    private static func mebibytes(_ bytes: Int) -> String {
        String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }

    public var description: String {
        switch self {
        case .noVersionMatches(let closest, let differences, let store):
            "\(store): no version of the model wrote this store"
                + (closest.map { "; the closest, \($0), differs: " + differences.joined(separator: "; ") } ?? "")
        case .destinationExists(let path):
            "\(path): already exists; Tern never overwrites it (move it away first)"
        case .finishedEarlier(let path):
            "\(path): already exists, and its metadata says an earlier run migrated it from these very inputs: if that run was killed as it finished, "
                + "the migration is complete. Tern never takes an existing store as its own: move it away to migrate again"
        case .deliveryBlocked(let path):
            "\(path): appeared while the migration ran, and Tern never overwrites a file: move it away, then \(RecoveryWording.resume) (the migrated store is kept)"
        case .io(let message, let path):
            "\(path): \(message)"
        case .unfinished(let run, _):
            "\(run.store): an earlier migration to \(run.target) did not finish (\(run.completed) of \(run.steps.count) steps done): \(RecoveryWording.resume) to continue it, or \(RecoveryWording.restart) to start over"
        case .liveUnfinished(let store, let phase):
            "a live migration of \(store) is under way (stopped while \(phase)); the store logs every change until it ends: continue it with tern migrate --live --resume, or remove it with tern migrate --abort"
        case .liveBehind(let store, let entries, let seconds, let waited):
            String(
                format:
                    "%@: the app wrote faster than Tern caught up: %lld changes (%.1f s) behind after %.0f s; no cut-over with a backlog, nothing swapped. The store keeps logging: run again with --resume when it writes less, or tern migrate --abort",
                store, entries, seconds, waited)
        case .inUse(let store, let holder):
            "\(store): in use by another tern migration (\(holder)); wait for it to finish (or stop it), then run again"
        case .sourceAnomalies(let anomalies, let store):
            "\(store): the store holds rows Core Data never writes, which a migration could not carry as they are:\n"
                + Self.bulleted(anomalies)
                + "\nRepair or delete those rows (tern check lists them) and run again; nothing was written"
        case .resumeMismatch(let run, let manifest, let differences):
            "\(run.store): the unfinished migration cannot be resumed, its inputs changed since it began:\n"
                + Self.bulleted(differences)
                + "\nTo migrate the store as it is now, \(RecoveryWording.restart) (its record is \(manifest))"
        case .openElsewhere(let store, let processes, let resumable):
            "\(store): open in another process (\(processes.isEmpty ? "a writer holds its lock" : processes.joined(separator: ", "))); "
                + "Tern does not replace a store an app is using, since the app would go on writing to the old file. Quit it, then run the same command"
                + (resumable ? ": \(RecoveryWording.resume) (the migrated store is kept)" : " again")
        case .dataLoss(let step, let dropped):
            "step \(step) would drop data that the store holds, and \(RecoveryWording.refuseDataLoss) refuses that:\n"
                + Self.bulleted(dropped)
                + (dropped.contains { $0.outsideModel != true }
                    ? "\nKeep those properties in the new version (or rename them with a renaming identifier) and to-many relationships to-many, or write a mapping model that says where they go"
                    : "")
                + (dropped.contains { $0.outsideModel == true }
                    ? "\nTables outside the model (persistent history, an app's own) are not carried by a step that copies the store: export what you need first, or migrate without \(RecoveryWording.refuseDataLoss) to leave them behind"
                    : "")
        case .stoppedResumably(let cause, let record):
            "\(cause)\nThe work so far is kept (its record is \(record)): once the cause is fixed, \(RecoveryWording.resume) "
                + "to continue where it stopped, or \(RecoveryWording.restart) to start over"
        case .diskFull(let directory, let kept, let sourceBytes, let externalBytes):
            "\(directory): the disk is full. The work so far is kept there in hidden files ("
                + kept.map { "\($0.0), \(Self.mebibytes($0.1))" }.joined(separator: "; ")
                + "). Free space (a step needs about as much as the store and its external data, "
                + (externalBytes > 0
                    ? "\(Self.mebibytes(sourceBytes + externalBytes)): the store \(Self.mebibytes(sourceBytes)) and \(Self.mebibytes(externalBytes)) of external data files"
                    : Self.mebibytes(sourceBytes))
                + ", and its indexes more), then \(RecoveryWording.resume) "
                + "to continue where it stopped, or \(RecoveryWording.restart) to remove those files and start over"
        case .policyFailed(let policy, let mapping, let key, let message):
            "the migration policy \(policy) failed in entity mapping \(mapping)\(key.map { " over source object \($0)" } ?? ""): \(message)"
        case .changedDuringMigration(let store, let changes):
            "\(store): the store changed while it was being migrated, so the result would miss those changes:\n"
                + Self.bulleted(changes)
                + "\nThe migrated copy was discarded. Stop whatever writes to the store, then run the migration again"
        }
    }
}
