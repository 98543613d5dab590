import TernLoop
import TernSQLite

extension StepMigrator {
    /// Stage 1 for a mapping with a policy (or a manager hook). This thread runs a libuv loop: it
    /// finds each batch's key range, hands ranges to `options.workers` worker threads (each with
    /// its own read connection) that read and run the policy in parallel, and writes the
    /// transformed batches strictly in key order — keys given in creation order, with the batch's
    /// associations, links and checkpoint in one transaction — so the destination is the same
    /// whatever the number of workers. At most one batch more than there are workers is read ahead.
    func createInstancesInSwift(_ entry: AssociationTables.Entry, policy: any EntityMigrationPolicy) throws {
        let mapping = entry.mapping.mapping
        let unit = "create:\(entry.number):\(mapping.name)"
        // Every relationship mapping is recreated in stage 2, through this mapping's associations,
        // whatever the policy does with the objects' values.
        pending[entry.number] = step.destination.allRelationships(of: mapping.destinationEntity!).map(\.name).filter { entry.mapping.relationships[$0] != nil }
        if checkpoint[unit].done {
            completed.insert(entry.number)
            report.mappings.append(StepReport.Mapping(name: mapping.name, pass: entry.pass, selected: checkpoint[unit].count,
                                                      created: try createdCount(entry), keptKeys: false))
            return
        }
        let sourceEntity = sourceLayout.entities[mapping.sourceEntity!]!
        var compiler = SQLCompiler(layout: sourceLayout, schema: "src")
        let selection = sourceSelection(entry, compiler: &compiler)
        let transform = swiftTransform(entry, policy: policy, selection: selection, compiler: &compiler)
        let batchEnd = try connection.prepare((SQLFragment("SELECT max(k) FROM (SELECT s.\"Z_PK\" AS k FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s WHERE ") + selection
            + SQLFragment(" AND s.\"Z_PK\" > ? ORDER BY s.\"Z_PK\" LIMIT ?)")).sql)
        let statements = try SwiftBatchStatements(connection: connection, layout: destinationLayout, associationTable: entry.table)
        let total = try selectedCount(sourceEntity, selection)
        // Values from files are held whole in a batch: fewer objects per batch bounds the memory.
        let batchSize = step.source.allAttributes(of: mapping.sourceEntity!).contains(where: \.allowsExternalStorage)
            ? min(options.batchSize, Self.externalDataBatchSize) : options.batchSize

        var last = checkpoint[unit].lastKey
        var selected = checkpoint[unit].count
        var failure: (any Error)?
        /// Batches read ahead, by sequence number; `written` is the next one to write.
        var ready: [Int: TransformedBatch] = [:]
        var submitted = 0
        var written = 0
        var exhausted = false
        let readAhead = options.workers + 1

        let loop = try EventLoop()
        let attachURI = sourceAttachURI
        let pool = try WorkerPool<SourceBatchReader>(loop: loop, workers: options.workers, maxInFlight: readAhead) { _ in
            try SourceBatchReader(transform, sourceAttachURI: attachURI)
        }
        func stop(_ error: any Error) {
            guard failure == nil else { return }
            failure = error
            pool.cancelAll()
            pool.shutdown()
        }
        func submitMore() {
            while failure == nil, !exhausted, submitted - written < readAhead {
                do {
                    try batchEnd.bind(selection.arguments + [SQLiteValue.integer(last), .integer(Int64(batchSize))])
                    defer { batchEnd.reset() }
                    guard try batchEnd.step(), let end = batchEnd.row.value(at: 0).int64 else {
                        exhausted = true
                        break
                    }
                    let (start, sequence) = (last, submitted)
                    last = end
                    submitted += 1
                    try pool.submit({ reader, _ in try reader.transformBatch(after: start, through: end) }) { result in
                        switch result {
                        case .success(let batch): ready[sequence] = batch
                        case .failure(let error): stop(error)
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
                do {
                    let before = selected
                    selected += batch.selected
                    try connection.transaction(.immediate) {
                        try write(batch, of: entry, with: statements)
                        try checkpoint.save(unit, lastKey: batch.end, count: selected, nextKeys: nextKeys, on: connection)
                    }
                    written += 1
                    emit(.batchCommitted(mapping: mapping.name, pass: entry.pass, rows: selected - before, done: selected, total: total))
                    try stopIfAsked()
                } catch {
                    stop(error)
                }
            }
            submitMore()
        }
        submitMore()
        loop.run()
        try loop.close()
        if let failure { throw failure }

        try connection.transaction(.immediate) {
            if let index = associations.indexStatement(entry) {
                try connection.execute(index)
            }
            try checkpoint.save(unit, lastKey: last, count: selected, done: true, nextKeys: nextKeys, on: connection)
        }
        completed.insert(entry.number)
        let created = try createdCount(entry)
        emit(.entityMappingFinished(mapping: mapping.name, pass: entry.pass, objects: created))
        report.mappings.append(StepReport.Mapping(name: mapping.name, pass: entry.pass, selected: selected, created: created, keptKeys: false))
        logger.debug("created instances in Swift", metadata: ["mapping": "\(mapping.name)", "objects": "\(created)", "workers": "\(options.workers)"])
    }

    /// Source objects per batch when their values may come from files (of any size).
    static let externalDataBatchSize = 16

    /// What workers need: the read query (every stored attribute and to-one key of the source
    /// entity, then the inputs of each value expression, for the default destination object).
    private func swiftTransform(_ entry: AssociationTables.Entry, policy: any EntityMigrationPolicy, selection: SQLFragment, compiler: inout SQLCompiler) -> SwiftBatchTransform {
        let mapping = entry.mapping.mapping
        let sourceEntity = sourceLayout.entities[mapping.sourceEntity!]!
        let attributes = step.source.allAttributes(of: mapping.sourceEntity!).filter { !$0.isTransient }
        let toOnes = step.source.allRelationships(of: mapping.sourceEntity!).filter { sourceEntity.foreignKeyColumns[$0.name] != nil }.map(\.name)
        // A policy sees a value stored outside the store as the app does: its bytes.
        var columns = attributes.map { attribute in
            let column = "s.\(quoteIdentifier(sourceEntity.attributeColumns[attribute.name]!))"
            return attribute.allowsExternalStorage ? "tern_external_bytes(\(column))" : column
        } + toOnes.map { "s.\(quoteIdentifier(sourceEntity.foreignKeyColumns[$0]!))" }
        var expressions: [(name: String, expression: CompiledExpression, offset: Int)] = []
        for (name, compiled) in entry.mapping.attributes.sorted(by: { $0.key < $1.key }) {
            expressions.append((name, compiled, columns.count))
            columns += compiled.inputs.map { compiler.sql($0, alias: "s") }
        }
        let read = SQLFragment("SELECT s.\"Z_PK\"\(columns.isEmpty ? "" : ", " + columns.joined(separator: ", ")) FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s WHERE ")
            + selection + SQLFragment(" AND s.\"Z_PK\" > ? AND s.\"Z_PK\" <= ? ORDER BY s.\"Z_PK\"")
        return SwiftBatchTransform(readSQL: read.sql, selectionArguments: selection.arguments, sourceProperties: attributes.map(\.name) + toOnes, expressions: expressions,
                                   mapping: mapping, policy: policy, delegate: options.registry.delegate.flatMap { $0.observes(mapping) ? $0 : nil },
                                   externalData: externalData, externallyStored: externallyStoredAttributes)
    }

    /// Destination objects an entity mapping created so far: its association table's rows.
    func createdCount(_ entry: AssociationTables.Entry) throws -> Int {
        Int(try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(entry.table))")?.int64 ?? 0)
    }

    /// Source objects an entity mapping selects (its filter applied).
    func selectedCount(_ sourceEntity: StoreLayout.EntityLayout, _ selection: SQLFragment) throws -> Int {
        let count = try connection.prepare((SQLFragment("SELECT count(*) FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s WHERE ") + selection).sql)
        try count.bind(selection.arguments)
        _ = try count.step()
        defer { count.reset() }
        return Int(count.row.int64(at: 0))
    }
}
