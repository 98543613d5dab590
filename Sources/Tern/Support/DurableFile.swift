import Foundation

/// Files Tern writes itself (not through SQLite) that must survive a power cut whole or not at
/// all: the run record, new external data files.
enum DurableFile {
    /// Writes `bytes` under `path`, whole and durable: into `path.tern-partial`, `fsync`, renamed
    /// over `path`, then the directory `fsync`ed so the new name survives too. A kill or a power
    /// cut leaves the old file or the new one, never a part; a failed `fsync` is never retried
    /// as if the bytes were safe ("fsyncgate"): the partial file is removed and the error thrown.
    ///
    /// - Throws: `TernError(.io)` naming the operation, the file and the system's error.
    static func write(_ bytes: [UInt8], to path: String, what: String) throws {
        let partial = path + ".tern-partial"
        let fail = { (operation: String, code: Int32, file: String) in
            TernError(.io, "cannot write \(what): \(operation) failed: \(String(cString: strerror(code)))", path: file)
        }
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
        let directory = open(URL(fileURLWithPath: path).deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw fail("open directory", errno, path) }
        defer { close(directory) }
        guard flush(directory) == 0 else { throw fail("directory fsync", errno, path) }
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
