import Foundation

/// A child's output read line by line as it comes, so the parent can act on a line (kill the
/// child, close the app's store) while the child still runs.
enum PipeLines {
    /// Calls `body` with each complete line until the pipe ends or `body` returns false.
    static func read(_ handle: FileHandle, _ body: (String) throws -> Bool) rethrows {
        var pending = Data()
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { return }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                guard try body(line) else { return }
            }
        }
    }
}
