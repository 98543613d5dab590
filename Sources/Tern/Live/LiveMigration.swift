import Foundation
import TernDurability

/// How a live migration goes (`StoreMigration.runBlockingLive`).
public struct LiveMigrationOptions: Sendable {
    /// How long the cut-over waits, once caught up, for every other process to close the store
    /// (a Core Data app reopens it after a model change anyway); and how long the run may stay
    /// more than `caughtUp` behind before it refuses a cut-over with the figures.
    public var closeTimeout: Duration
    /// Log entries behind the live store under which the run counts as caught up.
    public var caughtUp: Int64
    /// How much of the machine the run takes from the app until the cut-over; `.idle` changes
    /// every thread of the process.
    public var priority: LivePriority
    /// Receives what the run does as it does it.
    public var progress: (@Sendable (LiveEvent) -> Void)?

    /// Options with the given values.
    public init(
        closeTimeout: Duration = .seconds(60), caughtUp: Int64 = 1_000, priority: LivePriority = .idle, progress: (@Sendable (LiveEvent) -> Void)? = nil
    ) {
        self.closeTimeout = closeTimeout
        self.caughtUp = caughtUp
        self.priority = priority
        self.progress = progress
    }
}

/// What a live migration reports as it goes.
public enum LiveEvent: Sendable {
    /// The change log and its triggers are in the store, over this many tables.
    case capturing(tables: Int)
    /// The live store was copied into the mirror, at this log position.
    case mirrored(seconds: Double, position: Int64)
    /// The mirror was migrated (the engine's own progress came before).
    case copied(seconds: Double)
    /// A round applied these log entries, writing these objects again; the lag after it.
    case round(entries: Int64, objects: Int, lagEntries: Int64, lagSeconds: Double)
    /// Every object and link was proved against the mirror while the app wrote.
    case verified(seconds: Double)
    /// Caught up; waiting for these processes to close the store.
    case waitingForClose(processes: [String])
    /// The migrated store is in place: Tern's part of the downtime.
    case cutOver(seconds: Double, entries: Int64)
}

/// What a finished live migration did.
public struct LiveReport: Sendable {
    /// The offline migration of the mirror; nil when an earlier, interrupted run did it.
    public var copy: StoreMigration.Report?
    /// Rounds that applied anything.
    public var rounds = 0
    /// Log entries those rounds applied.
    public var entries: Int64 = 0
    /// Destination objects they wrote again.
    public var objects = 0
    /// The full verification against the mirror while the app wrote.
    public var verification: Duration = .zero
    /// Tern's part of the downtime: from taking the store's write lock to the migrated store in
    /// place (the last round, its verification, the swap).
    public var cutOver: Duration = .zero
    /// The log entries the last round applied, under the lock.
    public var cutOverEntries: Int64 = 0
    /// Where the cut-over's time went, for whoever tunes it.
    public var cutOverParts = CutOverParts()
    /// Where the original is kept.
    public var backup: String = ""
    /// The run's wall time.
    public var duration: Duration = .zero
}

/// Tern's part of the downtime, in its parts: they add up to `LiveReport.cutOver`, give or take
/// the swap's bookkeeping.
public struct CutOverParts: Sendable {
    /// Taking the store's write lock (the app has closed it, so only a straggler makes it long).
    public var lock: Duration = .zero
    /// The last round: the log's remaining entries mapped again.
    public var round: Duration = .zero
    /// Those objects verified against the store under the lock.
    public var verification: Duration = .zero
    /// The triggers and log dropped, `Z_MAX` carried over, the migrated store swapped in.
    public var finish: Duration = .zero
}
