import Foundation
import TernPlanning

/// A store file's identity (device and inode: a store replaced by another file is another file)
/// and the marks every write leaves on it: its size, modification and change times. A commit
/// writes the main file (rollback journal) or a `-wal` that reaches the main file only by a
/// checkpoint, so the main file as it was and no `-wal` frames mean no commit — provided the
/// file had been still for a while when its state was taken: a write in the same tick of the
/// file system's clock as the last one would leave the same times (git's "racily clean" files).
package struct StoreFileState: Codable, Equatable, Sendable {
    /// Seconds and nanoseconds, as `stat` gives them.
    struct Time: Codable, Equatable, Sendable {
        var seconds: Int64
        var nanoseconds: Int64

        init(_ time: timespec) {
            seconds = Int64(time.tv_sec)
            nanoseconds = Int64(time.tv_nsec)
        }
    }

    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: Time
    var changed: Time

    /// How long the file must have been still before its state proves anything.
    static let stillFor: Int64 = 2

    package init?(of path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = Time(info.st_mtim)
        changed = Time(info.st_ctim)
    }

    func isSameFile(as other: StoreFileState) -> Bool { device == other.device && inode == other.inode }

    /// Whether the file had been neither written nor changed for `stillFor` seconds by `clock`.
    package func isStill(by clock: WallClock) -> Bool {
        Int64(clock.now().timeIntervalSince1970) - max(modified.seconds, changed.seconds) > Self.stillFor
    }

    /// Whether the store at `path` has no committed frames waiting in a `-wal`.
    package static func hasNoWALFrames(_ path: String) -> Bool {
        let wal = StoreFileState(of: path + "-wal")
        return wal == nil || wal?.size == 0
    }
}
