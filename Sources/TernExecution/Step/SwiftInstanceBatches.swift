import TernLoop
import TernModel
import TernStore
import TernMapping
import TernSQLite
import TernPlanning
import TernDurability

/// Stage 1 for a mapping with a policy (or a manager hook). The thread writing runs a libuv
/// loop: it finds each batch's key range, hands ranges to `options.workers` worker threads (each
/// with its own read connection) that read and run the policy in parallel, and writes the
/// transformed batches strictly in key order — keys given in creation order, with the batch's
/// associations and links — so the destination is the same whatever the number of workers. At
/// most two batches per worker and one more are read ahead, each sized by its bytes and time
/// as well as its objects (`BatchSizer`), so memory stays within `options.memoryBudget`.
struct SwiftInstanceBatches: InstanceBatchWriter {
    let selection: SQLFragment
    let batchSize: Int
    let batchWeight: (sql: String, budget: Int)?
    let deferredRelationships: [String]
    /// The policy's workers and the writer: two cores and more.
    let usesEveryCore = true
    private let entry: PlannedMapping
    private let transform: SwiftBatchTransform
    private let statements: SwiftBatchStatements
    private unowned let migrator: StepMigrator

    init(_ entry: PlannedMapping, policy: any EntityMigrationPolicy, migrator: StepMigrator) throws {
        self.entry = entry
        self.migrator = migrator
        var compiler = SQLCompiler(layout: migrator.sourceLayout, schema: "src")
        selection = migrator.inputs.sourceSelection(entry, compiler: &compiler)
        // A to-one whose targets keep their keys is read with the source row and written with
        // the object, as the SQL path writes it inside its INSERT; the others in stage 2.
        let fused = migrator.fusedForeignKeys(of: entry, readingOnlySource: true)
        deferredRelationships = fused.deferred
        transform = migrator.swiftTransform(entry, policy: policy, selection: selection, foreignKeys: fused.values.map(\.sql), compiler: &compiler)
        statements = try SwiftBatchStatements(
            connection: migrator.connection, layout: migrator.destinationLayout, associationTable: entry.table,
            foreignKeys: (entry.destinationEntity, fused.columns))
        batchSize = migrator.options.batchSize
        // Values from files are held whole in a batch: their size bounds it too.
        let sourceEntity = migrator.sourceLayout.entities[entry.sourceEntity]!
        let external = migrator.step.source.allAttributes(of: entry.sourceEntity).filter { $0.allowsExternalStorage && !$0.isTransient }
        batchWeight =
            external.isEmpty
            ? nil
            : (
                external.map { "tern_external_size(s.\(quoteIdentifier(sourceEntity.attributeColumns[$0.name]!)))" }.joined(separator: " + "),
                Self.externalDataBudget
            )
    }

    func writeAll(_ batches: inout SourceBatches, commit: (_ end: Int64, _ write: () throws -> Int) throws -> Void) throws -> StepReport.SwiftTimes? {
        var failure: (any Error)?
        let started = ContinuousClock.now
        var writingTime = Duration.zero
        var transforming = 0.0
        /// Batches read ahead, by sequence number; `written` is the next one to write.
        var ready: [Int: TransformedBatch] = [:]
        /// The earliest batch whose policy failed: the batches before it are still written, so the
        /// failure reported is the first in key order, whichever worker met one first.
        var failedBatch: (sequence: Int, error: any Error)?
        var submitted = 0
        var written = 0
        /// 1 while a batch is being written: it no longer counts as read ahead, so the workers
        /// take the next ranges while the writer writes it, instead of waiting for it.
        var writing = 0
        var exhausted = false
        // Two per worker and one more: batches are written in key order, so a worker whose batch
        // is late would otherwise leave the other idle with its own done and none to take.
        let readAhead = 2 * migrator.options.workers + 1
        // In memory at once: those read ahead, the one being written, and those spent until
        // their workers release them (`SpentBatches`): at worst every batch read ahead, written
        // at once behind a late one, and one more per worker.
        var sizer = BatchSizer(
            maximumObjects: batchSize, memoryBudget: migrator.options.memoryBudget, inFlight: 2 * readAhead + 1 + migrator.options.workers)
        // The loop's callbacks escape, and an inout parameter cannot be captured by them: they
        // take the ranges from a copy, handed back when the writing ends.
        var ranges = batches
        defer { batches = ranges }

        let loop = try EventLoop()
        let (transform, attachURI) = (transform, migrator.inputs.sourceAttachURI)
        // The writer is the one thread that cannot be shared: the workers never take its core.
        let pool = try WorkerPool<SourceBatchReader>(loop: loop, workers: migrator.options.workers, maxInFlight: readAhead, yieldingToLoop: true) { _ in
            try SourceBatchReader(transform, sourceAttachURI: attachURI)
        }
        withoutActuallyEscaping(commit) { commit in
            func stop(_ error: any Error) {
                guard failure == nil else { return }
                failure = error
                pool.cancelAll()
                pool.shutdown()
            }
            func submitMore() {
                while failure == nil, failedBatch == nil, !exhausted, submitted - written - writing < readAhead {
                    do {
                        guard let (after, end) = try ranges.next(objects: sizer.objects) else {
                            exhausted = true
                            break
                        }
                        let sequence = submitted
                        submitted += 1
                        try pool.submit({ reader, job in try reader.transformBatch(after: after, through: end, isCancelled: { job.isCancelled }) }) { result in
                            switch result {
                            case .success(let batch):
                                sizer.observe(objects: batch.selected, bytes: batch.sourceBytes, seconds: batch.seconds)
                                transforming += batch.seconds
                                ready[sequence] = batch
                            case .failure(let error):
                                if failedBatch.map({ sequence < $0.sequence }) ?? true { failedBatch = (sequence, error) }
                            case .cancelled: return
                            }
                            writeReady()
                        }
                    } catch {
                        stop(error)
                    }
                }
                if failure == nil, exhausted, written == submitted { pool.shutdown() }
            }
            func writeReady() {
                while failure == nil, let batch = ready.removeValue(forKey: written) {
                    writing = 1
                    defer { writing = 0 }
                    submitMore()
                    guard failure == nil else { break }
                    do {
                        let writingStarted = ContinuousClock.now
                        defer { writingTime += ContinuousClock.now - writingStarted }
                        try commit(batch.end) {
                            try migrator.write(batch, of: entry, with: statements)
                            return batch.selected
                        }
                        written += 1
                        batch.spent?.keep(batch)
                    } catch {
                        stop(error)
                    }
                }
                if let failedBatch, written == failedBatch.sequence { stop(failedBatch.error) }
                submitMore()
            }
            submitMore()
            loop.run()
        }
        try loop.close()
        if let failure { throw failure }
        return StepReport.SwiftTimes(
            seconds: (ContinuousClock.now - started).seconds, writingSeconds: writingTime.seconds,
            transformingSeconds: transforming, workers: migrator.options.workers)
    }

