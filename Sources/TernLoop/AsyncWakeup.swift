import CLibUV

/// A `uv_async_t` handle: the one way other threads wake the loop thread.
///
/// Made, closed and called back on the loop thread; only `Sender.send()` crosses threads.
final class AsyncWakeup {
    /// The thread-safe half: `uv_async_send` is the one libuv call documented as safe from any
    /// thread.
    ///
    /// `@unchecked Sendable`: the handle memory stays valid until the close callback, and owners
    /// close the handle only after every thread that holds a sender has been joined.
    struct Sender: @unchecked Sendable {
        fileprivate let handle: UnsafeMutablePointer<uv_async_t>

        func send() {
            // Fails only for a handle that is not an async handle, which this type rules out.
            _ = uv_async_send(handle)
        }
    }

    private let handle: UnsafeMutablePointer<uv_async_t>
    private let onWake: () -> Void
    private var onClose: (() -> Void)?
    private var isClosing = false

    /// Registers the handle with `loop`; `onWake` runs on the loop thread after one or more sends.
    init(loop: EventLoop, onWake: @escaping () -> Void) throws {
        self.onWake = onWake
        handle = .allocate(capacity: 1)
        let result = uv_async_init(loop.handle, handle) { handle in
            guard let data = handle?.pointee.data else { return }
            Unmanaged<AsyncWakeup>.fromOpaque(data).takeUnretainedValue().onWake()
        }
        guard result == 0 else {
            handle.deallocate()
            throw UVError(code: result, operation: "uv_async_init")
        }
        // The handle keeps this object alive until its close callback.
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    var sender: Sender { Sender(handle: handle) }

    /// Closes the handle; `completion` runs on the loop thread once libuv has let go of it.
    func close(_ completion: @escaping () -> Void) {
        guard !isClosing else { return }
        isClosing = true
        onClose = completion
        uv_close(tern_uv_async_as_handle(handle)) { handle in
            guard let handle, let data = handle.pointee.data else { return }
            let wakeup = Unmanaged<AsyncWakeup>.fromOpaque(data).takeRetainedValue()
            handle.deallocate()
            wakeup.onClose?()
            wakeup.onClose = nil
        }
    }
}
