import Foundation
import Synchronization

/// Asks a running migration to stop at its next batch boundary, after that batch's commit.
///
/// For the process (`process`), SIGINT and SIGTERM ask it; a second signal ends the process at
/// once (which checkpoints also survive). A closed standard output (`tern migrate --progress json
/// | head -2`) does the same: SIGPIPE is ignored (`TernCommandLine.main`), and the failed write
/// asks the run to stop. An in-process run (`TernCommandLine.run`) has a request of its own.
package final class StopRequest: Sendable {
    private let requested = Atomic<Bool>(false)
    private let outputClosed = Atomic<Bool>(false)

    /// The process's: the one signals set.
    static let process = StopRequest()

    package var isRequested: @Sendable () -> Bool { { [self] in requested.load(ordering: .relaxed) } }

    /// Whether the stop was asked for because standard output closed.
    var becauseOutputClosed: Bool { outputClosed.load(ordering: .relaxed) }

    /// Standard output can no longer be written: stop at the next batch boundary.
    func outputWasClosed() {
        outputClosed.store(true, ordering: .relaxed)
        requested.store(true, ordering: .relaxed)
    }

    /// Makes SIGINT and SIGTERM set this request; only for `process`, and only when Tern owns the
    /// process (`TernCommandLine.main`).
    package func installSignalHandlers() {
        guard self === StopRequest.process else { return }
        // A blocked signal mask survives exec: a parent that blocked these (test runners and
        // some supervisors do) would leave a stop request pending forever.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        sigaddset(&unblocked, SIGINT)
        sigaddset(&unblocked, SIGTERM)
        sigprocmask(SIG_UNBLOCK, &unblocked, nil)
        for number in [SIGINT, SIGTERM] {
            signal(number) { number in
                StopRequest.process.requested.store(true, ordering: .relaxed)
                signal(number, SIG_DFL)  // the next one is not caught
            }
        }
    }
}
