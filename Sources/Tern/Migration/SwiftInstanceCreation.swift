import TernSQLite

extension StepMigrator {
    /// Stage 1 for a mapping with a policy (or a manager hook): source objects stream in batches
    /// through the policy in Swift; each batch's objects, associations and links are written in
    /// one transaction, keys given in creation order.
    func createInstancesInSwift(_ entry: AssociationTables.Entry, policy: any EntityMigrationPolicy) throws {
        let mapping = entry.mapping.mapping
        let sourceEntity = sourceLayout.entities[mapping.sourceEntity!]!
        var compiler = SQLCompiler(layout: sourceLayout, schema: "src")
        let selection = sourceSelection(entry, compiler: &compiler)

        // What a SourceObject holds: every stored attribute and to-one key of the source entity.
        let attributes = step.source.allAttributes(of: mapping.sourceEntity!).filter { !$0.isTransient }.map(\.name)
        let toOnes = step.source.allRelationships(of: mapping.sourceEntity!).filter { sourceEntity.foreignKeyColumns[$0.name] != nil }.map(\.name)
        var columns = attributes.map { "s.\(quoteIdentifier(sourceEntity.attributeColumns[$0]!))" } + toOnes.map { "s.\(quoteIdentifier(sourceEntity.foreignKeyColumns[$0]!))" }
        // Then the inputs of each value expression, for the default destination object.
        var programs: [(name: String, program: ExpressionProgram, offset: Int)] = []
        for (name, compiled) in entry.mapping.attributes.sorted(by: { $0.key < $1.key }) {
            programs.append((name, ExpressionProgram(compiled), columns.count))
            columns += compiled.inputs.map { compiler.sql($0, alias: "s") }
        }
        let read = try connection.prepare((SQLFragment("SELECT s.\"Z_PK\"\(columns.isEmpty ? "" : ", " + columns.joined(separator: ", ")) FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s WHERE ")
            + selection + SQLFragment(" AND s.\"Z_PK\" > ? AND s.\"Z_PK\" <= ? ORDER BY s.\"Z_PK\"")).sql)
        let batchEnd = try connection.prepare((SQLFragment("SELECT max(k) FROM (SELECT s.\"Z_PK\" AS k FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s WHERE ") + selection
            + SQLFragment(" AND s.\"Z_PK\" > ? ORDER BY s.\"Z_PK\" LIMIT ?)")).sql)
        let writer = try ObjectWriter(connection: connection, layout: destinationLayout)
        let associate = try connection.prepare("INSERT INTO \(quoteIdentifier(entry.table)) (source, destination) VALUES (?, ?)")
        let link = try connection.prepare("INSERT INTO TERN_LINKS (owner, owner_entity, relationship, target, target_entity, target_mapping) VALUES (?, ?, ?, ?, ?, ?)")
        let findUnique = try connection.prepare("SELECT destination FROM TERN_UNIQUE WHERE entity = ? AND identity = ?")
        let recordUnique = try connection.prepare("INSERT INTO TERN_UNIQUE (entity, identity, destination) VALUES (?, ?, ?)")
        let delegate = options.registry.delegate.flatMap { $0.observes(mapping) ? $0 : nil }
        let unit = "create:\(entry.number):\(mapping.name)"
        if checkpoint[unit].done {
            completed.insert(entry.number)
            report.mappings.append(StepReport.Mapping(name: mapping.name, pass: entry.pass, selected: checkpoint[unit].count,
                                                      created: Int(try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(entry.table))")?.int64 ?? 0), keptKeys: false))
            return
        }
        let count = try connection.prepare((SQLFragment("SELECT count(*) FROM \"src\".\(quoteIdentifier(sourceEntity.table)) s WHERE ") + selection).sql)
        try count.bind(selection.arguments)
        _ = try count.step()
        let total = Int(count.row.int64(at: 0))
        count.reset()

        var last = checkpoint[unit].lastKey
        var selected = checkpoint[unit].count
        while true {
            let before = selected
            try batchEnd.bind(selection.arguments + [SQLiteValue.integer(last), .integer(Int64(options.batchSize))])
            guard try batchEnd.step(), let end = batchEnd.row.value(at: 0).int64 else {
                batchEnd.reset()
                break
            }
            batchEnd.reset()

            // Read and transform the batch.
            try read.bind(selection.arguments + [SQLiteValue.integer(last), .integer(end)])
            var rows = read.rows()
            var objects: [DestinationObject] = []
            var associations: [(Int64, Int)] = []
            var links: [(Int, String, InstanceCreationContext.LinkTarget)] = []
            var identities: [Int: [String]] = [:]
            while let row = try rows.next() {
                let values = row.values
                var properties: [String: SQLiteValue] = [:]
                for (index, name) in (attributes + toOnes).enumerated() { properties[name] = values[index + 1] }
                let source = SourceObject(key: values[0].int64!, entity: mapping.sourceEntity!, values: properties)
                let context = InstanceCreationContext(mapping: mapping) { source in
                    var object = DestinationObject(entity: mapping.destinationEntity!)
                    for (name, program, offset) in programs {
                        object.values[name] = try program.evaluate(Array(values[(offset + 1)..<(offset + 1 + program.compiled.inputs.count)]))
                    }
                    return object
                }
                try policy.createDestinationInstances(for: source, in: context)
                for (associatedSource, handle) in context.associations {
                    if let delegate {
                        var object = context.object(handle)
                        delegate.associate(source: associatedSource, destination: &object, mapping: mapping)
                        context.updateObject(handle, object)
                    }
                }
                let base = objects.count
                objects += context.objects
                for (index, keys) in context.identities { identities[base + index] = keys }
                associations += context.associations.map { ($0.source.key, base + $0.object.index) }
                links += context.links.map { owner, relationship, target in
                    if case .created(let handle) = target { return (base + owner.index, relationship, .created(CreatedObject(index: base + handle.index))) }
                    return (base + owner.index, relationship, target)
                }
                selected += 1
            }

            // Write it: keys in creation order, then associations and links, in one transaction.
            try connection.transaction(.immediate) {
                var keys: [Int64] = []
                for (index, object) in objects.enumerated() {
                    guard let layout = destinationLayout.entities[object.entity] else {
                        throw TernError(.badInput, "entity mapping \(mapping.name): the policy created an object of \(object.entity), which is not in \(step.destination.versionName)")
                    }
                    var identity: String?
                    if let identifying = identities[index] {
                        // Values joined as SQL literals: unambiguous, and the same text for the same values.
                        identity = identifying.map { object.values[$0]?.sqlLiteral ?? "NULL" }.joined(separator: ",")
                        try findUnique.bind([object.entity, identity!])
                        let found = try findUnique.step() ? findUnique.row.int64(at: 0) : nil
                        findUnique.reset()
                        if let found {
                            keys.append(found)
                            continue
                        }
                    }
                    let key = nextKeys[layout.table, default: 1]
                    nextKeys[layout.table] = key + 1
                    keys.append(key)
                    let defaults = Dictionary(uniqueKeysWithValues: step.destination.allAttributes(of: object.entity).map { ($0.name, $0.defaultValue ?? .null) })
                    let values = try writer.insertColumns(for: object.entity).map { column -> SQLiteValue in
                        guard let name = layout.attributeColumns.first(where: { $0.value == column })?.key else { return .null }
                        return object.values[name] ?? defaults[name] ?? .null
                    }
                    try writer.insert(object.entity, key: key, values: values)
                    if let identity {
                        try recordUnique.bind([object.entity, identity, key])
                        try recordUnique.run()
                    }
                }
                for (source, index) in associations {
                    try associate.bind([source, keys[index]])
                    try associate.run()
                }
                for (owner, relationship, target) in links {
                    let (targetKey, targetEntity, targetMapping): (Int64, String, String?)
                    switch target {
                    case .created(let handle): (targetKey, targetEntity, targetMapping) = (keys[handle.index], objects[handle.index].entity, nil)
                    case .existing(let key, let entity): (targetKey, targetEntity, targetMapping) = (key, entity, nil)
                    case .migrated(let sourceKey, let name):
                        guard let target = self.associations.entry(named: name, pass: entry.pass) else {
                            throw TernError(.badInput, "entity mapping \(mapping.name): the policy linked to objects of entity mapping \(name), which does not exist")
                        }
                        (targetKey, targetEntity, targetMapping) = (sourceKey, target.mapping.mapping.destinationEntity!, name)
                    }
                    try link.bind([keys[owner], objects[owner].entity, relationship, targetKey, targetEntity, targetMapping])
                    try link.run()
                }
                try checkpoint.save(unit, lastKey: end, count: selected, nextKeys: nextKeys, on: connection)
            }
            last = end
            emit(.batchCommitted(mapping: mapping.name, pass: entry.pass, rows: selected - before, done: selected, total: total))
            try stopIfAsked()
        }
        try connection.transaction(.immediate) {
            if let index = associations.indexStatement(entry) {
                try connection.execute(index)
            }
            try checkpoint.save(unit, lastKey: last, count: selected, done: true, nextKeys: nextKeys, on: connection)
        }
        completed.insert(entry.number)
        let created = Int(try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(entry.table))")?.int64 ?? 0)
        emit(.entityMappingFinished(mapping: mapping.name, pass: entry.pass, objects: created))
        report.mappings.append(StepReport.Mapping(name: mapping.name, pass: entry.pass, selected: selected, created: created, keptKeys: false))
        logger.debug("created instances in Swift", metadata: ["mapping": "\(mapping.name)", "objects": "\(created)"])
    }
}
