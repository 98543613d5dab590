import TernModel
import TernStore
import TernMapping
/// How messages tell whoever reads them to go on: a program passes `resume: true` to
/// `StoreMigration.run`, a person adds `--resume` to the command. The library words its messages
/// for programs; `tern` binds `commandLine` while its commands run.
public enum RecoveryWording: Sendable {
    /// Words for a program: options and parameters (`resume: true`).
    case library
    /// Words for a person at the command line: flags (`--resume`).
    case commandLine
    /// Words for a store of a fleet (`tern fleet run`): each attempt resumes what the last began.
    case fleet

    /// The wording messages made in this task (or on this thread) use.
    @TaskLocal public static var current: RecoveryWording = .library

    /// Continue an unfinished migration where it stopped.
    static var resume: String {
        switch current {
        case .library: "run the same migration again with resume: true"
        case .commandLine: "run the same command with --resume"
        case .fleet: "the shard's next attempt (tern fleet run) resumes it"
        }
    }

    /// Throw an unfinished migration away and begin again.
    static var restart: String {
        switch current {
        case .library: "discard it (StoreMigration.discardUnfinished(into:)) and run the migration again"
        case .commandLine: "run the same command with --restart"
        case .fleet: "discard it (tern migrate STORE --model MODEL --restart) and run the shard again"
        }
    }

    /// The migrated store's path, as the user gave it.
    static var output: String { current == .library ? "the output path" : "--out" }

    /// The setting that refuses an inferred step's data loss.
    static var refuseDataLoss: String { current == .library ? "MigrationOptions.refuseDataLoss" : "--no-data-loss" }
}
