import CSQLite

/// A prepared statement that owns its `sqlite3_stmt` handle.
///
/// The handle is finalized exactly once: by `finalize()` or, failing that, by `deinit`; after
/// `finalize()` every use throws `SQLITE_MISUSE` instead of touching freed memory. A statement is
/// used on its connection's thread only (it is not `Sendable`).
public final class Statement {
    private(set) var handle: OpaquePointer?
    /// The owning connection's handle, for error messages. `sqlite3_close_v2` keeps it valid while
    /// this statement lives.
    private let databaseHandle: OpaquePointer
    /// The SQL this statement was prepared from.
    public let sql: String

    init(connection: Connection, sql: String) throws {
        let db = try connection.openHandle()
        self.databaseHandle = db
        self.sql = sql
        var statement: OpaquePointer?
        var trailingText = false
        let code = sql.withCString { start in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(db, start, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, &tail)
            var cursor = tail
            while let byte = cursor?.pointee, byte != 0 {
                if !Self.isBlank(UInt8(bitPattern: byte)) { trailingText = true }
                cursor = cursor?.successor()
            }
            return code
        }
        guard code == SQLITE_OK else {
            throw SQLiteError(code: code, connection: db, sql: sql)
        }
        guard let statement else {
            throw SQLiteError(code: .SQLITE_MISUSE, message: "no statement to prepare (the SQL is empty or only a comment)", sql: sql)
        }
        handle = statement
        if trailingText {
            finalize()
            throw SQLiteError(code: .SQLITE_MISUSE, message: "prepare takes one statement; use execute(_:) for a script", sql: sql)
        }
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\t")
            || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: ";")
    }

    deinit {
        finalize()
    }

    /// Releases the handle now. Calling it again, or letting `deinit` run after it, does nothing.
    public func finalize() {
        guard let handle else { return }
        // sqlite3_finalize returns the error of the last step, which `step()` already threw.
        sqlite3_finalize(handle)
        self.handle = nil
    }

    /// True once the handle was released.
    public var isFinalized: Bool { handle == nil }

    func liveHandle() throws -> OpaquePointer {
        guard let handle else {
            throw SQLiteError(code: .SQLITE_MISUSE, message: "the statement was finalized", sql: sql)
        }
        return handle
    }

    func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code, connection: databaseHandle, sql: sql)
    }

    // MARK: Shape

    /// The number of `?` parameters.
    public var parameterCount: Int {
        handle.map { Int(sqlite3_bind_parameter_count($0)) } ?? 0
    }

    /// The number of result columns.
    public var columnCount: Int {
        handle.map { Int(sqlite3_column_count($0)) } ?? 0
    }

    /// The names of the result columns, in order.
    public var columnNames: [String] {
        guard let handle else { return [] }
        return (0..<sqlite3_column_count(handle)).map { String(cString: sqlite3_column_name(handle, $0)) }
    }

    // MARK: Running

    /// Advances to the next row.
    ///
    /// - Returns: `true` when a row is ready in `row`, `false` when the statement is done.
    /// - Throws: `SQLiteError` for any other outcome; a failed step is never reported as the end.
    public func step() throws -> Bool {
        let code = sqlite3_step(try liveHandle())
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw error(code)
        }
    }

    /// For a statement that writes and has returned the row it was run for: steps it to its end,
    /// where an autocommit transaction commits, so that a failed commit (a write or fsync of the
    /// journal) is thrown rather than lost when the statement is reset. `PRAGMA journal_mode = WAL`
    /// on a new database is one: it returns "wal" first, and a failed fsync after that would
    /// leave the store in rollback mode with no error. Statements that only read have nothing to
    /// commit and are left where they are.
    public func finishWriting() throws {
        guard let handle, sqlite3_stmt_readonly(handle) == 0 else { return }
        while try step() {}
    }

    /// Steps to completion, ignoring rows, then resets so the statement can run again.
    public func run() throws {
        defer { reset() }
        while try step() {}
    }

    /// Rewinds the statement so it can run again; bindings are kept.
    ///
    /// `sqlite3_reset` repeats the error of the last failed step, which `step()` already threw, so
    /// its result carries no new information.
    public func reset() {
        if let handle { sqlite3_reset(handle) }
    }

    /// Sets every parameter back to NULL.
    public func clearBindings() {
        if let handle { sqlite3_clear_bindings(handle) }
    }

    /// The current row; valid after `step()` returned `true` and until the next step or reset.
    public var row: Row {
        Row(handle: handle!)
    }

    /// A cursor that steps through the statement's rows one at a time, holding one row in memory.
    public func rows() -> Cursor {
        Cursor(statement: self)
    }
}
