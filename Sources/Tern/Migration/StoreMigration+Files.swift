import Foundation
import TernMapping
import TernModel
import TernSQLite
import TernStore
import TernPlanning
import TernDurability
import TernExecution

/// The files a run leaves and takes away: its record, its step stores, carried external data.
extension StoreMigration {
    /// A crash right after the migrated store was renamed into place leaves the record behind;
    /// the store is at its target then, and the record can go (under the lock, taken only then).
    static func removeFinishedRecord(for finalPath: String) throws {
        let manifest = MigrationRun.path(for: finalPath)
        guard let run = try MigrationRun.load(at: manifest), run.completed == run.steps.count,
            let last = run.stepFiles.last, !FileManager.default.fileExists(atPath: last)
        else { return }
        // Killed after the swap: finish its clean-up under the lock (which a kill leaves behind).
        let lock = try StoreLock(store: finalPath)
        defer { lock.release() }
        for file in run.stepFiles { StoreFiles.removeStepStore(file) }
        try? FileManager.default.removeItem(atPath: manifest)
    }

    /// Removes an unfinished migration into `finalPath`: its record, its step stores, and the
    /// external data files it carried.
    public static func discardUnfinished(into finalPath: String) throws {
        let lock = try StoreLock(store: finalPath)
        defer { lock.release() }
        let manifest = MigrationRun.path(for: finalPath)
        if let run = try? MigrationRun.load(at: manifest) {
            removeCarriedFiles(into: finalPath, output: run.output, source: run.store, stepFiles: run.stepFiles)
            for file in run.stepFiles { StoreFiles.removeStepStore(file) }
        }
        try? FileManager.default.removeItem(atPath: manifest)
    }

    static func isDiskFull(_ error: any Error) -> Bool {
        (error as? SQLiteError)?.code.primary == .SQLITE_FULL
    }

    /// The full-disk error: the directory, the files that hold the work so far, and their sizes,
    /// and what a step needs: the store and the external data files it reads in or writes out
    /// (attachments decoded into a small store take their own size in it).
    static func diskFull(beside finalPath: String, kept files: [String], source: String) -> MigrationError {
        let size = { (path: String) in try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int }
        var external = 0
        let folder = ExternalBinaryData.folder(forStore: source)
        for name in (try? FileManager.default.subpathsOfDirectory(atPath: folder)) ?? [] {
            external += size(folder + "/" + name) ?? 0
        }
        return MigrationError.diskFull(
            directory: URL(fileURLWithPath: finalPath).deletingLastPathComponent().path,
            keptFiles: files.compactMap { file in size(file).map { (URL(fileURLWithPath: file).lastPathComponent, $0) } },
            sourceBytes: size(source) ?? 0, externalBytes: external)
    }

    /// Removes the external data files a run carried beside its output, its backup, or (in
    /// place) the original — never anything else someone put there. Before the step stores'
    /// folders go: they are how new files are recognised.
    static func removeCarriedFiles(into finalPath: String, output: String?, source: String, stepFiles: [String]) {
        let original = ExternalBinaryData.folder(forStore: source)
        let steps = stepFiles.map(ExternalBinaryData.folder(forStore:))
        if let output {
            ExternalDataCarrier.removeCarried(from: ExternalBinaryData.folder(forStore: output), sources: [original] + steps)
        } else {
            ExternalDataCarrier.removeCarried(from: ExternalBinaryData.folder(forStore: backupPath(for: finalPath)), sources: [original])
            ExternalDataCarrier.removeCarried(from: original, sources: steps)
        }
    }

    /// Where step `index` of `run` finds values stored outside the stores — the original's
    /// folder and every step store's (a later step may copy a reference an earlier one wrote) —
    /// and where it writes new files: its own store's folder.
    static func externalData(of run: MigrationRun, from store: String, step index: Int) -> ExternalDataFolders {
        var folders = ExternalDataFolders(
            lookup: [ExternalBinaryData.folder(forStore: store)] + run.stepFiles.map(ExternalBinaryData.folder(forStore:)),
            newFiles: ExternalBinaryData.folder(forStore: run.stepFiles[index]))
        folders.absent = Set(run.absentExternalFiles ?? [])
        return folders
    }

    /// Removes a store file with its `-wal`, `-shm` and `-journal`, if they exist.
    public static func remove(_ path: String) { StoreFiles.remove(path) }
}
