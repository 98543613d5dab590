import Foundation
import TernModel

/// Finds other processes that have a store open, so an in-place migration never swaps a store
/// an app is using: the app would go on reading and writing the old file, now the backup, and
/// everything it wrote after the swap would be lost to the migrated store.
///
/// Two ways, since neither sees everything:
/// - `/proc/*/fd`: any process on this machine with the store, its `-wal` or its `-shm` open,
///   idle or not, in any journal mode; only processes whose `/proc` entry this user may read.
/// - SQLite's own POSIX locks (`F_GETLK`): every connection in WAL mode holds a shared lock on
///   the `-shm` file's DMS byte while it is open, and a connection in rollback-journal mode holds
///   locks on the main file while in a transaction. The kernel reports a holder's pid whoever it
///   belongs to; over NFS the pid may be a client's on another machine.
///
/// Closing any descriptor of a file drops every POSIX lock this process holds on it, SQLite's
/// included, so the descriptors opened to ask about locks stay open until this object goes:
/// let it outlive every connection to the store.
public final class StoreUsers {
    /// The store's path; its `-wal` and `-shm` are looked at too.
    public let store: String
    /// Descriptors opened to query locks, by path (the latest for each); all closed in `deinit`.
    private var descriptors: [String: Int32] = [:]
    private var opened: [Int32] = []

    /// A finder for users of the store at `store`; nothing is opened until `others()` asks.
    public init(store: String) {
        self.store = store
    }

    deinit {
        for descriptor in opened { close(descriptor) }
    }

    /// "pid N (NAME)" for each other process using the store, or "pid N" when only its lock shows.
    public func others() -> [String] {
        let files = Set([store, store + "-wal", store + "-shm"].compactMap(FileIdentity.init(path:)))
        var pids = Set(Self.openers(of: files))
        pids.formUnion([lockHolder(of: store + "-shm", range: 128, length: 1), lockHolder(of: store, range: 0x4000_0000, length: 512)].compactMap { $0 })
        pids.remove(getpid())
        return pids.sorted().map { pid in
            let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            return name.map { "pid \(pid) (\($0))" } ?? "pid \(pid)"
        }
    }

    /// The pids of processes with one of `files` open, from `/proc/PID/fd`.
    private static func openers(of files: Set<FileIdentity>) -> [pid_t] {
        guard !files.isEmpty, let processes = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return processes.compactMap { name -> pid_t? in
            guard let pid = pid_t(name), pid != getpid(),
                let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
            else { return nil }
            let holds = descriptors.contains { descriptor in
                FileIdentity(path: "/proc/\(pid)/fd/\(descriptor)").map(files.contains) ?? false
            }
            return holds ? pid : nil
        }
    }

    /// The pid of a process holding a POSIX lock that conflicts with a write lock on
    /// `range..<range+length` of `path`, if any. Locks of this process never conflict with it.
    private func lockHolder(of path: String, range: Int, length: Int) -> pid_t? {
        // A file removed and created again since it was opened is opened again.
        var descriptor = descriptors[path] ?? -1
        if descriptor < 0 || FileIdentity(descriptor: descriptor) != FileIdentity(path: path) {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            descriptors[path] = descriptor
            opened.append(descriptor)
        }
        var query = flock()
        query.l_type = Int16(F_WRLCK)
        query.l_whence = Int16(SEEK_SET)
        query.l_start = off_t(range)
        query.l_len = off_t(length)
        guard fcntl(descriptor, F_GETLK, &query) == 0, query.l_type != Int16(F_UNLCK) else { return nil }
        return query.l_pid
    }
}

/// A file as the kernel knows it (device and inode), whatever name reaches it.
package struct FileIdentity: Hashable, Codable {
    let device: UInt64
    let inode: UInt64

    package init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    package init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    private init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
