import Foundation
import ArgumentParser
import Synchronization
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
/// TernCommandLine.main(registry: registry)
/// ```
public enum TernCommandLine {
    private static let current = Mutex<PolicyRegistry>(.builtIn)

    /// The policies `tern migrate` may use.
    static var registry: PolicyRegistry { current.withLock { $0 } }

    public static func main(registry: PolicyRegistry = .builtIn, arguments: [String]? = nil) {
        current.withLock { $0 = registry }
        // A reader that goes away (`| head`) is a failed write to handle, not a signal to die of.
        signal(SIGPIPE, SIG_IGN)
        TernCommand.main(arguments)
    }
}

struct TernCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tern",
        abstract: "Migrate SQLite object stores (Core Data's layout) from one model version to the next.",
        discussion: "Exit codes are listed in the README under \"Exit codes\".",
        version: "0.1.0",
        subcommands: [DemoCommand.self, InspectCommand.self, CheckCommand.self, GenerateCommand.self, InferCommand.self, PlanCommand.self, MigrateCommand.self, StatusCommand.self, BenchCommand.self]
    )
}
