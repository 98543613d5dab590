/// What a message tells its reader to do next. The engine names the action; whoever shows the
/// message words it for its reader (`RecoveryWording`).
public enum RecoveryAction: Sendable, CaseIterable {
    /// Continue an unfinished migration where it stopped.
    case resume
    /// Throw an unfinished migration away and begin again.
    case restart
    /// The migrated store's path, as the user gave it.
    case outputPath
    /// The setting that refuses an inferred step's data loss.
    case refuseDataLoss
}

/// How messages word a `RecoveryAction` for whoever reads them: a program passes `resume: true`
/// to `StoreMigration.run`, a person adds `--resume` to a command. The library words its messages
/// for programs (`library`); the command line and a fleet bind their own wording to `current`
/// while they run.
public struct RecoveryWording: Sendable {
    private let words: @Sendable (RecoveryAction) -> String

    /// A wording that says each action in `words`.
    public init(_ words: @escaping @Sendable (RecoveryAction) -> String) {
        self.words = words
    }

    /// The wording messages made in this task (or on this thread) use.
    @TaskLocal public static var current: RecoveryWording = .library

    /// Words for a program: options and parameters (`resume: true`).
    public static let library = RecoveryWording { action in
        switch action {
        case .resume: "run the same migration again with resume: true"
        case .restart: "discard it (StoreMigration.discardUnfinished(into:)) and run the migration again"
        case .outputPath: "the output path"
        case .refuseDataLoss: "MigrationOptions.refuseDataLoss"
        }
    }

    /// `action` in this wording.
    public func callAsFunction(_ action: RecoveryAction) -> String { words(action) }

    package static var resume: String { current(.resume) }
    package static var restart: String { current(.restart) }
    package static var output: String { current(.outputPath) }
    package static var refuseDataLoss: String { current(.refuseDataLoss) }
}
