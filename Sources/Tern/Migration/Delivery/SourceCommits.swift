import Foundation
import TernSQLite
import TernStore

/// Whether anyone has committed to the source since the run began, known without reading it
/// again. SQLite's `data_version`, read on one connection held from before the start digest to
/// delivery, changes whenever another connection — in any process, in any journal mode —
/// commits to the store, and not for this connection's own checkpoint (the in-place swap's
/// hold makes one on it). The file at the store's path must also still be the one opened.
///
/// Only a counter that stood still proves anything: when it moved, or cannot be read (the
/// store is read through an immutable URI or a private copy, or a call failed), delivery reads
/// the source's digest and compares it as before, so a commit that changed nothing is not a
/// refusal.
final class SourceCommits {
    /// The connection the counter is read on; in place, the swap's hold takes its lock here.
    let connection: Connection
    private let atStart: SQLiteValue
    private let file: FileIdentity

    /// Opens the store and reads its counter: in place for writing (the swap will lock it on this
    /// connection); otherwise read-only, and nil when Tern reads such a store through an
    /// immutable URI or a copy (a WAL store with no `-shm`), or it cannot be opened.
    init?(store: String, inPlace: Bool) {
        guard let file = FileIdentity(of: store), inPlace || (try? ReadOnlyStore(path: store).access) == .inPlace,
            let connection = try? Connection(path: store, configuration: .init(mode: inPlace ? .readWrite : .readOnly, busyTimeout: .seconds(2))),
            let version = try? connection.pragma("data_version")
        else { return nil }
        self.connection = connection
        self.atStart = version
        self.file = file
    }

    /// True when no connection but this one has committed to the store since it was opened, and
    /// the same file is still at `store`.
    func noneSinceStart(store: String) -> Bool {
        guard FileIdentity(of: store) == file, let now = try? connection.pragma("data_version") else { return false }
        return now == atStart
    }

    func close() { try? connection.close() }

    /// A file's device and inode: a store replaced by another file (a restore, a copy moved
    /// into place) is another file even where its counter would match.
    private struct FileIdentity: Equatable {
        let device: UInt64
        let inode: UInt64

        init?(of path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }
}
