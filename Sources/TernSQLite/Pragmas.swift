/// SQLite's journal modes (`PRAGMA journal_mode`).
public enum JournalMode: String, Sendable {
    case delete, truncate, persist, memory, wal, off
}

extension Connection {
    /// Reads a pragma's value, e.g. `pragma("page_size")`.
    public func pragma(_ name: String) throws -> SQLiteValue? {
        try scalar("PRAGMA \(try pragmaName(name))")
    }

    /// Sets a pragma and returns what SQLite reports afterwards (journal_mode reports the mode it
    /// actually chose, which may differ from the one asked for).
    @discardableResult
    public func setPragma(_ name: String, _ value: SQLiteValue) throws -> SQLiteValue? {
        let statement = try prepare("PRAGMA \(try pragmaName(name)) = \(value.sqlLiteral)")
        guard try statement.step() else { return nil }
        let value = statement.row.value(at: 0)
        try statement.finishWriting()
        return value
    }

    /// Sets the journal mode and checks SQLite accepted it.
    public func setJournalMode(_ mode: JournalMode) throws {
        let reported = try setPragma("journal_mode", .text(mode.rawValue))?.text?.lowercased()
        guard reported == mode.rawValue else {
            throw SQLiteError(
                code: .SQLITE_ERROR, message: "journal_mode \(mode.rawValue) was refused; it is \(reported ?? "unknown")", sql: "PRAGMA journal_mode")
        }
    }

    /// Copies every frame of the `-wal` into the main file and empties the `-wal`, syncing both,
    /// so the main file alone holds the database — before it is linked or renamed elsewhere.
    /// Closing a connection also checkpoints, but ignores a failure there; this throws it.
    ///
    /// - Throws: `SQLiteError` for a failed write or sync, and `SQLITE_BUSY` when another
    ///   connection's reading kept frames in the `-wal`.
    public func checkpointWAL() throws {
        let sql = "PRAGMA wal_checkpoint(TRUNCATE)"
        let statement = try prepare(sql)
        guard try statement.step(), statement.row.int64(at: 0) == 0 else {
            throw SQLiteError(code: .SQLITE_BUSY, message: "the -wal could not be emptied into the main file: another connection is reading it", sql: sql)
        }
    }

    /// Every table of the database except SQLite's own (`sqlite_…`), with its columns in
    /// order, tables by name.
    public func tableColumns() throws -> [(table: String, columns: [String])] {
        let statement = try prepare(
            """
            SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p
            WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY m.name, p.cid
            """)
        var tables: [(table: String, columns: [String])] = []
        var rows = statement.rows()
        while let row = try rows.next() {
            let (table, column) = (row.text(at: 0) ?? "", row.text(at: 1) ?? "")
            if tables.last?.table == table { tables[tables.count - 1].columns.append(column) } else { tables.append((table, [column])) }
        }
        return tables
    }

    /// Pragma names cannot be bound, so they are checked to be plain `[schema.]name` words.
    private func pragmaName(_ name: String) throws -> String {
        let valid =
            !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
            }
        guard valid else {
            throw SQLiteError(code: .SQLITE_MISUSE, message: "not a pragma name: \(name)")
        }
        return name
    }
}
