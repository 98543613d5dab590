import Foundation
import ArgumentParser
import Tern
import TernExamples

/// Runs the `tern` command line. A package that adds its own entity migration policies calls it
/// from its executable, with a registry holding them:
///
/// ```swift
/// import TernExamples  // the policies of the configs under configs/
///
/// var registry = PolicyRegistry.builtIn
/// registry.register(MyPolicy(), as: "MyPolicy")
/// TernCommandLine.main(registry: registry, commands: [FleetCommand.self])  // import TernFleet
/// ```
///
/// The single-store commands are always there; `commands` adds those of other products —
/// `tern fleet` (`TernFleet`) and `tern bench` (`TernBench`), which the `tern` executable adds.
///
/// A server runs a command in-process with `run(_:registry:)`, which returns the exit status and
/// what the command printed instead of exiting.
public enum TernCommandLine {
    /// What an in-process command ended with: the exit status `tern` would have exited with (the
    /// exit-code table), and what it wrote to standard output and standard error.
    public struct Outcome: Sendable, Equatable {
        /// The exit status: 0, or a documented exit code.
        public var status: Int32
        /// What the command printed to standard output.
        public var output: String
        /// What it printed to standard error (messages start with "tern: error:").
        public var errors: String
    }

    /// Runs `tern` with `arguments` (default: the process's), and exits the process with its
    /// status. SIGINT and SIGTERM stop a migration at its next batch boundary.
    public static func main(registry: PolicyRegistry = .builtIn, commands: [any ParsableCommand.Type] = [], arguments: [String]? = nil) -> Never {
        // A reader that goes away (`| head`) is a failed write to handle, not a signal to die of.
        signal(SIGPIPE, SIG_IGN)
        let environment = CommandEnvironment(
            registry: registry, output: .standardOutput, errors: .standardError, stop: .process, commands: AddedCommands(commands))
        inside(environment) { TernCommand.main(arguments) }
        exit(0)
    }

    /// Runs one `tern` command in this process and returns its outcome; never exits, and installs
    /// no signal handler. `arguments` are what follows `tern` (`["check", store, "--model", model]`).
    /// Commands run this way may run at once on several threads.
    public static func run(_ arguments: [String], registry: PolicyRegistry = .builtIn, commands: [any ParsableCommand.Type] = []) -> Outcome {
        let environment = CommandEnvironment(
            registry: registry, output: .collecting(), errors: .collecting(), stop: StopRequest(), commands: AddedCommands(commands))
        let status = inside(environment) { () -> Int32 in
            do {
                var command = try TernCommand.parseAsRoot(arguments)
                try command.run()
                return 0
            } catch {
                let code = TernCommand.exitCode(for: error)
                let message = TernCommand.fullMessage(for: error)
                if !message.isEmpty { try? (code == .success ? environment.output : environment.errors).write(message + "\n") }
                return code.rawValue
            }
        }
        return Outcome(status: status, output: environment.output.text, errors: environment.errors.text)
    }

    /// Runs `body` as a command: with `environment`, and messages worded for the command line.
    private static func inside<Result>(_ environment: CommandEnvironment, _ body: () throws -> Result) rethrows -> Result {
        try RecoveryWording.$current.withValue(.commandLine) {
            try CommandEnvironment.$current.withValue(environment, operation: body)
        }
    }
}

struct TernCommand: ParsableCommand {
    /// The single-store commands, then those the environment adds (`TernCommandLine.main`'s `commands`).
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "tern",
            abstract: "Migrate SQLite object stores (Core Data's layout) from one model version to the next.",
            discussion: "Exit codes: Sources/Tern/Tern.docc/ExitCodesAndGuarantees.md (tern help explains each command).",
            version: "0.1.0",
            subcommands: [
                DemoCommand.self, InspectCommand.self, CheckCommand.self, GenerateCommand.self, InferCommand.self, PlanCommand.self,
                MigrateCommand.self, StatusCommand.self, PolicyCommand.self,
            ] + CommandEnvironment.current.commands.types
        )
    }
}
