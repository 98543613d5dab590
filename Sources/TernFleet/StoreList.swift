import Foundation
import Tern
import TernCommands

/// The stores a fleet plan names: a glob's matches or a list file's lines, as absolute paths,
/// without tern's own files and without a file named twice.
enum StoreList {
    /// The stores, and what was left out with the reason.
    struct Listing {
        var stores: [String] = []
        var leftOut: [(path: String, reason: String)] = []
    }

    /// The files a shell-style pattern matches (`/data/users/*/App.sqlite`).
    static func matching(_ pattern: String) throws -> [String] {
        var found = glob_t()
        defer { globfree(&found) }
        let status = glob(pattern, 0, nil, &found)
        guard status == 0 || status == GLOB_NOMATCH else {
            throw TernError(.io, "cannot list the stores the pattern matches (glob error \(status))", path: pattern)
        }
        return (0..<Int(found.gl_pathc)).compactMap { found.gl_pathv[$0].map { String(cString: $0) } }
    }

    /// The paths of a list file: one per line; blank lines and `#` comments skipped.
    static func read(_ listFile: String) throws -> [String] {
        guard let text = try? String(contentsOfFile: listFile, encoding: .utf8) else {
            throw FileManager.default.fileExists(atPath: listFile)
                ? TernError(.badInput, "not a UTF-8 text file", path: listFile) : TernError(.missingInput, "no such list", path: listFile)
        }
        return text.split(separator: "\n", omittingEmptySubsequences: true).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// `paths` as stores: absolute and normalised, sorted; tern's own files left out (a pattern
    /// over a fleet migrated before matches its backups), and a file reached by two names (a
    /// symbolic or hard link) listed once, so no two tasks can take it for two stores.
    static func stores(_ paths: [String]) -> Listing {
        var listing = Listing()
        var seen: [String: String] = [:]  // device and inode → the path kept
        for path in Set(paths.map { URL(fileURLWithPath: $0).standardizedFileURL.path }).sorted() {
            if let reason = ternsOwnFile(path) {
                listing.leftOut.append((path, reason))
                continue
            }
            var info = stat()
            if stat(path, &info) == 0 {
                let identity = "\(info.st_dev):\(info.st_ino)"
                if let first = seen[identity] {
                    listing.leftOut.append((path, "the same file as \(first) (a link to it)"))
                    continue
                }
                seen[identity] = path
            }
            listing.stores.append(path)
        }
        return listing
    }

    /// Why `path` is one of the files tern keeps beside a store rather than a store, or nil.
    static func ternsOwnFile(_ path: String) -> String? {
        let url = URL(fileURLWithPath: path)
        let name = url.lastPathComponent
        if name.hasPrefix("."), name.contains(".tern-") { return "a working file of tern (a step store, lock, lease or run record)" }
        if url.deletingPathExtension().lastPathComponent.hasSuffix("~") {
            return "a backup tern or Core Data kept of a store before migrating it (NAME~.sqlite)"
        }
        if ["-wal", "-shm", "-journal"].contains(where: name.hasSuffix) { return "a journal file of SQLite, part of the store beside it" }
        return nil
    }
}
