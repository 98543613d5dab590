import TernStore
import TernPlanning

/// A run's hold on its store, taken before anything else: one tern per store (a second run,
/// `--resume` or `--restart` waits its turn on the lock), and, in place, no app with the store
/// open, which would write on into the backup. Released when the run ends, however it ends.
package struct StoreOwnership {
    let lock: StoreLock
    /// Who else has the store open, watched until delivery (in place only). Made before every
    /// connection of the run, so its descriptors outlive them.
    package let users: StoreUsers?
    /// SQLite's count of commits to the source, from before the run reads its digest: at
    /// delivery, a count that stood still proves the source unchanged without reading it again.
    package let commits: SourceCommits?

    package init(store: String, finalPath: String, inPlace: Bool, clock: WallClock) throws {
        lock = try StoreLock(store: finalPath)
        users = inPlace ? StoreUsers(store: store) : nil
        if let users, case let others = users.others(), !others.isEmpty {
            lock.release()
            throw MigrationError.openElsewhere(store: store, processes: others, resumable: false)
        }
        commits = SourceCommits(store: store, inPlace: inPlace, clock: clock)
    }

    /// Lets the store go: the commit counter's connection, the users' watch, then the lock.
    package func release() {
        commits?.close()
        withExtendedLifetime(users) {}
        lock.release()
    }
}