    /// The most bytes of values stored outside the store one batch reads into memory.
    static let externalDataBudget = 32 << 20
}

extension StepMigrator {
    /// What workers need: the read query (every stored attribute and to-one key of the source
    /// entity, then the inputs of each value expression, for the default destination object).
    func swiftTransform(
        _ entry: PlannedMapping, policy: any EntityMigrationPolicy, selection: SQLFragment, foreignKeys: [String], compiler: inout SQLCompiler
    ) -> SwiftBatchTransform {
        let mapping = entry.entityMapping
        let sourceEntity = sourceLayout.entities[entry.sourceEntity]!
        let attributes = step.source.allAttributes(of: entry.sourceEntity).filter { !$0.isTransient }
        let toOnes = step.source.allRelationships(of: entry.sourceEntity).filter { sourceEntity.foreignKeyColumns[$0.name] != nil }.map(\.name)
        // A policy sees a value stored outside the store as the app does: its bytes (and the
        // reader notes the object's own stored forms, to write unchanged values back as they were).
        var columns =
            attributes.map { attribute in
                let column = "s.\(quoteIdentifier(sourceEntity.attributeColumns[attribute.name]!))"
                return attribute.allowsExternalStorage ? "tern_external_own_bytes(\(column), \(quoteLiteral(attribute.name)))" : column
            } + toOnes.map { "s.\(quoteIdentifier(sourceEntity.foreignKeyColumns[$0]!))" }
        var expressions: [(name: String, expression: CompiledExpression, offset: Int)] = []
        for (name, compiled) in entry.mapping.attributes.sorted(by: { $0.key < $1.key }) {
            expressions.append((name, compiled, columns.count))
            columns += compiled.inputs.map { compiler.sql($0, alias: "s") }
        }
        let fused = foreignKeys.isEmpty ? nil : (offset: columns.count, count: foreignKeys.count)
        columns += foreignKeys
        let read =
            SQLFragment(
                "SELECT s.\"Z_PK\"\(columns.isEmpty ? "" : ", " + columns.joined(separator: ", ")) FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s WHERE "
            )
            + selection + SQLFragment(" AND s.\"Z_PK\" > ? AND s.\"Z_PK\" <= ? ORDER BY s.\"Z_PK\"")
        return SwiftBatchTransform(
            readSQL: read.sql, selectionArguments: selection.arguments, sourceProperties: attributes.map(\.name) + toOnes, expressions: expressions,
            mapping: mapping, sourceEntity: entry.sourceEntity, destinationEntity: entry.destinationEntity, policy: policy,
            delegate: options.registry.delegate.flatMap { $0.observes(mapping) ? $0 : nil },
            externalData: inputs.externalData, externallyStored: inputs.externallyStoredAttributes,
            storedFormSources: inputs.storedFormSources(of: entry),
            settableAttributes: Dictionary(
                uniqueKeysWithValues: step.destination.entities.map { entity in
                    (
                        entity.name,
                        Dictionary(
                            step.destination.allAttributes(of: entity.name).filter { !$0.isTransient }.map { ($0.name, $0.type) },
                            uniquingKeysWith: { first, _ in first })
                    )
                }),
            foreignKeys: fused.map {
                (
                    $0.offset, $0.count,
                    "SELECT \(foreignKeys.joined(separator: ", ")) FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s WHERE s.\"Z_PK\" = ?"
                )
            })
    }
}
