import CSQLite
import Synchronization

/// One open SQLite database connection.
///
/// A connection is used by one thread at a time: it is not `Sendable`, so the compiler keeps it
/// where it was made or hands it on whole (`sending`). That is why it is opened with
/// `SQLITE_OPEN_NOMUTEX`: SQLite's own per-call locking would only cost time.
///
/// `close()` finalizes cached statements and fails loudly if a statement made by `prepare` is still
/// alive. Releasing the connection without `close()` uses `sqlite3_close_v2`, which defers the close
/// until the last such statement is finalized, so a statement never points at freed memory.
public final class Connection {
    /// How the file is opened.
    public enum Mode: Sendable {
        /// Reads only; writes fail with `SQLITE_READONLY`. The file must exist.
        case readOnly
        /// Reads and writes; the file must exist.
        case readWrite
        /// Reads and writes; the file is created if missing.
        case readWriteCreate

        var flags: Int32 {
            switch self {
            case .readOnly: SQLITE_OPEN_READONLY
            case .readWrite: SQLITE_OPEN_READWRITE
            case .readWriteCreate: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
            }
        }
    }

    /// Options applied when the connection opens.
    public struct Configuration: Sendable {
        /// Whether the connection may write, and whether a missing file is created.
        public var mode: Mode
        /// How long a statement waits for another connection's lock before `SQLITE_BUSY`.
        public var busyTimeout: Duration
        /// Statements kept prepared by `cachedStatement(_:)`; the least recently used is dropped.
        public var statementCacheCapacity: Int

        /// Options with the given values; the defaults create the file if missing and wait 5 s for locks.
        public init(mode: Mode = .readWriteCreate, busyTimeout: Duration = .seconds(5), statementCacheCapacity: Int = 64) {
            self.mode = mode
            self.busyTimeout = busyTimeout
            self.statementCacheCapacity = statementCacheCapacity
        }
    }

    /// The raw handle, for the layer's own types only.
    private(set) var handle: OpaquePointer?
    /// The path the connection was opened with (`:memory:` for an in-memory database).
    public let path: String
    let statementCache: StatementCache
    /// What the progress handler asks (`interrupt(when:)`); kept alive while it is installed.
    private var stopCondition: StopCondition?
    /// The one database statements may read, once `restrictReads(to:)` set it.
    private var readScope: ReadScope?

    /// Opens (or creates) the database at `path`.
    /// - Throws: `SQLiteError` with `SQLITE_CANTOPEN` when the file cannot be opened in `mode`.
    public init(path: String, configuration: Configuration = Configuration()) throws {
        self.path = path
        self.statementCache = StatementCache(capacity: configuration.statementCacheCapacity)
        var db: OpaquePointer?
        let flags = configuration.mode.flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        let code = sqlite3_open_v2(path, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            let error = SQLiteError(code: code, connection: db, sql: nil)
            sqlite3_close(db)
            throw SQLiteError(code: error.code, message: "\(error.message): \(path)")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        // A quoted name is always a name: one that names nothing is an error, never a string.
        try check(tern_sqlite_disable_double_quoted_strings(db))
        let milliseconds =
            configuration.busyTimeout.components.seconds * 1000
            + configuration.busyTimeout.components.attoseconds / 1_000_000_000_000_000
        try check(sqlite3_busy_timeout(db, Int32(clamping: milliseconds)))
        if Self.syncsAreDeferred { try check(sqlite3_exec(db, "PRAGMA synchronous = OFF", nil, nil, nil)) }
    }

    private static let deferrals = Mutex(0)

    /// True while `deferringSyncs` runs anywhere in the process.
    public static var syncsAreDeferred: Bool { deferrals.withLock { $0 > 0 } }

    /// Runs `body` with the connections opened meanwhile syncing nothing (`synchronous = OFF`):
    /// for files that need no durability of their own until their owner syncs them itself
    /// (a live run's private copies, which a reboot makes it copy again anyway).
    public static func deferringSyncs<Result>(_ body: () throws -> Result) rethrows -> Result {
        deferrals.withLock { $0 += 1 }
        defer { deferrals.withLock { $0 -= 1 } }
        return try body()
    }

    /// `synchronous = NORMAL` (a commit in WAL mode waits for no disk, a checkpoint does),
    /// or `OFF` while syncs are deferred.
    public func syncNormally() throws {
        try execute(Self.syncsAreDeferred ? "PRAGMA synchronous = OFF" : "PRAGMA synchronous = NORMAL")
    }

    deinit {
        if handle != nil {
            statementCache.removeAll()
            sqlite3_close_v2(handle)
        }
    }

    /// Closes the connection now, finalizing cached statements first.
    ///
    /// - Throws: `SQLiteError` with `SQLITE_BUSY` if a statement made by `prepare` is still alive.
    ///   The connection then stays open and usable.
    public func close() throws {
        guard let handle else { return }
        statementCache.removeAll()
        let code = sqlite3_close(handle)
        guard code == SQLITE_OK else {
            throw SQLiteError(code: code, connection: handle, sql: nil)
        }
        self.handle = nil
    }

    /// The live handle, or a misuse error once closed.
    func openHandle() throws -> OpaquePointer {
        guard let handle else {
            throw SQLiteError(code: .SQLITE_MISUSE, message: "the connection to \(path) is closed")
        }
        return handle
    }

    /// Throws the connection's error unless `code` is `SQLITE_OK`.
    func check(_ code: Int32, sql: String? = nil) throws {
        guard code == SQLITE_OK else {
            throw SQLiteError(code: code, connection: handle, sql: sql)
        }
    }

    // MARK: Running SQL

    /// Prepares one statement. The caller owns it; it is finalized when released.
    public func prepare(_ sql: String) throws -> Statement {
        try Statement(connection: self, sql: sql)
    }

    /// Returns a prepared statement for `sql` from the cache, reset and with its bindings cleared.
    ///
    /// Use it for statements run once per batch or per row; do not keep it across another call
    /// with the same SQL, which returns the same object.
    public func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = statementCache.statement(for: sql) {
            statement.reset()
            statement.clearBindings()
            return statement
        }
        let statement = try prepare(sql)
        statementCache.insert(statement, for: sql)
        return statement
    }

