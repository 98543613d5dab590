import Synchronization
import TernLoop
import TernSQLite

/// The destination's indexes, built on a connection and a thread of their own while
/// verification reads the store. The build runs at the lowest priority: verification, the
/// proof, keeps its speed, and the build takes the moments its scans leave a core idle (an
/// index build of a large table reads it on one core and sorts on helpers, so it has such
/// moments of its own too). The store is in WAL mode, so neither waits for the other:
/// verification reads the rows as the passes left them, and the build adds only indexes, in
/// one transaction. The step's last transaction (`finish`) then finds them made — or, the build
/// stopped or failed, makes them as before.
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
            // Verification first: the build takes the cores its scans leave, then goes on alone.
            OSThread.yieldCoresToOthers()
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

    /// Stops the build (what it made is rolled back) and waits for its thread.
    func cancel() {
        shared.cancelled.store(true, ordering: .relaxed)
        thread.take()?.join()
    }
}
