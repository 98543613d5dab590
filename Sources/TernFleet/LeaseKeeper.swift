import TernCommands
import Foundation
import Synchronization
import TernLoop

/// Renews the leases a task holds, every third of their length, on a thread of its own: a
/// migration busy in one long statement still keeps its lease.
final class LeaseKeeper: Sendable {
    private let renewal = Renewal()
    private let thread: Mutex<OSThread?>

    init(interval: Double) throws {
        let renewal = self.renewal
        thread = Mutex(try OSThread(stackSize: 1 << 20) { renewal.run(every: interval) })
    }

    func hold(_ lease: StoreLease) { renewal.leases.withLock { $0[lease.path] = lease } }

    func drop(_ lease: StoreLease) { _ = renewal.leases.withLock { $0.removeValue(forKey: lease.path) } }

    /// Stops renewing, and returns once the thread has ended.
    func stop() {
        renewal.stopped.open()
        thread.withLock { $0.take() }?.join()
    }

    /// What the renewing thread shares with the keeper: the leases held, and whether to stop.
    private final class Renewal: Sendable {
        let leases = Mutex<[String: StoreLease]>([:])
        /// Opened by `stop()`: the renewing thread's wait ends at once.
        let stopped = Latch()

        func run(every interval: Double) {
            // By the clock, not by turns of the loop: a process paused for minutes renews at once.
            var due = Date().timeIntervalSince1970 + interval
            while !stopped.wait(seconds: min(1, max(0, due - Date().timeIntervalSince1970))) {
                guard Date().timeIntervalSince1970 >= due else { continue }
                due = Date().timeIntervalSince1970 + interval
                for lease in leases.withLock({ Array($0.values) }) { lease.renew() }
            }
        }
    }
}
