import CLibUV

/// Owns one libuv loop: the thread that calls `run()` is the loop thread, where every loop API is
/// used and every completion is delivered.
///
/// Not `Sendable`: libuv's loop functions may be called from the loop thread only, and the type
/// system keeps it there. The one way in from other threads is a pool's `uv_async_send`.
public final class EventLoop {
    let handle: UnsafeMutablePointer<uv_loop_t>
    private var isClosed = false
    /// The thread running `run()`, while it runs.
    private(set) var loopThread: ThreadID?

    /// Creates and initialises a loop; it runs nothing until `run()`. Throws `UVError` if libuv cannot.
    public init() throws {
        handle = .allocate(capacity: 1)
        do {
            try UVError.check(uv_loop_init(handle), "uv_loop_init")
        } catch {
            handle.deallocate()
            throw error
        }
    }

    deinit {
        // A loop with open handles cannot be freed: they point into it. Leaking beats a crash, and
        // `close()` is where a caller learns about it.
        if !isClosed, uv_loop_close(handle) == 0 {
            handle.deallocate()
        }
    }

    /// Runs until nothing is left to do: no active handle or request keeps the loop alive.
    public func run() {
        let previous = loopThread
        loopThread = .current
        defer { loopThread = previous }
        uv_run(handle, UV_RUN_DEFAULT)
    }

    /// The loop's thread while it runs.
    public var threadID: ThreadID? { loopThread }

    /// Handles still open (not closing), by libuv's type name.
    public var openHandleNames: [String] {
        final class Names { var list: [String] = [] }
        let names = Names()
        let context = Unmanaged.passUnretained(names).toOpaque()
        uv_walk(
            handle,
            { handle, argument in
                guard let handle, let argument, uv_is_closing(handle) == 0 else { return }
                let names = Unmanaged<Names>.fromOpaque(argument).takeUnretainedValue()
                names.list.append(String(cString: uv_handle_type_name(uv_handle_get_type(handle))))
            }, context)
        return names.list
    }

    /// Closes the loop, proving no handle leaked.
    ///
    /// - Throws: `UVError` `EBUSY` naming the handles still open; the loop stays usable then.
    public func close() throws {
        guard !isClosed else { return }
        let result = uv_loop_close(handle)
        guard result == 0 else {
            throw UVError(code: result, operation: "uv_loop_close", detail: "still open: \(openHandleNames.joined(separator: ", "))")
        }
        isClosed = true
        handle.deallocate()
    }
}
