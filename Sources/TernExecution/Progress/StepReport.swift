import Foundation
import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability

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
