/// How messages tell whoever reads them to go on: a program passes `resume: true` to
/// `StoreMigration.run`, a person adds `--resume` to the command. The library words its messages
/// for programs; `tern` binds `commandLine` while its commands run.
public enum RecoveryWording: Sendable {
    /// Words for a program: options and parameters (`resume: true`).
    case library
    /// Words for a person at the command line: flags (`--resume`).
    case commandLine

    /// The wording messages made in this task (or on this thread) use.
    @TaskLocal public static var current: RecoveryWording = .library

    /// Continue an unfinished migration where it stopped.
    static var resume: String {
        current == .library ? "run the same migration again with resume: true" : "run the same command with --resume"
    }

    /// Throw an unfinished migration away and begin again.
    static var restart: String {
        current == .library ? "discard it (StoreMigration.discardUnfinished(into:)) and run the migration again" : "run the same command with --restart"
    }

    /// The migrated store's path, as the user gave it.
    static var output: String { current == .library ? "the output path" : "--out" }

    /// The setting that refuses an inferred step's data loss.
    static var refuseDataLoss: String { current == .library ? "MigrationOptions.refuseDataLoss" : "--no-data-loss" }
}
