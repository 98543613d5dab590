import TernSQLite

extension StepMigrator {
    // MARK: Finish

    func finish() throws {
        try connection.transaction(.immediate) {
            // Z_MAX: the highest key handed out, which kept keys' high-water mark may exceed.
            for table in Set(destinationLayout.entities.values.map(\.table)) {
                let handedOut = (nextKeys[table] ?? 1) - 1
                try connection.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = max(\(handedOut), (SELECT coalesce(max(Z_PK), 0) FROM \(quoteIdentifier(table)))) WHERE Z_SUPER = 0 AND ('Z' || upper(Z_NAME)) = \(quoteLiteral(table))")
            }
            // The step is finished: the store keeps no Tern tables, and its user_version says so.
            try workspace.finish(keepingAssociations: options.keepAssociations)
            for statement in destinationLayout.indexStatements {
                try connection.execute(statement.replacingOccurrences(of: "CREATE INDEX", with: "CREATE INDEX IF NOT EXISTS")
                    .replacingOccurrences(of: "CREATE UNIQUE INDEX", with: "CREATE UNIQUE INDEX IF NOT EXISTS"))
            }
        }
        try connection.execute("DETACH DATABASE src")
    }
}