    /// Runs every statement in `sql` (a script separated by `;`), discarding any rows.
    ///
    /// A failure names the one statement of the script that failed.
    public func execute(_ sql: String) throws {
        let db = try openHandle()
        try sql.withCString { start in
            var next: UnsafePointer<CChar>? = start
            while let current = next, current.pointee != 0 {
                var statementHandle: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let code = sqlite3_prepare_v3(db, current, -1, 0, &statementHandle, &tail)
                let text =
                    tail.map { String(decoding: UnsafeRawBufferPointer(start: current, count: $0 - current), as: UTF8.self) }
                    ?? String(cString: current)
                guard code == SQLITE_OK else {
                    throw SQLiteError(code: code, connection: db, sql: text.trimmed)
                }
                next = tail
                guard let statementHandle else { continue }  // whitespace or a comment
                defer { sqlite3_finalize(statementHandle) }
                var stepCode = sqlite3_step(statementHandle)
                while stepCode == SQLITE_ROW {
                    stepCode = sqlite3_step(statementHandle)
                }
                guard stepCode == SQLITE_DONE else {
                    throw SQLiteError(code: stepCode, connection: db, sql: text.trimmed)
                }
            }
        }
    }

    /// Prepares, binds and runs one statement that returns no rows.
    public func execute(_ sql: String, _ arguments: any SQLiteBindable...) throws {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        try statement.run()
    }

    /// The first column of the first row of `sql`, or `nil` when there is no row.
    public func scalar(_ sql: String, _ arguments: any SQLiteBindable...) throws -> SQLiteValue? {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        let value = statement.row.value(at: 0)
        try statement.finishWriting()
        return value
    }

    // MARK: State

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int {
        handle.map { Int(sqlite3_changes64($0)) } ?? 0
    }

    /// True while no explicit transaction is open.
    public var isAutocommit: Bool {
        handle.map { sqlite3_get_autocommit($0) != 0 } ?? true
    }

    /// True when the connection cannot write (opened read-only, or the file is read-only).
    public var isReadOnly: Bool {
        handle.map { sqlite3_db_readonly($0, "main") == 1 } ?? true
    }

    /// Statements of this connection that have not been finalized, cached ones included.
    public var liveStatementCount: Int {
        guard let handle else { return 0 }
        var count = 0
        var statement = sqlite3_next_stmt(handle, nil)
        while let current = statement {
            count += 1
            statement = sqlite3_next_stmt(handle, current)
        }
        return count
    }

    /// Asks a running statement to stop at its next opportunity with `SQLITE_INTERRUPT`.
    public func interrupt() {
        if let handle { sqlite3_interrupt(handle) }
    }

