import Foundation
import Synchronization
import TernLoop
import TernMapping
import TernSQLite
import TernStore
import TernPlanning
import TernDurability

/// The source's side of verification's values scans — each object's key and values as its
/// expressions give them, over the source alone — read while the pass writes. An SQL writer
/// keeps one core busy; this reads on the other, once the start checks are done with it, and
/// waits at the run's `CoreGate` while a policy's workers need both.
/// Verification then reads only what is left: the store's side, and any scan this did not reach.
///
/// It proves no less: a scan is the very query verification builds, taken only if built again
/// identically, and it reads nothing but the source: its connection may read the attached
/// source only (`Connection.restrictReads(to:)`), so a query that reads a table of the store
/// being written — even one the source has a table of the same name for — cannot be prepared
/// there, and is left to verification. The source is the one the run proves unchanged from its start
/// to its delivery, so when its side is read does not change what it says.
final class EarlyExpectations {
    private final class Shared: Sendable {
        let results = Mutex<[SQLFragment: ScanResult]>([:])
        let cancelled = Atomic<Bool>(false)
    }

    private let shared = Shared()
    private var thread: OSThread?
    /// How many scans it was given.
    let planned: Int

    /// Starts reading `queries` on a thread of its own once `waitForTurn` returns, waiting at
    /// `gate` while the pass needs every core; each scan read is kept in `cache` at once, so a
    /// run killed at any moment leaves what it read to its resume.
    init(
        _ queries: [SQLFragment], keepingIn cache: SourceScanCache, sourceAttachURI: String, externalData: ExternalDataFolders,
        waitForTurn: @escaping @Sendable () -> Void,
        gate: CoreGate, shouldStop: @escaping @Sendable () -> Bool
    ) throws {
        planned = queries.count
        let shared = self.shared
        let stopNow: @Sendable () -> Bool = { shouldStop() || shared.cancelled.load(ordering: .relaxed) }
        let stop: @Sendable () -> Bool = {
            gate.pass(unless: stopNow)
            return stopNow()
        }
        thread = try OSThread {
            // Only the cores the pass leaves idle: its workers and writer come first.
            OSThread.yieldCoresToOthers()
            waitForTurn()
            for query in queries where !stop() {
                // One scan at a time: each is kept as soon as it is read, and a query this
                // database cannot prepare (it names the store's tables) fails alone.
                guard
                    let result = try? ParallelScans.run(
                        [query], store: ":memory:", attach: sourceAttachURI, workers: 1, externalData: externalData,
                        preparing: {
                            try SQLCompiler.prepare($0, externalData: $1)
                            try $0.restrictReads(to: "src")
                        }, shouldStop: stop
                    ).first
                else { continue }
                shared.results.withLock { $0[query] = result }
                // A cache that cannot be written costs a resume a read of the source, no more.
                try? cache.keep([query: result])
            }
        }
    }

    deinit { _ = finish() }

    /// Stops reading (a scan under way is interrupted and dropped) and returns what was read.
    func finish() -> [SQLFragment: ScanResult] {
        shared.cancelled.store(true, ordering: .relaxed)
        thread.take()?.join()
        return shared.results.withLock { $0 }
    }
}
