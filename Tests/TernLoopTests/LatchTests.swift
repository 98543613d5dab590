import Synchronization
import Testing

@testable import TernLoop

@Suite("Latch")
struct LatchTests {
    @Test("a wait ends when another thread opens the latch, and every later wait returns at once")
    func opensWaiters() throws {
        let latch = Latch()
        let started = Latch()
        let woke = Atomic<Bool>(false)
        let thread = try OSThread {
            started.open()
            latch.wait()
            woke.store(true, ordering: .relaxed)
        }
        started.wait()
        #expect(!latch.isOpen)
        latch.open()
        thread.join()
        let wokeUp = woke.load(ordering: .relaxed)
        #expect(wokeUp)
        #expect(latch.wait(seconds: 0))
    }

    @Test("a timed wait on a closed latch returns false once its time has passed, not before")
    func timesOut() {
        let latch = Latch()
        let started = ContinuousClock.now
        #expect(!latch.wait(seconds: 0.05))
        #expect(ContinuousClock.now - started >= .milliseconds(50))
    }

    @Test("a wait until a condition ends once another thread makes it hold, and gives up at its timeout")
    func untilACondition() throws {
        let count = Atomic<Int>(0)
        let thread = try OSThread {
            for _ in 0..<3 { count.add(1, ordering: .relaxed) }
        }
        #expect(Latch.until(timeout: 30) { count.load(ordering: .relaxed) == 3 })
        thread.join()
        #expect(!Latch.until(timeout: 0.01) { count.load(ordering: .relaxed) == 4 })
    }
}
