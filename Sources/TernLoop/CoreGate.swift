import Synchronization

/// Where work beside a pass — reading the source's digest, verification's source side — waits
/// while the pass needs every core. A policy's workers and the single writer keep two cores
/// busy; a reader beside them would take a third of their time, lowered priority or not (each
/// core schedules its own threads, so a reader alone on one takes it whenever its worker waits). The pass holds the gate while such work
/// runs, and the readers pass it between steps, so they use the cores an SQL writer leaves idle.
///
/// `@unchecked Sendable`: `holds` is read and written only with `lock` held; `isHeld` mirrors
/// it for the readers' fast path, which runs every few thousand SQLite instructions.
public final class CoreGate: @unchecked Sendable {
    private let lock = ConditionLock()
    private var holds = 0
    private let isHeld = Atomic<Bool>(false)

    /// An open gate.
    public init() {}

    /// Runs `body` with the gate held (when `held`): readers that reach it wait until it returns.
    public func holding<Result>(if held: Bool = true, _ body: () throws -> Result) rethrows -> Result {
        guard held else { return try body() }
        lock.withLock {
            holds += 1
            isHeld.store(true, ordering: .releasing)
        }
        defer {
            lock.withLock {
                holds -= 1
                if holds == 0 {
                    isHeld.store(false, ordering: .releasing)
                    lock.broadcast()
                }
            }
        }
        return try body()
    }

    /// Returns at once if the gate is open, else once it opens or `stop` returns true (asked
    /// every 50 ms while waiting), so a run told to stop never waits on its own pass.
    public func pass(unless stop: () -> Bool) {
        guard isHeld.load(ordering: .acquiring) else { return }
        lock.withLock {
            while holds > 0, !stop() { lock.wait(seconds: 0.05) }
        }
    }
}
