import Foundation
import Synchronization

/// SIGINT and SIGTERM ask a running migration to stop at its next batch boundary, after that
/// batch's commit; a second signal ends the process at once (which checkpoints also survive).
///
/// A closed standard output (`tern migrate --progress json | head -2`) does the same: SIGPIPE is
/// ignored (`TernCommandLine.main`), and the failed write asks the run to stop.
enum StopRequest {
    private static let requested = Atomic<Bool>(false)
    private static let outputClosed = Atomic<Bool>(false)

    static let isRequested: @Sendable () -> Bool = { requested.load(ordering: .relaxed) }

    /// Whether the stop was asked for because standard output closed.
    static var becauseOutputClosed: Bool { outputClosed.load(ordering: .relaxed) }

    /// Standard output can no longer be written: stop at the next batch boundary.
    static func outputWasClosed() {
        outputClosed.store(true, ordering: .relaxed)
        requested.store(true, ordering: .relaxed)
    }

    static func install() {
        // A blocked signal mask survives exec: a parent that blocked these (test runners and
        // some supervisors do) would leave a stop request pending forever.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        sigaddset(&unblocked, SIGINT)
        sigaddset(&unblocked, SIGTERM)
        sigprocmask(SIG_UNBLOCK, &unblocked, nil)
        for number in [SIGINT, SIGTERM] {
            signal(number) { number in
                StopRequest.requested.store(true, ordering: .relaxed)
                signal(number, SIG_DFL)  // the next one is not caught
            }
        }
    }
}
