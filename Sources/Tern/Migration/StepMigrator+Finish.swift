import TernSQLite

extension StepMigrator {
    // MARK: Verification

    /// Counts and copied values compared between source and destination.
    func verify() throws {
        for entry in associations.entries {
            let mapping = entry.mapping.mapping
            var compiler = SQLCompiler(layout: sourceLayout, schema: "src")
            let selection = sourceSelection(entry, compiler: &compiler)
            let sourceTable = sourceLayout.entities[mapping.sourceEntity!]!.table
            let count = try connection.prepare("SELECT count(*) FROM \"src\".\(quoteIdentifier(sourceTable)) s WHERE \(selection.sql)")
            try count.bind(selection.arguments)
            _ = try count.step()
            let selected = Int(count.row.int64(at: 0))
            let destination = destinationLayout.entities[mapping.destinationEntity!]!
            let created = Int(try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(destination.table)) d WHERE \(self.created(entry))")?.int64 ?? 0)
            if policies[mapping.name] != nil {
                // A policy may make any number of objects per source object and set any value:
                // what must hold is that every association points at an object that exists.
                let dangling = try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(entry.table)) a WHERE NOT EXISTS (SELECT 1 FROM \(quoteIdentifier(destination.table)) d WHERE d.\"Z_PK\" = a.destination)")?.int64 ?? 0
                guard dangling == 0 else {
                    throw MigrationFailure.verification("\(mapping.name): \(dangling) associations point at objects that were not written")
                }
                continue
            }
            guard selected == created else {
                throw MigrationFailure.verification("\(mapping.name): \(selected) source objects selected, \(created) destination objects created")
            }
            if let index = report.mappings.firstIndex(where: { $0.name == mapping.name && $0.pass == entry.pass }) {
                report.mappings[index].selected = selected
            }
            // Attributes copied as they are must hold the same values: one join per mapping,
            // then one per attribute only to name the one that differs.
            var copied: [(name: String, source: String, sourceColumn: String, destinationColumn: String)] = []
            for (name, compiled) in entry.mapping.attributes.sorted(by: { $0.key < $1.key }) {
                guard case .input(0) = compiled.expression, compiled.inputs.count == 1, compiled.inputs[0].relationships.isEmpty,
                      case .attribute(let sourceName) = compiled.inputs[0].final,
                      let sourceColumn = sourceLayout.entities[mapping.sourceEntity!]!.attributeColumns[sourceName],
                      let destinationColumn = destination.attributeColumns[name] else { continue }
                copied.append((name, sourceName, sourceColumn, destinationColumn))
            }
            guard !copied.isEmpty else { continue }
            let join = entry.keepsKeys ? "d.\"Z_PK\" = s.\"Z_PK\"" : "d.\"Z_PK\" = (SELECT a.destination FROM \(quoteIdentifier(entry.table)) a WHERE a.source = s.\"Z_PK\")"
            func differing(_ columns: ArraySlice<(name: String, source: String, sourceColumn: String, destinationColumn: String)>) throws -> Int64 {
                let condition = columns.map { "d.\(quoteIdentifier($0.destinationColumn)) IS NOT s.\(quoteIdentifier($0.sourceColumn))" }.joined(separator: " OR ")
                let statement = try connection.prepare("SELECT count(*) FROM \"src\".\(quoteIdentifier(sourceTable)) s JOIN \(quoteIdentifier(destination.table)) d ON \(join) WHERE \(selection.sql) AND (\(condition))")
                try statement.bind(selection.arguments)
                _ = try statement.step()
                return statement.row.int64(at: 0)
            }
            if try differing(copied[...]) > 0 {
                for index in copied.indices {
                    let count = try differing(copied[index...index])
                    if count > 0 {
                        throw MigrationFailure.verification("\(mapping.name).\(copied[index].name): \(count) objects differ from the source's \(copied[index].source)")
                    }
                }
            }
        }
        report.verified.append("every entity mapping without a policy created one destination object per selected source object")
        report.verified.append("every attribute copied as it is equals its source value")
        if !policies.isEmpty {
            report.verified.append("every association a policy made points at an object that was written")
        }
    }

    // MARK: Finish

    func finish() throws {
        try connection.transaction(.immediate) {
            for table in Set(destinationLayout.entities.values.map(\.table)) {
                try connection.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT coalesce(max(Z_PK), 0) FROM \(quoteIdentifier(table))) WHERE Z_SUPER = 0 AND ('Z' || upper(Z_NAME)) = \(quoteLiteral(table))")
            }
            if !options.keepAssociations {
                for entry in associations.entries where !entry.keepsKeys {
                    try connection.execute("DROP TABLE IF EXISTS \(quoteIdentifier(entry.table))")
                }
            }
            for table in ["TERN_LINKS", "TERN_UNIQUE", "TERN_PROGRESS", "TERN_KEYS"] {
                try connection.execute("DROP TABLE IF EXISTS \(table)")
            }
            // The step is finished: this, not a table, marks it (the store keeps no Tern tables).
            try connection.setPragma("user_version", .integer(StepCheckpoint.completedMarker))
            for statement in destinationLayout.indexStatements {
                try connection.execute(statement.replacingOccurrences(of: "CREATE INDEX", with: "CREATE INDEX IF NOT EXISTS")
                    .replacingOccurrences(of: "CREATE UNIQUE INDEX", with: "CREATE UNIQUE INDEX IF NOT EXISTS"))
            }
        }
        try connection.execute("DETACH DATABASE src")
    }
}
