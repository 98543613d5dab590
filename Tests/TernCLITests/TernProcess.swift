import Foundation
import TernCommands

/// Runs the built `tern` executable as a child process, as a user would.
struct TernProcess {
    struct Outcome {
        let status: Int32
        let standardOutput: String
        let standardError: String
    }

    /// The `tern` binary SwiftPM built beside the test bundle.
    static let executable: URL = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("tern").path), directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("tern")
    }()

    /// Starts `tern` and returns at once, for tests that act while it runs.
    static func launch(_ arguments: [String], standardOutput: Any, standardError: Any, environment: [String: String] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = standardOutput
        process.standardError = standardError
        try process.run()
        return process
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Outcome {
        let child = try ChildProcess.run(executable, arguments, environment: environment)
        return Outcome(
            status: child.status,
            standardOutput: String(decoding: child.standardOutput, as: UTF8.self),
            standardError: String(decoding: child.standardError, as: UTF8.self))
    }
}
