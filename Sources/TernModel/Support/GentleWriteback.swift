import Foundation
import TernSQLite

/// Writes a file's dirty pages to disk a little at a time, while another program on the same
/// disk commits. Tern's own writes mostly sit in the page cache until it syncs; one `fsync` of
/// a hundred megabytes then keeps the disk busy, and every commit of an app writing the same
/// disk waits for its own `fsync` behind it (measured: the app's p99 commit latency 4×). So,
/// while a live migration runs (`during(_:)`), `DurableFile.syncFile` first sends the file out
/// a mebibyte at a time with Linux's `sync_file_range`, resting three times as long as each
/// piece took, so Tern's writeback has the disk at most a quarter of the time; the `fsync`
/// that follows finds little left. Process-wide: a live run is one per process.
package enum GentleWriteback {
    /// Runs `body` with gentle writeback for every `DurableFile.syncFile` of the process, and
    /// with the SQLite connections opened meanwhile syncing nothing themselves
    /// (`Connection.deferringSyncs`): their files reach the disk through those gentle syncs,
    /// or through the kernel's own writeback, instead of one burst per checkpoint.
    package static func during<Result>(_ body: () throws -> Result) rethrows -> Result {
        try Connection.deferringSyncs(body)
    }

    /// Sends the pages of the file at `path` to the disk gently, without the `fsync` (and the
    /// drive cache flush it asks for, which every other program's commit then waits behind):
    /// a later sync finds little left. A no-op outside `during(_:)`.
    ///
    /// - Throws: `TernError(.io)` when the system reports a failed write.
    package static func writeOut(_ path: String, what: String) throws {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw TernError(.io, "cannot write \(what): open failed: \(String(cString: strerror(errno)))", path: path) }
        defer { close(descriptor) }
        let code = trickle(descriptor)
        guard code == 0 else { throw TernError(.io, "cannot write \(what): writeback failed: \(String(cString: strerror(code)))", path: path) }
    }

    /// Sends the dirty pages of the open file out gently when a live run asked for it; a
    /// no-op otherwise, and where the system has no `sync_file_range`. Returns the system's
    /// error, 0 when none.
    @discardableResult
    static func trickle(_ descriptor: Int32) -> Int32 {
        // Active exactly while `during(_:)` runs: the syncs it defers are the ones sent gently.
        guard Connection.syncsAreDeferred, let syncRange = Self.syncFileRange else { return 0 }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return errno }
        let piece: Int64 = 1 << 20
        var offset: Int64 = 0
        while offset < Int64(status.st_size) {
            let started = ContinuousClock.now
            // SYNC_FILE_RANGE_WAIT_BEFORE | _WRITE | _WAIT_AFTER: the piece is on the disk
            // when it returns, without the device cache flush an fsync asks for.
            guard syncRange(descriptor, offset, piece, 7) == 0 else { return errno }
            let took = ContinuousClock.now - started
            // A clean piece returns in microseconds: only real writeback earns a rest.
            if took > .microseconds(200) { Thread.sleep(forTimeInterval: (took * 3).seconds) }
            offset += piece
        }
        return 0
    }

    /// Linux's `sync_file_range`, which Swift's Glibc module does not declare.
    private static let syncFileRange: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32)? = {
        #if os(Linux)
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sync_file_range") else { return nil }
            return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32).self)
        #else
            return nil
        #endif
    }()
}
