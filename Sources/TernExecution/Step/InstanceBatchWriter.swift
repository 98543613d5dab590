import TernSQLite
import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability

/// One way stage 1 writes an entity mapping's batches: set-based SQL in the writer
/// (`SQLInstanceBatches`), or a policy run on the worker threads (`SwiftInstanceBatches`).
/// Everything around the batches — replay, checkpoints, progress, stop requests, the final
/// commit — is `StepMigrator.createInstances(_:writer:)`, written once for both.
protocol InstanceBatchWriter {
    /// The mapping's source objects, as a condition on source rows `s`.
    var selection: SQLFragment { get }
    /// Source objects per batch.
    var batchSize: Int { get }
    /// SQL over source rows `s` weighing an object's values in bytes, and the most a batch may
    /// hold, where values may be large; nil: batches are counted in objects only.
    var batchWeight: (sql: String, budget: Int)? { get }
    /// Relationship mappings left for stage 2 (the rest are written with the objects).
    var deferredRelationships: [String] { get }
    /// Whether the writing keeps every core busy (worker threads beside the writer), so work
    /// beside the pass waits at the run's `CoreGate` meanwhile.
    var usesEveryCore: Bool { get }
    /// Writes every batch `batches` hands out, strictly in key order, each through
    /// `commit(end, write)`: `write` runs inside the batch's transaction and returns how many
    /// source objects it read. Every range taken is committed before this returns, or it throws;
    /// `commit` itself may throw `MigrationInterrupted` once the batch is committed (a stop asked
    /// for), which ends the writing there. Returns where the time went, when it ran in Swift.
    func writeAll(_ batches: inout SourceBatches, commit: (_ end: Int64, _ write: () throws -> Int) throws -> Void) throws -> StepReport.SwiftTimes?
}
