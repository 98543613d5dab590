import CSQLite
import Foundation

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
    /// For a failure of the disk (I/O, full, cannot open, corrupt) or a lock held elsewhere
    /// (busy): the files of the connection,
    /// its main database first, then those attached (SQLite does not say which one failed), and
    /// the operating system's error.
    public let files: [String]
    /// The operating system's message for such a failure (`sqlite3_system_errno`), when it reported one.
    public let systemError: String?

    /// An error with these parts, for failures Tern detects itself (and for tests).
    public init(code: ResultCode, message: String, sql: String? = nil, files: [String] = [], systemError: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
        self.files = files
        self.systemError = systemError
    }

    /// Reads the connection's last error; `code` is the return code of the failed call.
    init(code: Int32, connection: OpaquePointer?, sql: String? = nil) {
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        // The connection's extended code belongs to the same failure only if its family matches.
        let resolved = ResultCode(rawValue: (extended & 0xFF) == (code & 0xFF) ? extended : code)
        let message =
            connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        guard let connection, resolved.concernsFiles else {
            self.init(code: resolved, message: message, sql: sql)
            return
        }
        let errno = sqlite3_system_errno(connection)
        self.init(
            code: resolved, message: message, sql: sql, files: Self.files(of: connection),
            systemError: errno == 0 ? nil : String(cString: strerror(errno)))
    }

    /// The files of every database of `connection` (temporary and in-memory ones have none).
    private static func files(of connection: OpaquePointer) -> [String] {
        var files: [String] = []
        var index: Int32 = 0
        while let name = sqlite3_db_name(connection, index) {
            if let file = sqlite3_db_filename(connection, name), file.pointee != 0 {
                let path = String(cString: file)
                files.append(String(cString: name) == "main" ? path : "\(path) (attached as \(String(cString: name)))")
            }
            index += 1
        }
        return files
    }

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let operation = code.ioOperation { text += " (\(operation) failed\(systemError.map { ": \($0)" } ?? ""))" }
        if !files.isEmpty { text += " in " + files.joined(separator: " or ") }
        if code.primary == .SQLITE_BUSY { text += " (another connection kept a lock on it longer than this one waits)" }
        if let sql {
            text += " — while running: \(sql)"
        }
        return text
    }
}
