import Foundation
import Tern
import TernCommands
import TernLoop

/// Runs `body(slot)` on `count` threads of their own (at least one), each with an 8 MiB stack —
/// planning and migrating recurse through expressions, deeper than a secondary thread's default
/// allows — and returns once every one has finished. The command's environment (where it prints,
/// its policies, its wording) goes with them: task-local values do not cross into a `Thread`.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let environment = CommandEnvironment.current
    let wording = RecoveryWording.current
    do {
        try OSThread.run(count) { slot in
            RecoveryWording.$current.withValue(wording) {
                CommandEnvironment.$current.withValue(environment) { body(slot) }
            }
        }
    } catch {
        // No thread could be made (the process is at its limit): run the slots here, in turn.
        for slot in 0..<max(1, count) { body(slot) }
    }
}
