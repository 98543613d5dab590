import Foundation
import Synchronization

/// SIGINT and SIGTERM ask a running migration to stop at its next batch boundary, after that
/// batch's commit; a second signal ends the process at once (which checkpoints also survive).
enum StopRequest {
    private static let requested = Atomic<Bool>(false)

    static let isRequested: @Sendable () -> Bool = { requested.load(ordering: .relaxed) }

    static func install() {
        for number in [SIGINT, SIGTERM] {
            signal(number) { number in
                StopRequest.requested.store(true, ordering: .relaxed)
                signal(number, SIG_DFL)  // the next one is not caught
            }
        }
    }
}
