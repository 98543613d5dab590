import Foundation

/// Files Tern writes itself (not through SQLite) that must survive a power cut whole or not at
/// all: the run record, new external data files.
package enum DurableFile {
    /// Writes `bytes` under `path`, whole and durable: into `path.tern-partial`, `fsync`, renamed
    /// over `path`, then the directory `fsync`ed so the new name survives too. A kill or a power
    /// cut leaves the old file or the new one, never a part; a failed `fsync` is never retried
    /// as if the bytes were safe ("fsyncgate"): the partial file is removed and the error thrown.
    ///
    /// - Throws: `TernError(.io)` naming the operation, the file and the system's error.
    package static func write(_ bytes: [UInt8], to path: String, what: String) throws {
        let partial = path + ".tern-partial"
        let fail = { (operation: String, code: Int32, file: String) in ioError(what, operation, code, file) }
        let descriptor = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw fail("open", errno, partial) }
        var written = 0
        let failure: (String, Int32)? = bytes.withUnsafeBytes { buffer in
            while written < buffer.count {
                let count = Foundation.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    return ("write", errno)
                }
                written += count
            }
            return flush(descriptor) == 0 ? nil : ("fsync", errno)
        }
        close(descriptor)
        if let (operation, code) = failure {
            unlink(partial)
            throw fail(operation, code, partial)
        }
        guard rename(partial, path) == 0 else {
            let code = errno
            unlink(partial)
            throw fail("rename", code, path)
        }
        try syncDirectory(containing: path, what: what)
    }

    /// Makes the bytes of the file at `path` durable (a copy made by someone else's code).
    package static func syncFile(_ path: String, what: String) throws {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw ioError(what, "open", errno, path) }
        defer { close(descriptor) }
        // A failed piece is reported by the fsync that follows.
        GentleWriteback.trickle(descriptor)
        guard flush(descriptor) == 0 else { throw ioError(what, "fsync", errno, path) }
    }

    /// Makes the names in `directory` durable: a rename, link or unlink is only certain to
    /// survive a power cut once its directory is `fsync`ed.
    package static func syncDirectory(_ directory: String, what: String) throws {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ioError(what, "open directory", errno, directory) }
        defer { close(descriptor) }
        guard flush(descriptor) == 0 else { throw ioError(what, "directory fsync", errno, directory) }
    }

    /// `syncDirectory` of the directory holding `path`.
    package static func syncDirectory(containing path: String, what: String) throws {
        try syncDirectory(URL(fileURLWithPath: path).deletingLastPathComponent().path, what: what)
    }

    private static func ioError(_ what: String, _ operation: String, _ code: Int32, _ file: String) -> TernError {
        TernError(.io, "cannot write \(what): \(operation) failed: \(String(cString: strerror(code)))", path: file)
    }

    /// Makes a file's writes durable: `fsync`, or on Apple's systems `F_FULLFSYNC` (their
    /// `fsync` stops at the drive's cache), falling back to `fsync` where a filesystem lacks it.
    private static func flush(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
            if fcntl(descriptor, F_FULLFSYNC) == 0 { return 0 }
        #endif
        return fsync(descriptor)
    }
}
