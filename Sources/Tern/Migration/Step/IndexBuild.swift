import Synchronization
import TernLoop
import TernSQLite

/// The destination's indexes, built on a connection and a thread of their own while
/// verification reads the store. An index build of a large table reads it on one core (sorting
/// on helpers), so it leaves a core idle much of the time, and verification's scans take it;
/// the two together end sooner than one after the other (4M objects: 2.2 s against 2.5 s), though
/// verification's own time grows, sharing its cores. The store is in WAL mode, so neither waits
/// for the other: verification reads the rows as the passes left them, and the build adds only
/// indexes, in one transaction. The step's last transaction (`finish`) then finds them made; a
/// build that failed fails the step as `finish` would (a unique index over repeated values), and
/// a stop asked for is an interruption, which `--resume` builds again.
final class IndexBuild {
    /// What the building thread hands over, and what asks it to stop.
    private final class Shared: Sendable {
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let cancelled = Atomic<Bool>(false)
    }

    private let shared = Shared()
    private var thread: OSThread?

    /// Starts building `statements` on the store at `path`, with `threads` sorting threads.
    init(store path: String, statements: [String], threads: Int, shouldStop: @escaping @Sendable () -> Bool) throws {
        let shared = self.shared
        thread = try OSThread {
            let outcome = Result<Void, any Error> {
                let connection = try Connection(path: path, configuration: .init(mode: .readWrite))
                defer { try? connection.close() }
                try connection.interrupt(when: { shouldStop() || shared.cancelled.load(ordering: .relaxed) })
                _ = try connection.setPragma("threads", .integer(Int64(threads)))
                // As the step's writer commits: a crash loses at most this build, which `finish` makes again.
                try connection.execute("PRAGMA synchronous = NORMAL")
                try connection.transaction(.immediate) {
                    for statement in statements { try connection.execute(statement) }
                }
            }
            shared.outcome.withLock { $0 = outcome }
        }
    }

    deinit { cancel() }

    /// Waits for the build to end and throws what stopped it.
    func finish() throws {
        thread.take()?.join()
        try shared.outcome.withLock { $0 }?.get()
    }

    /// Stops the build and waits for its thread: what it had not committed is rolled back.
    func cancel() {
        shared.cancelled.store(true, ordering: .relaxed)
        thread.take()?.join()
    }
}
