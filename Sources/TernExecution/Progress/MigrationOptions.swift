import Foundation
import TernModel
import TernStore
import TernMapping
import TernLoop
import TernSQLite
import TernPlanning
import TernDurability

/// Settings of a migration run.
public struct MigrationOptions: Sendable {
    /// Source objects per batch; each batch commits with its checkpoint in one transaction. For
    /// a mapping that runs in Swift it is the most: batches are cut smaller to stay within
    /// `memoryBudget` and about half a second each (`BatchSizer`).
    public var batchSize: Int
    /// The bytes of source values the batches of a mapping that runs in Swift hold at once, read
    /// ahead and being written (counted three times over: as read, as objects, as written). The
    /// default keeps the process near 64 MiB whatever the values' size.
    public var memoryBudget = MigrationOptions.defaultMemoryBudget
    /// 8 MiB of source values in flight: the bench's Swift policy at 5M objects peaks at 58.9
    /// MiB with its start checks read beside it (63.5 MiB at 12, and no faster).
    public static let defaultMemoryBudget = 8 << 20
    /// Worker threads that read and transform batches of entity mappings that run in Swift, each
    /// with its own read connection. Mappings that run as SQL are executed by SQLite in the writer.
    public var workers: Int
    /// Keep the association tables in the migrated store, for auditing.
    public var keepAssociations: Bool
    /// How the versions between the store's and the target are chosen: Core Data's route by
    /// default (one inferred mapping where the app ships none on the way), step by step, or
    /// through named versions.
    public var route: RouteChoice = .coreData
    /// Refuse an inferred step that would drop non-NULL values (`DataLoss`) rather than report it.
    public var refuseDataLoss = false
    /// Validation violations listed before giving up.
    public var violationLimit: Int
    /// `now()` in value expressions, seconds since 2001-01-01: by default when the options were
    /// made. Every object of a run gets the same value; a resumed run gets its own.
    public var now: Double
    /// What "now" is where the wall clock decides something: whether the source has been still
    /// long enough for its file state to prove nobody wrote it (`StoreFileState`). Tests move it
    /// instead of waiting for a file to age. Not API: a clock ahead of the system's would let a
    /// source written a moment ago pass for one at rest.
    package var wallClock: WallClock = .system
    /// The policies mapping models may name, and the manager hook (default: none; `tern`
    /// registers its built-in examples, `PolicyRegistry.builtIn`).
    public var registry: PolicyRegistry
    /// Asked after every committed batch: true stops the run there (`MigrationInterrupted`).
    public var shouldStop: @Sendable () -> Bool
    /// Told what happens, as it happens (on the thread running the migration).
    public var progress: (@Sendable (MigrationEvent) -> Void)?
    /// Tests only: runs on each copied step's store between its last pass and its verification,
    /// to tamper with it and prove verification notices.
    var beforeVerification: (@Sendable (Connection) throws -> Void)?
    /// Tests only: caps each step's store at this many pages beyond its empty schema (SQLite's
    /// `max_page_count`), so the disk is "full" at a chosen point.
    var extraPages: Int?
    /// Tests only: keys per range when verification and validation cut a table's scan
    /// (`RowidRanges`), so a small store is read range by range too.
    var keysPerScan: Int64?
    /// Told when the run passes a point a crash is hardest to survive (between a step's last
    /// commit and its record; inside the final swap), on the thread running it: crash tests kill
    /// the process exactly there. A test hook, not API: `@_spi(Testing) import Tern` sees it.
    @_spi(Testing) public var reached: (@Sendable (Milestone) -> Void)?

    /// The points `reached` is told of.
    @_spi(Testing) public enum Milestone: String, Sendable, CaseIterable {
        /// A batch of instances is committed, before the run looks for a stop request.
        case batchCommitted = "batch-committed"
        /// A new run is about to read its source's digest (`StartChecks`), on the thread reading
        /// it: beside the first pass when the run has a second worker.
        case readingStartDigest = "reading-start-digest"
        /// Those checks have ended, on the same thread: the run's record follows.
        case startChecksEnded = "start-checks-ended"
        case stepCommitted = "step-committed"
        case backupLinked = "backup-linked"
        case renamed
        /// A live run's triggers committed, before its record says so.
        case liveCaptured = "live-captured"
        /// A live run's mirror is complete, before its record says so.
        case liveMirrored = "live-mirrored"
        /// A live run's copy finished, before its record says so.
        case liveCopied = "live-copied"
        /// A live run's round committed.
        case liveRound = "live-round"
        /// A live run holds the store's write lock and applied the last round, before it finishes
        /// the migrated store.
        case liveHeld = "live-held"
    }

    /// Options with safe defaults: no policies registered, as many workers as cores, `now()` when
    /// the options are made.
    public init(
        batchSize: Int = 10_000, workers: Int = ProcessStats.availableParallelism, keepAssociations: Bool = false, violationLimit: Int = 20,
        now: Double = Date().timeIntervalSinceReferenceDate,
        registry: PolicyRegistry = PolicyRegistry(), shouldStop: @escaping @Sendable () -> Bool = { false },
        progress: (@Sendable (MigrationEvent) -> Void)? = nil
    ) {
        self.batchSize = batchSize
        self.workers = max(1, workers)
        self.keepAssociations = keepAssociations
        self.violationLimit = violationLimit
        self.now = now
        self.registry = registry
        self.shouldStop = shouldStop
        self.progress = progress
    }
}
