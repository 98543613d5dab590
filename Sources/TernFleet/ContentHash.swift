import TernDigest
import Foundation
import Tern
import TernCommands

/// The SHA-256 of a model or mapping file as it is on disk, so every task of a fleet can prove it
/// runs the migration the manifest was planned with.
enum ContentHash {
    /// Hex SHA-256 of the file at `path`, or of a directory's regular files in name order (each
    /// one's relative path, size and bytes), links followed. Read in 1 MiB pieces.
    static func of(_ path: String) throws -> String {
        var hash = SHA256()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw TernError(.missingInput, "no such file", path: path)
        }
        if isDirectory.boolValue {
            // Names as they appear under the folder; contents wherever a link leads, so a changed
            // file behind a link is a changed model too.
            let root = URL(fileURLWithPath: path).standardizedFileURL
            let prefix = root.path.hasSuffix("/") ? root.path : root.path + "/"
            var files: [(relative: String, target: String)] = []
            for case let url as URL in FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) ?? FileManager.DirectoryEnumerator() {
                let name = url.standardizedFileURL.path
                var info = stat()
                guard name.hasPrefix(prefix), stat(name, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
                files.append((String(name.dropFirst(prefix.count)), name))
            }
            for file in files.sorted(by: { $0.relative < $1.relative }) {
                hash.update(data: Data("\(file.relative)\u{0}".utf8))
                try add(file.target, to: &hash)
            }
        } else {
            try add(path, to: &hash)
        }
        return hash.finalize().map { String(format: "%02x", $0) }.joined()
    }

    private static func add(_ file: String, to hash: inout SHA256) throws {
        guard let handle = FileHandle(forReadingAtPath: file) else { throw TernError(.io, "cannot read", path: file) }
        defer { try? handle.close() }
        var size = 0
        while let piece = try handle.read(upToCount: 1 << 20), !piece.isEmpty {
            hash.update(data: piece)
            size += piece.count
        }
        hash.update(data: Data("\u{0}\(size)\u{0}".utf8))
    }
}
