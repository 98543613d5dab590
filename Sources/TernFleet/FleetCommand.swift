import ArgumentParser
import Foundation
import Tern
import TernCommands
import TernLoop

/// `tern fleet`: many stores, sharded across a job engine's tasks. Add it to a command line with
/// `TernCommandLine.main(registry:commands:)`.
public struct FleetCommand: ParsableCommand {
    /// `fleet plan`, `fleet run` and `fleet status`.
    public static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Migrate many stores, sharded across the tasks of a job engine (Kubernetes Indexed Jobs, AWS Batch or Slurm arrays).",
        discussion: """
            tern fleet plan lists the stores in a manifest; each task of a job array runs tern fleet run \
            on its shard of it; tern fleet status shows where the fleet stands, while it runs too. \
            Exit codes of run and status: 0 every store of the shard (or fleet) is at the target; 75 some \
            store is left for a retry; 12 some store failed in a way retrying cannot help.
            """,
        subcommands: [FleetPlanCommand.self, FleetRunCommand.self, FleetStatusCommand.self]
    )

    /// The command, before its arguments are parsed.
    public init() {}
}
