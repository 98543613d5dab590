import CSQLite

/// An error reported by SQLite, with everything needed to act on it without a debugger.
///
/// It carries the extended result code (match families with `case .SQLITE_CONSTRAINT:`), SQLite's
/// message, and the SQL that was running when there was one.
public struct SQLiteError: Error, Equatable, CustomStringConvertible {
    /// The extended result code.
    public let code: ResultCode
    /// SQLite's message for the failure (`sqlite3_errmsg`), or Tern's own for misuse it caught first.
    public let message: String
    /// The statement that failed, when the failure belongs to one.
    public let sql: String?

    public init(code: ResultCode, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// Reads the connection's last error; `code` is the return code of the failed call.
    init(code: Int32, connection: OpaquePointer?, sql: String? = nil) {
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        // The connection's extended code belongs to the same failure only if its family matches.
        let resolved = (extended & 0xFF) == (code & 0xFF) ? extended : code
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        self.init(code: ResultCode(rawValue: resolved), message: message, sql: sql)
    }

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql {
            text += " — while running: \(sql)"
        }
        return text
    }
}