    /// Makes running statements fail with `SQLITE_INTERRUPT` soon after `stop` returns true:
    /// SQLite asks it every few thousand virtual-machine instructions, from the thread running
    /// the statement, so one long query (a verification scan, an index build) stops within
    /// milliseconds of a signal rather than when it ends.
    public func interrupt(when stop: @escaping @Sendable () -> Bool) throws {
        let condition = StopCondition(stop)
        stopCondition = condition
        sqlite3_progress_handler(
            try openHandle(), 4096,
            { context in
                guard let context else { return 0 }
                return Unmanaged<StopCondition>.fromOpaque(context).takeUnretainedValue().isMet() ? 1 : 0
            }, Unmanaged.passUnretained(condition).toOpaque())
    }

    /// Lets statements prepared from now on read tables of the database `schema` only (an
    /// attached name): one that reads a table of any other — `main`, `temp`, another attached
    /// database, whatever unqualified names resolve to — fails to prepare, as SQLite's
    /// authorizer denies the read. For results that must depend on one database alone.
    public func restrictReads(to schema: String) throws {
        // An unqualified name finds a table of temp, then main, then the attached databases:
        // a temporary table of each of `schema`'s names takes it first, so it is refused too.
        // SQLite's own tables cannot be shadowed: the authorizer refuses them below.
        var names: [String] = []
        let tables = try prepare("SELECT name FROM \(quoteIdentifier(schema)).sqlite_master WHERE type IN ('table', 'view')")
        var rows = tables.rows()
        while let row = try rows.next() { if let name = row.text(at: 0), !ReadScope.isSQLiteOwn(name) { names.append(name) } }
        // One transaction for all of them (not `temp_store`, whose change drops temp's tables).
        try transaction(.deferred) {
            for name in names { try execute("CREATE TEMP TABLE IF NOT EXISTS \(quoteIdentifier(name)) (shadow)") }
        }
        let scope = ReadScope(schema)
        readScope = scope
        sqlite3_set_authorizer(
            try openHandle(),
            { context, action, table, _, database, _ in
                guard action == SQLITE_READ, let context else { return SQLITE_OK }
                let scope = Unmanaged<ReadScope>.fromOpaque(context).takeUnretainedValue()
                // SQLite's own tables (sqlite_sequence, sqlite_stat1, …) are in every database.
                if let table, ReadScope.isRefusedEverywhere(String(cString: table)) { return SQLITE_DENY }
                return database.map { String(cString: $0) } == scope.schema ? SQLITE_OK : SQLITE_DENY
            }, Unmanaged.passUnretained(scope).toOpaque())
    }

    /// Keeps the `-wal` and `-shm` files when this connection closes (`SQLITE_FCNTL_PERSIST_WAL`).
    /// The last connection to close deletes them by name otherwise, which is wrong once the
    /// database was renamed away: the names may belong to another database by then.
    public func keepWALOnClose() throws {
        var persist: Int32 = 1
        try check(sqlite3_file_control(try openHandle(), "main", SQLITE_FCNTL_PERSIST_WAL, &persist))
    }

    /// The SQLite library version, e.g. "3.40.1".
    public static var libraryVersion: String {
        String(cString: sqlite3_libversion())
    }
}

/// A stop predicate with an address SQLite's progress handler can carry.
/// The database `Connection.restrictReads(to:)` lets statements read, kept alive with it.
private final class ReadScope {
    let schema: String

    init(_ schema: String) {
        self.schema = schema
    }

    /// Whether `table` is one of SQLite's own, whose names SQLite reserves in any case.
    static func isSQLiteOwn(_ table: String) -> Bool { table.lowercased().hasPrefix("sqlite_") }

    /// Whether reading `table` is refused wherever it is: SQLite's own tables other than the
    /// schema (`sqlite_sequence`, `sqlite_stat1`, …) are in any database, and cannot be
    /// shadowed.
    static func isRefusedEverywhere(_ table: String) -> Bool {
        isSQLiteOwn(table) && !["sqlite_master", "sqlite_schema"].contains(table.lowercased())
    }
}

private final class StopCondition: Sendable {
    let isMet: @Sendable () -> Bool

    init(_ isMet: @escaping @Sendable () -> Bool) {
        self.isMet = isMet
    }
}

extension String {
    fileprivate var trimmed: String {
        var view = Substring(self)
        while let first = view.first, first.isWhitespace || first == ";" { view.removeFirst() }
        while let last = view.last, last.isWhitespace || last == ";" { view.removeLast() }
        return String(view)
    }
}
