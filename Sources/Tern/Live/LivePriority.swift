import Foundation

/// How much of the machine a live run takes from the app it migrates under.
public enum LivePriority: String, Sendable, CaseIterable {
    /// Every thread of the process at Linux's `SCHED_IDLE` until the cut-over: the kernel runs
    /// Tern only on a core nothing else wants, so the app's commits never wait for a core
    /// Tern holds (measured: the app's p99 commit latency 4.9 ms beside a copy at normal
    /// priority, 3.9 ms at nice 19, 1.3 ms at `SCHED_IDLE`). An app that keeps every core busy
    /// starves the run instead, until `closeTimeout` stops it resumably.
    case idle
    /// Tern's threads as they are: the copy finishes sooner, and the app's commits wait.
    case normal
}

/// Sets the scheduling policy of every thread of the process (`/proc/self/task`); threads
/// started later inherit their creator's. Linux only: elsewhere nothing changes.
enum ThreadPolicy {
    /// `SCHED_IDLE` for every thread.
    static func idle() {
        set(5)
    }

    /// `SCHED_OTHER` again. The kernel refuses it to an unprivileged process whose
    /// `RLIMIT_NICE` is 0; then the threads stay idle, and false says so.
    @discardableResult
    static func normal() -> Bool {
        set(0)
    }

    @discardableResult
    private static func set(_ policy: Int32) -> Bool {
        #if os(Linux)
            guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return false }
            var parameters = sched_param(sched_priority: 0)
            var all = true
            for thread in threads.compactMap({ pid_t($0) }) where sched_setscheduler(thread, policy, &parameters) != 0 && errno != ESRCH {
                all = false
            }
            return all
        #else
            return false
        #endif
    }
}
