import Foundation
import TernSQLite
import TernStore

/// Whether anyone has committed to the source since the run began, known without reading it
/// again, from evidence taken before the start digest:
/// - SQLite's `data_version`, read on one connection held to delivery, changes whenever another
///   connection — in any process, in any journal mode — commits to the store, and not for this
///   connection's own checkpoint (the in-place swap's hold makes one on it);
/// - a WAL store nobody had open (no `-shm`, so Tern reads it through an immutable URI and
///   cannot hold a connection that counts): a commit lands in a `-wal` first, and reaches the
///   main file only by a checkpoint, which changes its size or modification time. The main
///   file as it was and no `-wal` with frames in it mean no commit.
///
/// Either way the file at the store's path must still be the one seen at the start. Only
/// evidence that stood still proves anything: when it moved, or cannot be read (a store read
/// through a private copy, a call that failed), delivery reads the source's digest and compares
/// it as before, so a commit that changed nothing is not a refusal.
final class SourceCommits {
    private enum Evidence {
        case counter(Connection, atStart: SQLiteValue)
        case wholeFile(FileState)
    }

    private let evidence: Evidence
    private let file: FileState

    /// The connection the counter is read on, if there is one; in place, the swap's hold takes
    /// its lock here.
    var connection: Connection? {
        if case .counter(let connection, _) = evidence { return connection }
        return nil
    }

    /// Takes the evidence: in place, a read-write connection's counter (the swap will lock the
    /// store on it); otherwise a read-only connection's, or for a store Tern reads immutable, the
    /// main file's state. Nil when the store is read through a copy or cannot be opened.
    init?(store: String, inPlace: Bool) {
        guard let file = FileState(of: store) else { return nil }
        let access = inPlace ? ReadOnlyStore.Access.inPlace : try? ReadOnlyStore.access(toStoreAt: store)
        switch access {
        case .inPlace:
            guard
                let connection = try? Connection(path: store, configuration: .init(mode: inPlace ? .readWrite : .readOnly, busyTimeout: .seconds(2))),
                let version = try? connection.pragma("data_version")
            else { return nil }
            evidence = .counter(connection, atStart: version)
        case .immutable:
            evidence = .wholeFile(file)
        case .snapshot, nil:
            return nil
        }
        self.file = file
    }

    /// True when no one else has committed to the store since the evidence was taken, and the
    /// same file is still at `store`.
    func noneSinceStart(store: String) -> Bool {
        guard let now = FileState(of: store), now.isSameFile(as: file) else { return false }
        switch evidence {
        case .counter(let connection, let atStart):
            return (try? connection.pragma("data_version")) == atStart
        case .wholeFile(let then):
            let wal = FileState(of: store + "-wal")
            return now == then && (wal == nil || wal?.size == 0)
        }
    }

    func close() { try? connection?.close() }

    /// A file's identity (device and inode: a store replaced by another file is another file
    /// even where its counter would match), size and modification time.
    private struct FileState: Equatable {
        let device: UInt64
        let inode: UInt64
        let size: Int64
        let modified: timespec

        init?(of path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = info.st_mtim
        }

        func isSameFile(as other: FileState) -> Bool { device == other.device && inode == other.inode }

        static func == (a: FileState, b: FileState) -> Bool {
            a.isSameFile(as: b) && a.size == b.size && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
        }
    }
}
