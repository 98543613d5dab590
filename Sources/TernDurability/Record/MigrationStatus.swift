import Foundation
import TernModel
import TernStore
import TernMapping
import TernSQLite
import TernPlanning

/// Where an unfinished migration stands, read from its record and its step store's checkpoint.
public struct MigrationStatus: Sendable, Codable {
    /// One unit of the step in progress, as its checkpoint records it.
    public struct Unit: Sendable, Codable {
        /// "create instances", "recreate relationships" or "apply policy links".
        public var stage: String
        /// The entity mapping (and relationship) it belongs to.
        public var name: String
        /// Whether the unit has finished; a resume skips it.
        public var done: Bool
        /// Objects (or links) done so far.
        public var count: Int
        /// The last source key committed, for instance creation.
        public var lastKey: Int64
    }

    /// The source store's path, as recorded when the migration began.
    public var store: String
    /// Where the migrated store goes when it is not the store's own place (`--out`).
    public var output: String?
    /// The name of the model version being migrated to.
    public var target: String
    /// Each step, in order.
    public var steps: [StepIdentity]
    /// How many of `steps` are complete; the next one, if any, is the step in progress.
    public var completedSteps: Int
    /// The checkpoint of the step in progress, in the order the units ran; empty when that step
    /// had not committed anything.
    public var units: [Unit]

    /// The status of an unfinished migration into `finalPath`, or nil when there is none.
    ///
    /// - Throws: `TernError(.badInput)` when the step store's checkpoint is damaged.
    public static func read(finalPath: String) throws -> MigrationStatus? {
        guard let run = try MigrationRun.load(at: MigrationRun.path(for: finalPath)) else { return nil }
        var units: [Unit] = []
        if run.completed < run.stepFiles.count, FileManager.default.fileExists(atPath: run.stepFiles[run.completed]) {
            // A policy's kept keys are a fact of its mapping's stage 1, not a unit of work of its own.
            units = try StepWorkspace.recorded(inStoreAt: run.stepFiles[run.completed]).filter { if case .keptKeys = $0.0 { false } else { true } }.map {
                unit, progress in
                Unit(stage: unit.stage, name: unit.subject, done: progress.done, count: progress.count, lastKey: progress.lastKey)
            }
        }
        return MigrationStatus(store: run.store, output: run.output, target: run.target, steps: run.steps, completedSteps: run.completed, units: units)
    }
}
