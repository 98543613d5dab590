import CSQLite

/// An SQLite result code, primary or extended.
///
/// Extended codes keep their primary family in the low byte, so a `switch` over a primary code
/// matches every extended code of that family (`case .SQLITE_CONSTRAINT:` matches
/// `SQLITE_CONSTRAINT_UNIQUE`), as GRDB does.
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as SQLite returns it: the primary code in the low byte, an extended code's detail above it.
    public let rawValue: Int32

    /// The code for any primary or extended value SQLite returns.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The primary code of this (possibly extended) code.
    public var primary: ResultCode {
        ResultCode(rawValue: rawValue & 0xFF)
    }

    /// SQLite's English description of the code, e.g. "constraint failed".
    public var description: String {
        "\(rawValue) (\(String(cString: sqlite3_errstr(rawValue))))"
    }

    /// Matches a primary code pattern against any code of its family, and an extended pattern exactly.
    public static func ~= (pattern: ResultCode, code: ResultCode) -> Bool {
        if pattern.rawValue == pattern.primary.rawValue {
            return pattern.rawValue == code.primary.rawValue
        }
        return pattern.rawValue == code.rawValue
    }

    /// Whether the code is about a file rather than the SQL or the data: the disk or a file
    /// failed, or another connection held a lock on one longer than the busy timeout.
    public var concernsFiles: Bool {
        [ResultCode.SQLITE_IOERR, .SQLITE_FULL, .SQLITE_CANTOPEN, .SQLITE_CORRUPT, .SQLITE_NOTADB, .SQLITE_BUSY].contains(primary)
    }

    /// The system call an `SQLITE_IOERR_*` code names ("write", "fsync", …); nil for others.
    public var ioOperation: String? {
        guard primary == .SQLITE_IOERR, rawValue >> 8 != 0 else { return nil }
        let operations = [
            1: "read", 2: "read (short)", 3: "write", 4: "fsync", 5: "directory fsync", 6: "truncate", 7: "fstat",
            8: "unlock", 9: "read lock", 10: "delete", 12: "memory allocation", 13: "access", 14: "reserved-lock check",
            15: "lock", 16: "close", 18: "shared-memory open", 19: "shared-memory size", 21: "shared-memory map",
            22: "seek", 24: "memory-map", 25: "temporary-directory lookup", 26: "path conversion",
        ]
        return operations[Int(rawValue >> 8)] ?? "I/O operation \(rawValue >> 8)"
    }

    /// Successful result.
    public static let SQLITE_OK = ResultCode(rawValue: CSQLite.SQLITE_OK)
    /// Generic error, when no more specific code applies (an SQL syntax error, a missing table).
    public static let SQLITE_ERROR = ResultCode(rawValue: CSQLite.SQLITE_ERROR)
    /// An internal malfunction in SQLite.
    public static let SQLITE_INTERNAL = ResultCode(rawValue: CSQLite.SQLITE_INTERNAL)
    /// The access mode asked for a newly created database could not be provided.
    public static let SQLITE_PERM = ResultCode(rawValue: CSQLite.SQLITE_PERM)
    /// An operation was aborted before it completed, e.g. by a ROLLBACK.
    public static let SQLITE_ABORT = ResultCode(rawValue: CSQLite.SQLITE_ABORT)
    /// Another connection holds a lock on the database file (past the busy timeout).
    public static let SQLITE_BUSY = ResultCode(rawValue: CSQLite.SQLITE_BUSY)
    /// A conflict within the same connection (or a shared cache), e.g. dropping a table being read.
    public static let SQLITE_LOCKED = ResultCode(rawValue: CSQLite.SQLITE_LOCKED)
    /// SQLite could not allocate the memory it needed.
    public static let SQLITE_NOMEM = ResultCode(rawValue: CSQLite.SQLITE_NOMEM)
    /// A write was attempted on a database the connection may not change.
    public static let SQLITE_READONLY = ResultCode(rawValue: CSQLite.SQLITE_READONLY)
    /// A read-only connection met a hot journal it would have to roll back.
    public static let SQLITE_READONLY_ROLLBACK = ResultCode(rawValue: CSQLite.SQLITE_READONLY | (3 << 8))
    /// The operation was interrupted on request (`Connection.interrupt()` or `interrupt(when:)`).
    public static let SQLITE_INTERRUPT = ResultCode(rawValue: CSQLite.SQLITE_INTERRUPT)
    /// The operating system reported an I/O error; the extended code names the call (`ioOperation`).
    public static let SQLITE_IOERR = ResultCode(rawValue: CSQLite.SQLITE_IOERR)
    /// The database file is malformed.
    public static let SQLITE_CORRUPT = ResultCode(rawValue: CSQLite.SQLITE_CORRUPT)
    /// An unknown opcode in `sqlite3_file_control()` (used internally by SQLite).
    public static let SQLITE_NOTFOUND = ResultCode(rawValue: CSQLite.SQLITE_NOTFOUND)
    /// A write failed because the disk (or the temporary-file space) is full.
    public static let SQLITE_FULL = ResultCode(rawValue: CSQLite.SQLITE_FULL)
    /// SQLite could not open a file: the database, its journal, or a temporary file.
    public static let SQLITE_CANTOPEN = ResultCode(rawValue: CSQLite.SQLITE_CANTOPEN)
    /// A problem with SQLite's file-locking protocol (WAL mode, under heavy contention).
    public static let SQLITE_PROTOCOL = ResultCode(rawValue: CSQLite.SQLITE_PROTOCOL)
    /// The schema changed since the statement was prepared (and re-preparing it did not help).
    public static let SQLITE_SCHEMA = ResultCode(rawValue: CSQLite.SQLITE_SCHEMA)
    /// A string or blob exceeds SQLite's length limit (`SQLITE_MAX_LENGTH`).
    public static let SQLITE_TOOBIG = ResultCode(rawValue: CSQLite.SQLITE_TOOBIG)
    /// A constraint was violated (UNIQUE, NOT NULL, PRIMARY KEY, CHECK, …); as a `case` pattern it
    /// matches every extended constraint code.
    public static let SQLITE_CONSTRAINT = ResultCode(rawValue: CSQLite.SQLITE_CONSTRAINT)
    /// A datatype mismatch; Tern also raises it for a NaN bound as a parameter.
    public static let SQLITE_MISMATCH = ResultCode(rawValue: CSQLite.SQLITE_MISMATCH)
    /// The SQLite API was used incorrectly (e.g. a statement used after it was finalized).
    public static let SQLITE_MISUSE = ResultCode(rawValue: CSQLite.SQLITE_MISUSE)
    /// A parameter index out of range; Tern also raises it when the number of values bound is wrong.
    public static let SQLITE_RANGE = ResultCode(rawValue: CSQLite.SQLITE_RANGE)
    /// The file is not an SQLite database.
    public static let SQLITE_NOTADB = ResultCode(rawValue: CSQLite.SQLITE_NOTADB)
    /// `sqlite3_step()` has another row ready (not an error).
    public static let SQLITE_ROW = ResultCode(rawValue: CSQLite.SQLITE_ROW)
    /// `sqlite3_step()` has finished running the statement (not an error).
    public static let SQLITE_DONE = ResultCode(rawValue: CSQLite.SQLITE_DONE)

    /// A UNIQUE constraint failed.
    public static let SQLITE_CONSTRAINT_UNIQUE = ResultCode(rawValue: CSQLite.SQLITE_CONSTRAINT | (8 << 8))
    /// A PRIMARY KEY constraint failed.
    public static let SQLITE_CONSTRAINT_PRIMARYKEY = ResultCode(rawValue: CSQLite.SQLITE_CONSTRAINT | (6 << 8))
    /// A NOT NULL constraint failed.
    public static let SQLITE_CONSTRAINT_NOTNULL = ResultCode(rawValue: CSQLite.SQLITE_CONSTRAINT | (5 << 8))
    /// The database file was moved or unlinked since it was opened, so it cannot be written.
    public static let SQLITE_READONLY_DBMOVED = ResultCode(rawValue: CSQLite.SQLITE_READONLY | (4 << 8))
}
