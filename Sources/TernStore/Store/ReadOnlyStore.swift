import Foundation
import TernModel
import TernSQLite

/// Opens a store for reading without creating, changing or removing any file beside it.
///
/// A plain read-only open of a WAL-mode database creates a `-shm` file next to it when none exists
/// (and as root even in a read-only directory). Tern never leaves marks on a source store, so:
/// - a store in rollback-journal mode, or whose `-shm` exists (someone has it open), is opened
///   read-only in place;
/// - a WAL-mode store with neither `-wal` nor `-shm` has all its rows in the main file and no
///   writer (a writer keeps both files while it lives), so it is opened `immutable`, which needs
///   no `-shm`;
/// - a WAL-mode store with a `-wal` but no `-shm` (a Core Data store copied as files, rows in the
///   `-wal`) is copied with its `-wal` into a private temporary directory and read there.
public final class ReadOnlyStore: Sendable {
    /// The store as the user named it.
    public let path: String
    /// What connections open: the store, an `immutable` URI for it, or the private copy.
    private let readPath: String
    /// Where the store is read from when it had to be copied; removed when this object goes.
    private let snapshotDirectory: URL?

    /// How the store is read, for logs and tests.
    public enum Access: Sendable, Equatable { case inPlace, immutable, snapshot }
    /// How this store is read, decided once when it is opened.
    public let access: Access

    /// Decides how to read the store at `path`, copying it first when it must (see above). Throws
    /// `TernError` when the store is missing, is a directory, is not SQLite, or cannot be copied.
    public init(path: String) throws {
        let fileManager = FileManager.default
        guard fileManager.fileExists(atPath: path) else {
            throw TernError(.missingInput, "no such store", path: path)
        }
        var info = stat()
        if stat(path, &info) == 0 {
            switch info.st_mode & S_IFMT {
            case S_IFREG: break
            case S_IFDIR: throw TernError(.badInput, "is a directory, not a store file (give the .sqlite file inside it)", path: path)
            // Reading a FIFO would wait for a writer forever; a device is no store either.
            default: throw TernError(.badInput, "is not a regular file (a FIFO, device or socket), not a store", path: path)
            }
        }
        self.path = path
        access = try Self.access(toStoreAt: path)
        switch access {
        case .immutable:
            readPath = Self.uri(path, query: "immutable=1")
            snapshotDirectory = nil
        case .snapshot:
            let directory = fileManager.temporaryDirectory.appendingPathComponent("tern-snapshot-\(UUID().uuidString)")
            let copy = directory.appendingPathComponent("store.sqlite").path
            do {
                // Private: the copy is the store's data, whoever may read the store itself.
                try fileManager.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                try fileManager.copyItem(atPath: path, toPath: copy)
                try fileManager.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
            } catch {
                try? fileManager.removeItem(at: directory)
                throw TernError(.io, "cannot copy the store and its -wal to read them: \(error.localizedDescription)", path: path)
            }
            readPath = copy
            snapshotDirectory = directory
        case .inPlace:
            readPath = path
            snapshotDirectory = nil
        }
    }

    /// How a store at `path` is read, decided without reading it through SQLite or copying it:
    /// immutable for a WAL store nobody has open (no `-wal`, no `-shm`), a copy for one with a
    /// `-wal` but no `-shm`, in place otherwise. Throws when it is not an SQLite file.
    public static func access(toStoreAt path: String) throws -> Access {
        let fileManager = FileManager.default
        switch (try isWALMode(path), fileManager.fileExists(atPath: path + "-wal"), fileManager.fileExists(atPath: path + "-shm")) {
        case (true, false, false): return .immutable
        case (true, true, false): return .snapshot
        default: return .inPlace
        }
    }

    deinit {
        if let snapshotDirectory {
            try? FileManager.default.removeItem(at: snapshotDirectory)
        }
    }

    /// What `ATTACH DATABASE` takes to read the store from another connection (a `file:` URI
    /// or the snapshot's path); valid while this object lives.
    public var attachPath: String {
        readPath.hasPrefix("file:") ? readPath : Self.uri(readPath, query: "mode=ro")
    }

    /// Opens a read-only connection. Connections must not outlive this object, which owns the
    /// snapshot they may read from.
    public func connect() throws -> Connection {
        try Connection(path: readPath, configuration: .init(mode: .readOnly))
    }

    /// Reads the SQLite header: bytes 18 and 19 are 2 for a WAL-mode database. A file that does
    /// not start with SQLite's magic string is refused here, naming the file.
    package static func isWALMode(_ path: String) throws -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw TernError(.io, "cannot open the file for reading", path: path)
        }
        defer { try? handle.close() }
        let header = try handle.read(upToCount: 20) ?? Data()
        // An empty file is an empty database to SQLite (and reported as a store without tables).
        if !header.isEmpty, !header.starts(with: Data("SQLite format 3\0".utf8).prefix(header.count)) || header.count < 16 {
            throw TernError(.badInput, "is not an SQLite database (it does not start with SQLite's header)", path: path)
        }
        guard header.count == 20 else { return false }
        return header[18] == 2 && header[19] == 2
    }

    /// A `file:` URI for `path` with every byte outside the unreserved set percent-encoded.
    package static func uri(_ path: String, query: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~/")
        return "file:" + (absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute) + "?" + query
    }
}
