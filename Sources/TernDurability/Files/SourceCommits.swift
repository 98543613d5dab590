import Foundation
import TernSQLite
import TernStore
import TernPlanning

/// Whether anyone has committed to the source since the run began, known without reading it
/// again, from evidence taken before the start digest:
/// - SQLite's `data_version`, read on one connection held to delivery, changes whenever another
///   connection — in any process, in any journal mode — commits to the store, and not for this
///   connection's own checkpoint (the in-place swap's hold makes one on it);
/// - a WAL store nobody had open (no `-shm`, so Tern reads it through an immutable URI and
///   cannot hold a connection that counts): a commit lands in a `-wal` first, and reaches the
///   main file only by a checkpoint, which changes its size or modification time. The main
///   file as it was and no `-wal` with frames in it mean no commit.
///
/// Either way the file at the store's path must still be the one seen at the start. Only
/// evidence that stood still proves anything: when it moved, or cannot be read (a store read
/// through a private copy, a call that failed), delivery reads the source's digest and compares
/// it as before, so a commit that changed nothing is not a refusal.
package final class SourceCommits {
    private enum Evidence {
        case counter(Connection, atStart: SQLiteValue)
        case wholeFile(StoreFileState)
    }

    private let evidence: Evidence
    private let file: StoreFileState

    /// The connection the counter is read on, if there is one; in place, the swap's hold takes
    /// its lock here.
    package var connection: Connection? {
        if case .counter(let connection, _) = evidence { return connection }
        return nil
    }

    /// Takes the evidence: in place, a read-write connection's counter (the swap will lock the
    /// store on it); otherwise a read-only connection's, or for a store Tern reads immutable, the
    /// main file's state. Nil when the store is read through a copy or cannot be opened.
    package init?(store: String, inPlace: Bool, clock: WallClock) {
        guard let file = StoreFileState(of: store) else { return nil }
        let access = inPlace ? ReadOnlyStore.Access.inPlace : try? ReadOnlyStore.access(toStoreAt: store)
        switch access {
        case .inPlace:
            guard
                let connection = try? Connection(path: store, configuration: .init(mode: inPlace ? .readWrite : .readOnly, busyTimeout: .seconds(2))),
                let version = try? connection.pragma("data_version")
            else { return nil }
            evidence = .counter(connection, atStart: version)
        case .immutable:
            guard file.isStill(by: clock) else { return nil }
            evidence = .wholeFile(file)
        case .snapshot, nil:
            return nil
        }
        self.file = file
    }

    /// True when no one else has committed to the store since the evidence was taken, and the
    /// same file is still at `store`.
    package func noneSinceStart(store: String) -> Bool {
        guard let now = StoreFileState(of: store), now.isSameFile(as: file) else { return false }
        switch evidence {
        case .counter(let connection, let atStart):
            return (try? connection.pragma("data_version")) == atStart
        case .wholeFile(let then):
            return now == then && StoreFileState.hasNoWALFrames(store)
        }
    }

    package func close() { try? connection?.close() }
}
