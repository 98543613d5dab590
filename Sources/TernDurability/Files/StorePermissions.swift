import Foundation
import TernModel
import TernStore
import TernMapping
import TernPlanning

/// Files Tern writes that hold a store's data — outputs, step stores and their journals, the run
/// record, backups, copies of external data — get no more access than the store they come from:
/// a user's private store on a shared server does not become readable by others through its
/// migration.
public enum StorePermissions {
    /// The bits a umask must hold so that what is created for `store` gives group and others at
    /// most what the store gives them: a class that may not read it loses read, write and search;
    /// one that may read but not write loses write. Nil when the store cannot be examined.
    public static func umask(matching store: String) -> mode_t? {
        var info = stat()
        guard stat(store, &info) == 0 else { return nil }
        let mode = info.st_mode & 0o777
        var mask: mode_t = 0
        for (read, write, search) in [(mode_t(0o040), mode_t(0o020), mode_t(0o010)), (0o004, 0o002, 0o001)] {
            if mode & read == 0 { mask |= read | write | search } else if mode & write == 0 { mask |= write }
        }
        return mask
    }

    /// Narrows the process's umask for `store` (adding `umask(matching:)`'s bits to what it
    /// holds) until `body` returns. Process-wide: for a command that migrates one store.
    public static func restricting<Result>(for store: String, _ body: () throws -> Result) rethrows -> Result {
        guard let extra = umask(matching: store) else { return try body() }
        let previous = Foundation.umask(0)
        Foundation.umask(previous | extra)
        defer { Foundation.umask(previous) }
        return try body()
    }
}
