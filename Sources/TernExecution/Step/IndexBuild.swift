import Synchronization
import TernLoop
import TernSQLite
import TernPlanning
import TernDurability

/// The destination's indexes, made on a connection of their own, each committed on its own.
///
/// With a second worker the build begins beside the last validation and verification, on a
/// thread of its own, and their scans take only the cores it leaves (`besideIndexBuild`): the
/// largest index's sort is the longest single piece of an all-SQL step, so it starts as early as
/// it can and is never starved (measured on the 4M-object benchmark: at the lowest priority
/// itself, starved by verification's scans, it ended 0.4 s later). The store is in WAL
/// mode, so neither waits for the other. Once verification ends the build makes the index it is
/// making (rolling it back threw the work away, 0.23 s of a 2.4 s run) and starts no other;
/// `completeAll` then makes the rest — so a build that failed (a unique index over repeated
/// values) costs nothing, and `completeAll` reports the failure. A stop request rolls back the
/// index at once.
///
/// Every index is made on this one connection, beside verification or not: the store's header
/// counts the changes of each connection that writes in turn, so one worker's run and two
/// workers' give the same file only when the same connections write in the same order.
final class IndexBuild {
    private let cancelled = Flag()
    private let draining = Flag()
    private let ended = Flag()
    private var thread: OSThread?
    private let shared: Shared
    private let statements: [String]

    /// What asks the building thread to stop, or to start nothing more.
    private final class Flag: Sendable {
        let flag = Atomic<Bool>(false)
        var isSet: Bool { flag.load(ordering: .relaxed) }
        func set() { flag.store(true, ordering: .relaxed) }
    }

    /// The build's connection. `@unchecked Sendable`: the building thread uses it until it is
    /// joined, the owner only after.
    private final class Shared: @unchecked Sendable {
        let connection: Connection
        init(_ connection: Connection) { self.connection = connection }
    }

    /// Opens the build's connection to the store at `path`, with `threads` sorting threads and
    /// `shouldStop` interrupting it; with `beside`, starts building `statements` (each made only
    /// if missing) on a thread of its own.
    init(store path: String, statements: [String], threads: Int, beside: Bool, shouldStop: @escaping @Sendable () -> Bool) throws {
        self.statements = statements
        let connection = try Connection(path: path, configuration: .init(mode: .readWrite))
        let cancelled = cancelled
        try connection.interrupt(when: { shouldStop() || cancelled.isSet })
        _ = try connection.setPragma("threads", .integer(Int64(threads)))
        // As the step's writer commits: a crash loses at most an index, which a resume makes.
        try connection.syncNormally()
        let shared = Shared(connection)
        self.shared = shared
        guard beside else { return }
        let draining = draining
        let ended = ended
        thread = try OSThread {
            defer { ended.set() }
            do {
                for statement in statements where !shouldStop() && !cancelled.isSet && !draining.isSet {
                    try shared.connection.execute(statement)
                }
            } catch {
                // Stopped, or failed: `completeAll` makes the rest, and reports a failure itself.
            }
        }
    }

    deinit {
        stop()
        try? shared.connection.close()
    }

    /// Whether the indexes are being built beside at this moment, on a thread of their own.
    var isBuildingBeside: Bool { thread != nil && !ended.isSet }

    /// Waits for the build beside to end by itself.
    func waitForEnd() {
        thread.take()?.join()
    }

    /// Waits for the index being made beside, if any, and starts no other.
    func finishCurrent() {
        draining.set()
        thread.take()?.join()
    }

    /// Makes every index still missing, on the calling thread; throws what a statement throws.
    func completeAll() throws {
        finishCurrent()
        for statement in statements { try shared.connection.execute(statement) }
    }

    /// Stops the build beside at once (the index it was making is rolled back; those made stay)
    /// and waits for its thread.
    func stop() {
        cancelled.set()
        thread.take()?.join()
    }
}
