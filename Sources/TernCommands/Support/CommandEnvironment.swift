import ArgumentParser
import Foundation
import Synchronization
import Tern

/// What a command runs with: where it writes, the policies mapping files may name, and what asks
/// a migration to stop. `TernCommandLine.main` gives it the process's standard streams and
/// signals; `TernCommandLine.run` gives it buffers and a stop request of its own, so a program can
/// run commands in-process, several at once.
package struct CommandEnvironment: Sendable {
    @TaskLocal package static var current = CommandEnvironment(registry: .builtIn, output: .standardOutput, errors: .standardError, stop: .process)

    package var registry: PolicyRegistry
    var output: OutputSink
    package var errors: OutputSink
    package var stop: StopRequest
    /// Commands of other products `tern` offers besides its own (`tern fleet`, `tern bench`).
    var commands = AddedCommands([])
}

/// Command types another product adds to `tern`. Types are values nobody mutates; the wrapper
/// says so, since a protocol's metatype is not `Sendable` by itself.
struct AddedCommands: @unchecked Sendable {
    let types: [any ParsableCommand.Type]

    init(_ types: [any ParsableCommand.Type]) { self.types = types }
}

/// Standard output or error, or a buffer standing in for one.
package final class OutputSink: Sendable {
    private enum Target {
        case handle(FileHandle)
        case buffer
    }
    private let target: Target
    private let buffer = Mutex(Data())

    static let standardOutput = OutputSink(.handle(.standardOutput))
    static let standardError = OutputSink(.handle(.standardError))
    /// Collects what is written, for `text`.
    static func collecting() -> OutputSink { OutputSink(.buffer) }

    private init(_ target: Target) { self.target = target }

    /// Throws when the reader has gone (a closed pipe).
    package func write(_ text: String) throws {
        switch target {
        case .handle(let handle): try handle.write(contentsOf: Data(text.utf8))
        case .buffer: buffer.withLock { $0.append(Data(text.utf8)) }
        }
    }

    /// Whether a person watches it: a live progress bar is drawn only then.
    var isTerminal: Bool {
        if case .handle(let handle) = target { return isatty(handle.fileDescriptor) == 1 }
        return false
    }

    /// What a collecting sink holds.
    var text: String { buffer.withLock { String(decoding: $0, as: UTF8.self) } }
}

/// The commands print to the environment's output, not the process's: shadows `Swift.print`
/// inside this module, so an in-process run collects what they print.
package func print(_ text: String, terminator: String = "\n") {
    try? CommandEnvironment.current.output.write(text + terminator)
}

package func printError(_ message: String) {
    try? CommandEnvironment.current.errors.write("tern: error: \(message)\n")
}
