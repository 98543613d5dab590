import TernSQLite

extension StepMigrator {
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
