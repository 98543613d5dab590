import CSQLite

/// An SQLite result code, primary or extended.
///
/// Extended codes keep their primary family in the low byte, so a `switch` over a primary code
/// matches every extended code of that family (`case .SQLITE_CONSTRAINT:` matches
/// `SQLITE_CONSTRAINT_UNIQUE`), as GRDB does.
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

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
        let operations = [1: "read", 2: "read (short)", 3: "write", 4: "fsync", 5: "directory fsync", 6: "truncate", 7: "fstat",
                          8: "unlock", 9: "read lock", 10: "delete", 12: "memory allocation", 13: "access", 14: "reserved-lock check",
                          15: "lock", 16: "close", 18: "shared-memory open", 19: "shared-memory size", 21: "shared-memory map",
                          22: "seek", 24: "memory-map", 25: "temporary-directory lookup", 26: "path conversion"]
        return operations[Int(rawValue >> 8)] ?? "I/O operation \(rawValue >> 8)"
    }

    public static let SQLITE_OK = ResultCode(rawValue: CSQLite.SQLITE_OK)
    public static let SQLITE_ERROR = ResultCode(rawValue: CSQLite.SQLITE_ERROR)
    public static let SQLITE_INTERNAL = ResultCode(rawValue: CSQLite.SQLITE_INTERNAL)
    public static let SQLITE_PERM = ResultCode(rawValue: CSQLite.SQLITE_PERM)
    public static let SQLITE_ABORT = ResultCode(rawValue: CSQLite.SQLITE_ABORT)
    public static let SQLITE_BUSY = ResultCode(rawValue: CSQLite.SQLITE_BUSY)
    public static let SQLITE_LOCKED = ResultCode(rawValue: CSQLite.SQLITE_LOCKED)
    public static let SQLITE_NOMEM = ResultCode(rawValue: CSQLite.SQLITE_NOMEM)
    public static let SQLITE_READONLY = ResultCode(rawValue: CSQLite.SQLITE_READONLY)
    /// A read-only connection met a hot journal it would have to roll back.
    public static let SQLITE_READONLY_ROLLBACK = ResultCode(rawValue: CSQLite.SQLITE_READONLY | (3 << 8))
    public static let SQLITE_INTERRUPT = ResultCode(rawValue: CSQLite.SQLITE_INTERRUPT)
    public static let SQLITE_IOERR = ResultCode(rawValue: CSQLite.SQLITE_IOERR)
    public static let SQLITE_CORRUPT = ResultCode(rawValue: CSQLite.SQLITE_CORRUPT)
    public static let SQLITE_NOTFOUND = ResultCode(rawValue: CSQLite.SQLITE_NOTFOUND)
    public static let SQLITE_FULL = ResultCode(rawValue: CSQLite.SQLITE_FULL)
    public static let SQLITE_CANTOPEN = ResultCode(rawValue: CSQLite.SQLITE_CANTOPEN)
    public static let SQLITE_PROTOCOL = ResultCode(rawValue: CSQLite.SQLITE_PROTOCOL)
    public static let SQLITE_SCHEMA = ResultCode(rawValue: CSQLite.SQLITE_SCHEMA)
    public static let SQLITE_TOOBIG = ResultCode(rawValue: CSQLite.SQLITE_TOOBIG)
    public static let SQLITE_CONSTRAINT = ResultCode(rawValue: CSQLite.SQLITE_CONSTRAINT)
    public static let SQLITE_MISMATCH = ResultCode(rawValue: CSQLite.SQLITE_MISMATCH)
    public static let SQLITE_MISUSE = ResultCode(rawValue: CSQLite.SQLITE_MISUSE)
    public static let SQLITE_RANGE = ResultCode(rawValue: CSQLite.SQLITE_RANGE)
    public static let SQLITE_NOTADB = ResultCode(rawValue: CSQLite.SQLITE_NOTADB)
    public static let SQLITE_ROW = ResultCode(rawValue: CSQLite.SQLITE_ROW)
    public static let SQLITE_DONE = ResultCode(rawValue: CSQLite.SQLITE_DONE)

    public static let SQLITE_CONSTRAINT_UNIQUE = ResultCode(rawValue: CSQLite.SQLITE_CONSTRAINT | (8 << 8))
    public static let SQLITE_CONSTRAINT_PRIMARYKEY = ResultCode(rawValue: CSQLite.SQLITE_CONSTRAINT | (6 << 8))
    public static let SQLITE_CONSTRAINT_NOTNULL = ResultCode(rawValue: CSQLite.SQLITE_CONSTRAINT | (5 << 8))
    public static let SQLITE_READONLY_DBMOVED = ResultCode(rawValue: CSQLite.SQLITE_READONLY | (4 << 8))
}
