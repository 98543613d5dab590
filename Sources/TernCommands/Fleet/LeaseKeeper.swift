import Foundation
import Synchronization

/// Renews the leases a task holds, every third of their length, on a thread of its own: a
/// migration busy in one long statement still keeps its lease.
final class LeaseKeeper: Sendable {
    private let leases = Mutex<[String: StoreLease]>([:])
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(interval: Double) {
        let thread = Thread { [self] in
            // By the clock, not by turns of the loop: a process paused for minutes renews at once.
            var due = Date().timeIntervalSince1970 + interval
            while !stopped.load(ordering: .relaxed) {
                usleep(100_000)
                guard Date().timeIntervalSince1970 >= due else { continue }
                due = Date().timeIntervalSince1970 + interval
                for lease in leases.withLock({ Array($0.values) }) { lease.renew() }
            }
            finished.signal()
        }
        thread.start()
    }

    func hold(_ lease: StoreLease) { leases.withLock { $0[lease.path] = lease } }

    func drop(_ lease: StoreLease) { _ = leases.withLock { $0.removeValue(forKey: lease.path) } }

    /// Stops renewing, and returns once the thread has ended.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        finished.wait()
    }
}
