import CLibUV

/// The identity of an OS thread, so code can prove where it runs (tests assert that jobs run off
/// the loop thread and completions on it).
public struct ThreadID: Equatable, Sendable, CustomStringConvertible {
    let raw: uv_thread_t

    /// The calling thread.
    public static var current: ThreadID {
        ThreadID(raw: uv_thread_self())
    }

    public static func == (lhs: ThreadID, rhs: ThreadID) -> Bool {
        withUnsafePointer(to: lhs.raw) { left in
            withUnsafePointer(to: rhs.raw) { right in uv_thread_equal(left, right) != 0 }
        }
    }

    public var description: String { "thread \(raw)" }
}
