/// A one-way event threads wait for: closed until `open()`, then open for good. The one way a
/// thread of Tern's waits — for another thread's work to end, for a stop, or (`pause(seconds:)`)
/// for time to pass — on libuv's mutex and condition variable, so a wait ends the moment its
/// event happens rather than at the next turn of a polling loop.
///
/// `@unchecked Sendable`: `opened` is read and written only with `lock` held.
public final class Latch: @unchecked Sendable {
    private let lock = ConditionLock()
    private var opened = false

    /// A closed latch.
    public init() {}

    /// Opens the latch: every waiting thread goes on, and every later wait returns at once.
    public func open() {
        lock.withLock {
            opened = true
            lock.broadcast()
        }
    }

    /// Whether `open()` has been called.
    public var isOpen: Bool { lock.withLock { opened } }

    /// Blocks the calling thread until the latch is open.
    public func wait() {
        lock.withLock {
            while !opened { lock.wait() }
        }
    }

    /// Blocks the calling thread until the latch is open or `seconds` have passed, whichever
    /// comes first; returns whether it is open.
    @discardableResult
    public func wait(seconds: Double) -> Bool {
        let deadline = ContinuousClock.now + .seconds(max(0, seconds))
        return lock.withLock {
            while !opened {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { break }
                lock.wait(seconds: Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18)
            }
            return opened
        }
    }

    /// Blocks the calling thread until `condition` holds or `timeout` seconds have passed; returns
    /// whether it holds. For what no thread of this process announces — a file another process
    /// writes, a count another thread keeps — it asks again every millisecond.
    @discardableResult
    public static func until(timeout: Double, _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(timeout)
        let never = Latch()
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            never.wait(seconds: 0.001)
        }
        return true
    }

    /// Blocks the calling thread for `seconds`: a wait for time alone, on the same primitive.
    public static func pause(seconds: Double) {
        Latch().wait(seconds: seconds)
    }
}
