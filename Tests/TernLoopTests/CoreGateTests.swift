import Foundation
import Synchronization
import Testing
import TernLoop

/// Work beside a pass waits at the gate while the pass holds it, and only then.
@Suite("Core gate")
struct CoreGateTests {
    /// What the reader thread did, seen from the test.
    private final class Reader: Sendable {
        private let passedGate = Atomic<Bool>(false)
        private let stopAsked = Atomic<Bool>(false)
        /// How often the gate asked whether to stop: it asks only while the reader waits at it.
        private let asks = Atomic<Int>(0)
        var passed: Bool { passedGate.load(ordering: .sequentiallyConsistent) }
        var timesAsked: Int { asks.load(ordering: .sequentiallyConsistent) }
        var shouldStop: Bool {
            asks.add(1, ordering: .sequentiallyConsistent)
            return stopAsked.load(ordering: .sequentiallyConsistent)
        }
        func stop() { stopAsked.store(true, ordering: .sequentiallyConsistent) }

        /// Starts a thread passing `gate`, asking `shouldStop` while it waits.
        func start(at gate: CoreGate) throws -> OSThread {
            try OSThread { [self] in
                gate.pass(unless: { self.shouldStop })
                passedGate.store(true, ordering: .sequentiallyConsistent)
            }
        }
    }

    @Test("A reader passes an open gate at once, waits while it is held, and goes on once released")
    func holdsReadersUntilReleased() throws {
        let gate = CoreGate()
        // Open: no wait.
        try Reader().start(at: gate).join()
        let reader = Reader()
        var thread: OSThread?
        try gate.holding {
            thread = try reader.start(at: gate)
            // Waiting at the gate: it asks whether to stop, again and again.
            #expect(Latch.until(timeout: 30) { reader.timesAsked >= 2 })
            let passedWhileHeld = reader.passed
            #expect(!passedWhileHeld)
            // Held twice (nested): releasing the inner hold keeps it closed.
            let asked = reader.timesAsked
            gate.holding { _ = Latch.until(timeout: 30) { reader.timesAsked > asked } }
            #expect(Latch.until(timeout: 30) { reader.timesAsked > asked + 1 })
            let passedAfterInnerRelease = reader.passed
            #expect(!passedAfterInnerRelease)
        }
        // Released: the reader passes, and has once it is joined.
        thread.take()?.join()
        let passed = reader.passed
        #expect(passed)
    }

    @Test("A reader told to stop leaves a held gate without waiting for it")
    func stopLeavesAHeldGate() throws {
        let gate = CoreGate()
        let reader = Reader()
        try gate.holding {
            let thread = try reader.start(at: gate)
            #expect(Latch.until(timeout: 30) { reader.timesAsked >= 2 })
            let passedWhileHeld = reader.passed
            #expect(!passedWhileHeld)
            reader.stop()
            // Still held: only the stop lets the reader out.
            thread.join()
            let passed = reader.passed
            #expect(passed)
        }
    }
}
