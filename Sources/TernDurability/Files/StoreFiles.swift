import Foundation
import TernStore
import TernPlanning

/// A store file and its companions, as a run makes and removes them: the one place that knows a
/// store is more than one file.
package enum StoreFiles {
    /// Removes a store file with its `-wal`, `-shm` and `-journal`, if they exist.
    package static func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Removes a step's store and the support folder of the files it wrote.
    package static func removeStepStore(_ path: String) {
        remove(path)
        remove(SourceScanCache.path(forStepStore: path))
        try? FileManager.default.removeItem(atPath: ExternalBinaryData.supportFolder(forStore: path))
    }

    /// Whether anything is at `path`, a dangling link included.
    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

}
