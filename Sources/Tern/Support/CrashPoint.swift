import Foundation

/// Fault injection for crash tests: when the environment variable `TERN_CRASH_AT` names a point,
/// the process kills itself there with SIGKILL, as a power cut would, leaving whatever is on disk.
/// The points are the windows a random kill rarely hits: between a step's last commit and its
/// record, and inside the final swap.
enum CrashPoint: String {
    case stepCommitted = "step-committed"
    case backupLinked = "backup-linked"
    case renamed = "renamed"

    private static let target = ProcessInfo.processInfo.environment["TERN_CRASH_AT"]

    func reach() {
        if Self.target == rawValue {
            kill(getpid(), SIGKILL)
        }
    }
}
