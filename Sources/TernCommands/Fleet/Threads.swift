import Foundation
import Tern

/// Runs `body(slot)` on `count` threads of their own (at least one), each with an 8 MiB stack —
/// planning and migrating recurse through expressions, deeper than a secondary thread's default
/// allows — and returns once every one has finished. The command's environment (where it prints,
/// its policies, its wording) goes with them: task-local values do not cross into a `Thread`.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let environment = CommandEnvironment.current
    let wording = RecoveryWording.current
    let finished = DispatchGroup()
    for slot in 0..<max(1, count) {
        finished.enter()
        let thread = Thread {
            RecoveryWording.$current.withValue(wording) {
                CommandEnvironment.$current.withValue(environment) { body(slot) }
            }
            finished.leave()
        }
        thread.stackSize = 8 << 20
        thread.start()
    }
    finished.wait()
}
