import Foundation
import TernModel
import TernDurability
import TernStore

/// Where a live migration keeps its work, in one folder beside the store (`NAME-tern-live`):
/// its record, the mirror of the live store and the migrated store. Removed when the run ends
/// in a cut-over or an abort; kept for `--resume` otherwise.
struct LiveFiles {
    let store: String
    var folder: String { store + "-tern-live" }
    var record: String { folder + "/record.json" }
    /// The private copy of the live store the migrated store is made from, kept up by rounds.
    var mirror: String { folder + "/mirror.sqlite" }
    var migrated: String { folder + "/migrated.sqlite" }

    /// Whether the copy of the mirror into the migrated store finished: the store is there and
    /// the offline run's record is gone.
    var copyFinished: Bool {
        FileManager.default.fileExists(atPath: migrated) && !FileManager.default.fileExists(atPath: MigrationRun.path(for: migrated))
    }

    func makeFolder() throws {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch CocoaError.fileWriteFileExists {
            return
        } catch {
            throw TernError(.io, "cannot create the live migration's folder: \(error.localizedDescription)", path: folder)
        }
        try DurableFile.syncDirectory(containing: folder, what: "the live migration's folder")
    }

    func removeFolder() {
        try? FileManager.default.removeItem(atPath: folder)
    }
}

/// What a live run has done, saved at every phase boundary so a resume continues from there.
struct LiveRecord: Codable {
    enum Phase: String, Codable {
        /// The triggers are being created (all or none of them exist).
        case capturing
        /// The live store is being copied into the mirror.
        case mirroring
        /// The mirror is being migrated (an offline run with its own record).
        case copying
        /// Rounds keep the migrated store up with the live store.
        case catchingUp
        /// The swap began: the store at its path may already be the migrated one.
        case cuttingOver
    }

    var phase: Phase
    /// The tables whose changes are logged.
    var tables: [LiveCapture.Table] = []
    /// What the capture put in the live store, by name: the change log and its triggers (what
    /// `tern migrate --abort` removes).
    var log: String?
    var triggers: [String] = []
    /// The log's last entry when the mirror was copied.
    var start: Int64 = 0
    /// What the plan decides (`MigrationPlan.contentDigest`): a resume runs the same plan.
    var plan: String = ""
    /// The migrated store's file, recorded as the cut-over begins: the store's path names it
    /// once the swap happened, and only then is a cut run's tidying all that is left.
    var migrated: FileIdentity?
    /// The system's boot while rounds ran: the private stores are not synced then
    /// (`LiveCatchUp`), so after a reboot they are copied again rather than trusted.
    var boot: String?

    /// This boot's identity (Linux's `boot_id`); nil where the system has none.
    static var currentBoot: String? {
        (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    static func read(_ files: LiveFiles) throws -> LiveRecord? {
        guard let data = FileManager.default.contents(atPath: files.record) else { return nil }
        do {
            return try JSONDecoder().decode(LiveRecord.self, from: data)
        } catch {
            throw TernError(.badInput, "the live migration's record cannot be read (\(error)): remove it with tern migrate --abort", path: files.record)
        }
    }

    func save(_ files: LiveFiles) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try DurableFile.write([UInt8](try encoder.encode(self)), to: files.record, what: "the live migration's record")
    }
}
