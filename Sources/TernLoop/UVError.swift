import CLibUV

/// A libuv call that failed, with libuv's error name and message and the call that failed.
public struct UVError: Error, Equatable, CustomStringConvertible {
    /// libuv's negative error code (`UV_EBUSY`, …).
    public let code: Int32
    /// What Tern was doing, e.g. "uv_loop_close".
    public let operation: String
    /// Extra detail, e.g. which handles are still open.
    public let detail: String?

    /// An error for libuv code `code` (negative) from `operation`, with optional `detail`.
    public init(code: Int32, operation: String, detail: String? = nil) {
        self.code = code
        self.operation = operation
        self.detail = detail
    }

    /// libuv's name for the code, e.g. "EBUSY".
    public var name: String { String(cString: uv_err_name(code)) }

    public var description: String {
        var text = "\(operation) failed: \(name) (\(String(cString: uv_strerror(code))))"
        if let detail { text += ": \(detail)" }
        return text
    }

    /// Throws unless `result` is 0 (libuv returns 0 or a negative error code).
    static func check(_ result: Int32, _ operation: String) throws {
        if result < 0 { throw UVError(code: result, operation: operation) }
    }
}
