import Foundation
import TernModel
import TernStore
import TernMapping
import TernLoop
import TernSQLite

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

/// What one step did, per entity mapping, for reports and verification.
public struct StepReport: Sendable {
    /// What one entity mapping did.
    public struct Mapping: Sendable {
        /// The entity mapping's name.
        public var name: String
        /// Its pass, 1-based within the step (as `PassReport.pass` and the events count).
        public var pass: Int
        /// Source objects the mapping selected (its filter applied).
        public var selected: Int
        /// Destination objects it created.
        public var created: Int
        /// Whether destination keys equal source keys (no association table needed).
        public var keptKeys: Bool
        /// What verification proved for this mapping, in words ("count", "values of 3
        /// attributes", "relationships author, labels", …), and what it could not.
        public var verified: [String] = []
        /// For a mapping that ran in Swift, this run: where its time went.
        public var swiftTimes: SwiftTimes?
        /// Objects of the destination entity its policy created without associating them with a
        /// source object (or linking them), this run: its relationship mappings cannot reach them,
        /// so they have none of those links. Reported in `StepReport.dropped` too.
        public var unassociated = 0
        /// Source objects the mapping selected that its policy associated with no destination
        /// object (a forgotten `associate`): what reaches them through the mapping finds nothing.
        /// Reported in `StepReport.dropped` too.
        public var neverAssociated = 0
    }

    /// Where a mapping in Swift spent its time: the one writer's share says whether more
    /// workers can help (they cannot once the writer is busy all along).
    public struct SwiftTimes: Sendable, Codable {
        /// From the first batch handed out to the last committed.
        public var seconds: Double
        /// The writer inserting objects, associations and links, and committing.
        public var writingSeconds: Double
        /// The workers reading and running the policy, all together.
        public var transformingSeconds: Double
        /// Worker threads the mapping ran on.
        public var workers: Int
    }

    /// Each entity mapping the step ran, in run order.
    public var mappings: [Mapping] = []
    /// Every object the step's store holds when it is done, by destination entity: what each
    /// mapping's destination entity received and whatever its policies made of other entities
    /// (a mapping's `created` counts its own entity alone). Empty for a step applied in place.
    public var written: [String: Int] = [:]
    /// The links of each relationship mapping, by "mapping.relationship": as stage 2 wrote them,
    /// or, for to-ones stage 1 wrote inside its inserts, as verification counted them. Both sides
    /// of a relationship share their links: they are counted once, under the side that wrote them.
    public var links: [String: Int] = [:]
    /// Seconds this run spent writing them, by the same names (none where an earlier run did).
    public var linkSeconds: [String: Double] = [:]
    /// Checks that passed, in words, for the summary.
    public var verified: [String] = []
    /// What an inferred step dropped, counted in its input (`DataLoss`).
    public var dropped: [DroppedData] = []
    /// When the step was applied as schema changes without reading rows: the SQL it ran.
    public var appliedInPlace: [String] = []
    /// Each pass's objects, time and peak memory, in order (one entry for a step applied in place).
    public var passes: [PassReport] = []
    /// Time spent after the passes verifying the result against the source.
    public var verifying: Duration = .zero
    /// Time spent after verification finishing the store: the indexes not yet made (with a
    /// second worker they are built beside verification, as its scans leave a core idle), then
    /// the last rows and triggers.
    public var indexing: Duration = .zero
    /// The step's wall time, passes to indexes.
    public var duration: Duration = .zero
}

/// A destination object that breaks a rule of the destination model.
public struct ValidationViolation: Sendable, Equatable, CustomStringConvertible {
    /// The object's entity and key (`Z_PK`) in the migrated store.
    public var entity: String
    /// The object's `Z_PK`.
    public var key: Int64
    /// The rule it breaks, in words ("title: required", "price: below the minimum 0").
    public var rule: String
    public var description: String { "\(entity) \(key): \(rule)" }
}
