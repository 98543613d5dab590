import Foundation
import TernLoop

/// A child process run to its end: its exit status and everything it printed.
public struct ChildProcess: Sendable {
    /// Its exit status, or the number of the signal that ended it (Foundation's `terminationStatus`).
    public let status: Int32
    /// Everything it wrote to standard output.
    public let standardOutput: Data
    /// Everything it wrote to standard error.
    public let standardError: Data

    /// Runs `executable` and reads both of its pipes at once: reading one to its end before the
    /// other hangs parent and child as soon as the child fills the other pipe. `environment`
    /// is added to this process's own.
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws -> ChildProcess {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let errorText = Drained()
        let handle = errors.fileHandleForReading
        // Both pipes at once: a child filling one while the other is read would block forever.
        let reader = try OSThread(stackSize: 1 << 20) { errorText.data = handle.readDataToEndOfFile() }
        let outputText = output.fileHandleForReading.readDataToEndOfFile()
        reader.join()
        process.waitUntilExit()
        return ChildProcess(status: process.terminationStatus, standardOutput: outputText, standardError: errorText.data)
    }

    /// Bytes one reader fills; read only after the reader's group was waited for.
    private final class Drained: @unchecked Sendable {
        var data = Data()
    }
}
