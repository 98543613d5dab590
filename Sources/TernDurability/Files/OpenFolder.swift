import Foundation
import Synchronization
import TernPlanning

/// A folder opened once, so each file in it is found by its name alone (`fstatat`, `linkat`)
/// rather than by walking its whole path again: a store carries thousands of external files,
/// and the walks, not the links, were most of their cost.
final class OpenFolder: Sendable {
    let path: String
    private let descriptor: Int32

    /// The folder at `path`, or nil when it cannot be opened as one. Opened as a path only
    /// (`O_PATH`): looking a name up in it takes the folder's search permission, as a whole
    /// path's walk does, not its read permission.
    init?(_ path: String) {
        let descriptor = open(path, Self.pathOnly | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        self.path = path
        self.descriptor = descriptor
    }

    #if os(Linux)
        /// `O_PATH`, which Glibc's header declares only for `_GNU_SOURCE`: the same value on
        /// every Linux architecture Swift runs on.
        private static let pathOnly: Int32 = 0o10000000
    #else
        private static let pathOnly = O_RDONLY
    #endif

    /// The folder at `path`; throws the system's reason when it cannot be opened as one.
    static func opening(_ path: String) throws -> OpenFolder {
        guard let folder = OpenFolder(path) else {
            let code = errno
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        return folder
    }

    deinit { close(descriptor) }

    /// What is at `name` in the folder, a link itself rather than what it points to; nil when
    /// nothing is.
    func status(of name: String) -> stat? {
        var info = stat()
        return fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 ? info : nil
    }

    /// Gives the file `name` of this folder the same name in `other`; returns 0, or the `errno`
    /// of the failure (`EEXIST` when `other` has the name already, `EXDEV` across filesystems).
    func link(_ name: String, into other: OpenFolder) -> Int32 {
        linkat(descriptor, name, other.descriptor, name, 0) == 0 ? 0 : errno
    }
}

/// A folder opened on the first file it receives, and made then if it is not there: a store
/// that refers to no file leaves no empty folder. Shared by the threads that carry files.
final class LazyFolder: Sendable {
    let path: String
    private let folder = Mutex<OpenFolder?>(nil)

    init(_ path: String) { self.path = path }

    /// The folder, made (with its parents) and opened on the first call.
    func opened() throws -> OpenFolder {
        try folder.withLock { opened in
            if let opened { return opened }
            if !FileManager.default.fileExists(atPath: path) {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            }
            let made = try OpenFolder.opening(path)
            opened = made
            return made
        }
    }
}

extension stat {
    /// Whether this is a regular file (never a FIFO, which blocks for ever when opened, a
    /// directory or a link).
    var isRegularFile: Bool { st_mode & S_IFMT == S_IFREG }

    /// Whether `other` is the very same file: one inode on one device.
    func isSameFile(as other: stat) -> Bool { st_dev == other.st_dev && st_ino == other.st_ino }
}
