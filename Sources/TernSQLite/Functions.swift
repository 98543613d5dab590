import CSQLite

extension Connection {
    /// A function's body: arguments in, one value out. Throwing makes the SQL statement fail
    /// with the error's description.
    public typealias FunctionBody = ([SQLiteValue]) throws -> SQLiteValue

    /// Registers an SQL function implemented in Swift on this connection.
    ///
    /// - Parameters:
    ///   - name: the function's name in SQL.
    ///   - argumentCount: the exact number of arguments, or -1 for any.
    ///   - deterministic: lets SQLite factor calls out of loops and use the function in indexes.
    ///   - body: computes the result from the arguments; what it throws becomes the statement's error.
    public func createFunction(_ name: String, argumentCount: Int, deterministic: Bool = true, _ body: @escaping FunctionBody) throws {
        let box = Unmanaged.passRetained(FunctionBox(body)).toOpaque()
        let flags = SQLITE_UTF8 | (deterministic ? SQLITE_DETERMINISTIC : 0)
        let code = sqlite3_create_function_v2(
            try openHandle(), name, Int32(argumentCount), flags, box,
            { context, count, values in
                let box = Unmanaged<FunctionBox>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
                var arguments: [SQLiteValue] = []
                arguments.reserveCapacity(Int(count))
                for index in 0..<Int(count) {
                    arguments.append(SQLiteValue(functionArgument: values![index]))
                }
                do {
                    try box.body(arguments).setResult(of: context)
                } catch {
                    sqlite3_result_error(context, "\(error)", -1)
                }
            }, nil, nil,
            { pointer in
                if let pointer { Unmanaged<FunctionBox>.fromOpaque(pointer).release() }
            })
        guard code == SQLITE_OK else {
            // SQLite calls the destructor itself when registration fails.
            throw SQLiteError(code: code, connection: handle, sql: "function \(name)")
        }
    }
}

/// Keeps a function's body alive for SQLite; released by SQLite's destructor callback.
private final class FunctionBox {
    let body: Connection.FunctionBody
    init(_ body: @escaping Connection.FunctionBody) { self.body = body }
}

extension SQLiteValue {
    fileprivate init(functionArgument value: OpaquePointer?) {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: self = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: self = .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            let start = sqlite3_value_text(value)
            let count = Int(sqlite3_value_bytes(value))
            self = .text(start.map { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) } ?? "")
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            let start = sqlite3_value_blob(value)
            self = .blob(count > 0 && start != nil ? Array(UnsafeRawBufferPointer(start: start, count: count)) : [])
        default: self = .null
        }
    }

    fileprivate func setResult(of context: OpaquePointer?) {
        switch self {
        case .null: sqlite3_result_null(context)
        case .integer(let value): sqlite3_result_int64(context, value)
        case .real(let value): sqlite3_result_double(context, value)
        case .text(let value):
            // withCString keeps the bytes (embedded NULs included) alive for the copy SQLite makes.
            value.withCString { start in
                sqlite3_result_text64(context, start, UInt64(value.utf8.count), tern_sqlite_transient(), UInt8(SQLITE_UTF8))
            }
        case .blob(let bytes):
            if bytes.isEmpty {
                sqlite3_result_zeroblob(context, 0)
            } else {
                bytes.withUnsafeBytes { sqlite3_result_blob64(context, $0.baseAddress, UInt64($0.count), tern_sqlite_transient()) }
            }
        }
    }
}
