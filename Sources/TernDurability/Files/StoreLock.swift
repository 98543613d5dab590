import Foundation
import TernModel
import TernStore
import TernMapping
import TernPlanning

/// One `tern` per store for the length of a migration: an exclusive `flock` on a lock file beside
/// the store (`.NAME.tern-lock`), holding the owner's pid, host and start time for the message a
/// second `tern` gets. The kernel drops the lock when its process ends however it ends, so a lock
/// left by a killed run is taken over at once; the file itself is removed by its owner.
///
/// On NFS, Linux implements `flock` with the server's byte-range locks (NFSv4, or v3 with lockd):
/// it holds across machines where those work, and not on a mount with `nolock`.
public final class StoreLock {
    /// The lock file's path (`StoreLock.path(for:)` of the store).
    public let path: String
    /// The locked file; -1 once released.
    private var descriptor: Int32

    /// The lock file for a store.
    public static func path(for store: String) -> String {
        let url = URL(fileURLWithPath: store)
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tern-lock").path
    }

    /// Takes the lock for `store`, or throws `MigrationError.inUse` naming its holder.
    public init(store: String) throws {
        path = Self.path(for: store)
        var locked: Int32 = -1
        while locked < 0 {
            // Never through a link: a planted one would have tern truncate its target.
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
            guard descriptor >= 0 else {
                let reason = errno == ELOOP ? "it is a symbolic link (remove it)" : String(cString: strerror(errno))
                throw TernError(.io, "cannot create the lock file: \(reason)", path: path)
            }
            var info = stat()
            guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                close(descriptor)
                throw TernError(.io, "the lock file is not a regular file (remove it)", path: path)
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let holder = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
                close(descriptor)
                throw MigrationError.inUse(store: store, holder: holder.isEmpty ? "another tern" : holder)
            }
            // The holder before us may have removed the file after we opened it: lock the file
            // that is at the path now.
            if let opened = FileIdentity(descriptor: descriptor), opened == FileIdentity(path: path) {
                locked = descriptor
            } else {
                close(descriptor)
            }
        }
        descriptor = locked
        let host = ProcessInfo.processInfo.hostName
        let since = ISO8601DateFormatter().string(from: Date())
        let text = "pid \(getpid()) on \(host) since \(since)\n"
        _ = ftruncate(locked, 0)
        _ = text.withCString { pwrite(locked, $0, strlen($0), 0) }
    }

    /// Removes the lock file and releases the lock.
    public func release() {
        guard descriptor >= 0 else { return }
        unlink(path)
        close(descriptor)
        descriptor = -1
    }

    deinit {
        release()
    }
}
