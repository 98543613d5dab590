import Foundation
@_spi(Testing) import Tern

/// Crash tests of the command line: when the environment variable `TERN_CRASH_AT` names a
/// `MigrationOptions.Milestone`, the process kills itself there with SIGKILL, as a power cut
/// would, leaving whatever is on disk. Those are the windows a random kill rarely hits. The
/// library has no such code: it only says where it is (`MigrationOptions.reached`, a test hook).
/// `TERN_STOP_AT` stops it there with SIGSTOP instead, holding no lock a milestone does not
/// hold, so a test can write the store at exactly that point and then let it go on.
/// `TERN_CLOCK_SHIFT` moves the run's wall clock ahead by that many seconds, so a store just
/// written counts as still. Debug builds only, which the tests run: a shipped (release) `tern`
/// never reads these variables.
enum CrashTest {
    static func install(on options: inout MigrationOptions) {
        #if DEBUG
            // The wall clock moved ahead (`TERN_CLOCK_SHIFT` seconds): a store just written looks
            // as still as one at rest, without the test waiting for it to age.
            if let shift = ProcessInfo.processInfo.environment["TERN_CLOCK_SHIFT"].flatMap(Double.init), shift.isFinite, abs(shift) < 1e9 {
                options.wallClock = .shifted(by: shift)
            }
            let environment = ProcessInfo.processInfo.environment
            let crash = environment["TERN_CRASH_AT"].flatMap(MigrationOptions.Milestone.init(rawValue:))
            let stop = environment["TERN_STOP_AT"].flatMap(MigrationOptions.Milestone.init(rawValue:))
            guard crash != nil || stop != nil else { return }
            options.reached = { milestone in
                if milestone == crash { kill(getpid(), SIGKILL) }
                if milestone == stop { kill(getpid(), SIGSTOP) }
            }
        #endif
    }
}
