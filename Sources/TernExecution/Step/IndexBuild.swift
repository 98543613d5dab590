import Synchronization
import TernLoop
import TernSQLite
import TernPlanning
import TernDurability

/// The destination's indexes, built on a connection and a thread of their own while
/// verification reads the store, at the lowest priority: verification, the proof, keeps its
/// speed, and the build takes the moments its scans leave a core idle. The store is in WAL mode,
/// so neither waits for the other: verification reads the rows as the passes left them, and the
/// build only adds indexes, each committed on its own. Best effort: once verification ends the
/// build makes the index it is making (the cores are then its own: rolling it back threw the
/// work away, 0.23 s of a 2.4 s run) and starts no other; the step's last transaction (`finish`)
/// makes at full priority whatever is missing — so a build starved on a busy host costs at most
/// one index, one that failed (a unique index over repeated values) nothing, and `finish`
/// reports the failure as it always has. A stop request rolls back the index at once.
final class IndexBuild {
    private let cancelled = Flag()
    private let draining = Flag()
    private var thread: OSThread?

    /// What asks the building thread to stop, or to start nothing more.
    private final class Flag: Sendable {
        let flag = Atomic<Bool>(false)
        var isSet: Bool { flag.load(ordering: .relaxed) }
        func set() { flag.store(true, ordering: .relaxed) }
    }

    /// Starts building `statements` (each made only if missing) on the store at `path`, with
    /// `threads` sorting threads, stopping when `shouldStop` returns true.
    init(store path: String, statements: [String], threads: Int, shouldStop: @escaping @Sendable () -> Bool) throws {
        let (cancelled, draining) = (self.cancelled, self.draining)
        thread = try OSThread {
            OSThread.yieldCoresToOthers()
            let stop = { @Sendable in shouldStop() || cancelled.isSet }
            guard let connection = try? Connection(path: path, configuration: .init(mode: .readWrite)) else { return }
            defer { try? connection.close() }
            do {
                try connection.interrupt(when: stop)
                _ = try connection.setPragma("threads", .integer(Int64(threads)))
                // As the step's writer commits: a crash loses at most an index, which `finish` makes.
                try connection.execute("PRAGMA synchronous = NORMAL")
                for statement in statements where !stop() && !draining.isSet { try connection.execute(statement) }
            } catch {
                // Stopped, or failed: `finish` makes the rest, and reports a failure itself.
            }
        }
    }

    deinit { stop() }

    /// Waits for the build to end by itself.
    func waitForEnd() {
        thread.take()?.join()
    }

    /// Waits for the index being made, if any, and starts no other.
    func finishCurrent() {
        draining.set()
        thread.take()?.join()
    }

    /// Stops the build at once (the index it was making is rolled back; those made stay) and
    /// waits for its thread.
    func stop() {
        cancelled.set()
        thread.take()?.join()
    }
}
