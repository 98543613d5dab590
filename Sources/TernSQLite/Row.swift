import CSQLite

/// The five storage classes of an SQLite value.
public enum StorageClass: Sendable, Equatable {
    case null, integer, real, text, blob
}

/// The current row of a statement: a view, not a copy.
///
/// Reading numbers allocates nothing; `withUnsafeText` and `withUnsafeBlob` read text and blobs
/// without copying them, which keeps a per-row hot path free of heap traffic. A `Row` is valid only
/// until its statement steps again or resets.
public struct Row {
    let handle: OpaquePointer

    /// The number of columns.
    public var count: Int { Int(sqlite3_column_count(handle)) }

    /// The storage class of the value in column `index` (0-based).
    public func storageClass(at index: Int) -> StorageClass {
        switch sqlite3_column_type(handle, Int32(index)) {
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        case SQLITE_BLOB: .blob
        default: .null
        }
    }

    /// Whether the value in column `index` (0-based) is NULL.
    public func isNull(at index: Int) -> Bool {
        sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL
    }

    /// The column as an integer (SQLite's conversion rules apply; NULL reads as 0).
    public func int64(at index: Int) -> Int64 {
        sqlite3_column_int64(handle, Int32(index))
    }

    /// The column as a double (SQLite's conversion rules apply; NULL reads as 0).
    public func double(at index: Int) -> Double {
        sqlite3_column_double(handle, Int32(index))
    }

    /// The column as text, or nil for NULL.
    public func text(at index: Int) -> String? {
        withUnsafeText(at: index) { bytes in
            bytes.map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// The column as bytes, or nil for NULL; an empty blob reads as `[]`.
    public func blob(at index: Int) -> [UInt8]? {
        withUnsafeBlob(at: index) { bytes in bytes.map { Array($0) } }
    }

    /// Lends the column's UTF-8 bytes without copying them; nil for NULL.
    public func withUnsafeText<Result>(at index: Int, _ body: (UnsafeRawBufferPointer?) throws -> Result) rethrows -> Result {
        let column = Int32(index)
        guard sqlite3_column_type(handle, column) != SQLITE_NULL else { return try body(nil) }
        let start = sqlite3_column_text(handle, column)  // before _bytes: the order SQLite documents
        let count = Int(sqlite3_column_bytes(handle, column))
        checkAllocation(start)
        return try body(UnsafeRawBufferPointer(start: start, count: count))
    }

    /// Lends the column's bytes without copying them; nil for NULL, an empty buffer for an empty blob.
    public func withUnsafeBlob<Result>(at index: Int, _ body: (UnsafeRawBufferPointer?) throws -> Result) rethrows -> Result {
        let column = Int32(index)
        guard sqlite3_column_type(handle, column) != SQLITE_NULL else { return try body(nil) }
        let start = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        if count > 0 { checkAllocation(start) }
        return try body(UnsafeRawBufferPointer(start: count > 0 ? start : nil, count: count))
    }

    /// The column as a self-describing value.
    public func value(at index: Int) -> SQLiteValue {
        switch storageClass(at: index) {
        case .null: .null
        case .integer: .integer(int64(at: index))
        case .real: .real(double(at: index))
        case .text: .text(text(at: index) ?? "")
        case .blob: .blob(blob(at: index) ?? [])
        }
    }

    /// Every column as values, in order.
    public var values: [SQLiteValue] {
        (0..<count).map { value(at: $0) }
    }

    /// SQLite returns NULL for a non-NULL value only when it could not allocate the conversion.
    private func checkAllocation(_ pointer: UnsafeRawPointer?) {
        if pointer == nil {
            let db = sqlite3_db_handle(handle)
            fatalError("SQLite ran out of memory reading a column: \(db.map { String(cString: sqlite3_errmsg($0)) } ?? "")")
        }
    }

    private func checkAllocation(_ pointer: UnsafePointer<UInt8>?) {
        checkAllocation(pointer.map { UnsafeRawPointer($0) })
    }
}

/// Steps through a statement's rows, holding only the current one.
///
/// `next()` throws on a failed step instead of ending early and throws the same error if asked
/// again; once done it resets the statement (so it can be bound and run again) and keeps
/// returning nil rather than silently restarting it.
public struct Cursor {
    /// The statement whose rows this cursor steps through.
    public let statement: Statement
    private var isFinished = false
    private var failure: (any Error)?

    init(statement: Statement) {
        self.statement = statement
    }

    /// The next row, or nil when there are no more.
    public mutating func next() throws -> Row? {
        if let failure { throw failure }
        guard !isFinished else { return nil }
        do {
            if try statement.step() {
                return statement.row
            }
        } catch {
            failure = error
            throw error
        }
        isFinished = true
        statement.reset()
        return nil
    }
}
