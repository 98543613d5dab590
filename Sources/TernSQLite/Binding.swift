import CSQLite

/// A Swift value that can be bound to a statement parameter.
public protocol SQLiteBindable {
    /// Binds `self` to the 1-based parameter `index`.
    func bind(to statement: Statement, at index: Int) throws
}

extension Statement {
    /// Binds an integer. Typed binds allocate nothing: use them on hot paths.
    public func bind(_ value: Int64, at index: Int) throws {
        try check(sqlite3_bind_int64(try liveHandle(), Int32(index), value))
    }

    /// Binds a double.
    ///
    /// - Throws: `SQLITE_MISMATCH` for NaN: SQLite would silently store NULL instead.
    public func bind(_ value: Double, at index: Int) throws {
        guard !value.isNaN else {
            throw SQLiteError(code: .SQLITE_MISMATCH, message: "NaN cannot be stored: SQLite turns it into NULL (parameter \(index))", sql: sql)
        }
        try check(sqlite3_bind_double(try liveHandle(), Int32(index), value))
    }

    /// Binds text (SQLite copies the bytes). An empty string binds as empty text, not NULL.
    public func bind(_ value: String, at index: Int) throws {
        let handle = try liveHandle()
        var value = value
        let code = value.withUTF8 { bytes in
            sqlite3_bind_text64(
                handle, Int32(index),
                bytes.baseAddress.map { UnsafeRawPointer($0) }
                    .map { $0.assumingMemoryBound(to: CChar.self) } ?? emptyText, UInt64(bytes.count),
                tern_sqlite_transient(), UInt8(SQLITE_UTF8))
        }
        try check(code)
    }

    /// Binds UTF-8 bytes as text without going through `String` (SQLite copies them).
    public func bindText(_ bytes: UnsafeRawBufferPointer, at index: Int) throws {
        let pointer = bytes.baseAddress?.assumingMemoryBound(to: CChar.self) ?? emptyText
        try check(
            sqlite3_bind_text64(
                try liveHandle(), Int32(index), pointer, UInt64(bytes.count),
                tern_sqlite_transient(), UInt8(SQLITE_UTF8)))
    }

    /// Binds bytes as a blob (SQLite copies them). An empty buffer binds as an empty blob, not NULL.
    public func bindBlob(_ bytes: UnsafeRawBufferPointer, at index: Int) throws {
        let handle = try liveHandle()
        guard let start = bytes.baseAddress, bytes.count > 0 else {
            // A NULL pointer would bind NULL; a zero-length zeroblob is the empty blob.
            try check(sqlite3_bind_zeroblob64(handle, Int32(index), 0))
            return
        }
        try check(sqlite3_bind_blob64(handle, Int32(index), start, UInt64(bytes.count), tern_sqlite_transient()))
    }

    /// Binds NULL.
    public func bindNull(at index: Int) throws {
        try check(sqlite3_bind_null(try liveHandle(), Int32(index)))
    }

    /// Binds `values` to parameters 1, 2, … in order.
    ///
    /// - Throws: `SQLITE_RANGE` when the count differs from `parameterCount`.
    public func bind(_ values: [any SQLiteBindable]) throws {
        guard values.count == parameterCount else {
            throw SQLiteError(code: .SQLITE_RANGE, message: "\(values.count) values for \(parameterCount) parameters", sql: sql)
        }
        for (offset, value) in values.enumerated() {
            try value.bind(to: self, at: offset + 1)
        }
    }

    private func check(_ code: Int32) throws {
        guard code == SQLITE_OK else { throw error(code) }
    }
}

/// A NUL byte to point at for empty text: a NULL pointer would bind NULL.
nonisolated(unsafe) private let emptyText: UnsafePointer<CChar> = {
    let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
    pointer.initialize(to: 0)
    return UnsafePointer(pointer)
}()

extension Int64: SQLiteBindable {
    /// Binds the integer as SQLite INTEGER.
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(self, at: index) }
}

extension Int: SQLiteBindable {
    /// Binds the integer as a 64-bit SQLite INTEGER.
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(Int64(self), at: index) }
}

extension Int32: SQLiteBindable {
    /// Binds the integer as a 64-bit SQLite INTEGER.
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(Int64(self), at: index) }
}

extension Bool: SQLiteBindable {
    /// Booleans are stored as 0 and 1, as Core Data does.
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(self ? 1 as Int64 : 0, at: index) }
}

extension Double: SQLiteBindable {
    /// Binds the number as SQLite REAL; NaN throws `SQLITE_MISMATCH` rather than becoming NULL.
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(self, at: index) }
}

extension String: SQLiteBindable {
    /// Binds the string as UTF-8 TEXT; an empty string binds as empty text, not NULL.
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(self, at: index) }
}

extension Array: SQLiteBindable where Element == UInt8 {
    /// Binds the bytes as a BLOB; an empty array binds as an empty blob, not NULL.
    public func bind(to statement: Statement, at index: Int) throws {
        try withUnsafeBytes { try statement.bindBlob($0, at: index) }
    }
}

extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    /// Binds nil as NULL, and a value as that value binds itself.
    public func bind(to statement: Statement, at index: Int) throws {
        switch self {
        case .none: try statement.bindNull(at: index)
        case .some(let value): try value.bind(to: statement, at: index)
        }
    }
}

extension SQLiteValue: SQLiteBindable {
    /// Binds the value in its own storage class.
    public func bind(to statement: Statement, at index: Int) throws {
        switch self {
        case .null: try statement.bindNull(at: index)
        case .integer(let value): try statement.bind(value, at: index)
        case .real(let value): try statement.bind(value, at: index)
        case .text(let value): try statement.bind(value, at: index)
        case .blob(let value): try value.bind(to: statement, at: index)
        }
    }
}
