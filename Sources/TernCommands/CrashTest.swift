import Foundation
@_spi(Testing) import Tern

/// Crash tests of the command line: when the environment variable `TERN_CRASH_AT` names a
/// `MigrationOptions.Milestone`, the process kills itself there with SIGKILL, as a power cut
/// would, leaving whatever is on disk. Those are the windows a random kill rarely hits. The
/// library has no such code: it only says where it is (`MigrationOptions.reached`, a test hook).
/// Debug builds only, which the tests run: a shipped (release) `tern` never reads the variable.
enum CrashTest {
    static func install(on options: inout MigrationOptions) {
        #if DEBUG
            guard let target = ProcessInfo.processInfo.environment["TERN_CRASH_AT"].flatMap(MigrationOptions.Milestone.init(rawValue:)) else { return }
            options.reached = { milestone in
                if milestone == target { kill(getpid(), SIGKILL) }
            }
        #endif
    }
}
