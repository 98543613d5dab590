/// How a transaction takes its locks (SQLite's `BEGIN DEFERRED|IMMEDIATE|EXCLUSIVE`).
public enum TransactionKind: String, Sendable {
    /// Locks are taken on first read or write: right for readers.
    case deferred = "DEFERRED"
    /// The write lock is taken at `BEGIN`, so a writer never fails half-way with `SQLITE_BUSY`
    /// when upgrading a read lock.
    case immediate = "IMMEDIATE"
    /// Like immediate; in WAL mode the same as immediate.
    case exclusive = "EXCLUSIVE"
}

extension Connection {
    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// If COMMIT itself fails (for instance `SQLITE_FULL`), the transaction is rolled back and the
    /// commit error is thrown: nothing is ever left half-applied.
    public func transaction<Result>(_ kind: TransactionKind = .deferred, _ body: () throws -> Result) throws -> Result {
        try beginTransaction(kind)
        let result: Result
        do {
            result = try body()
            try commit()
        } catch {
            rollbackIfOpen()
            throw error
        }
        return result
    }

    /// Runs `body` inside a savepoint: released when it returns, rolled back to when it throws.
    /// Savepoints nest, inside or outside a transaction.
    public func savepoint<Result>(_ name: String = "tern", _ body: () throws -> Result) throws -> Result {
        let quoted = quoteIdentifier(name)
        try execute("SAVEPOINT \(quoted)")
        let result: Result
        do {
            result = try body()
            try execute("RELEASE SAVEPOINT \(quoted)")
        } catch {
            // ROLLBACK TO keeps the savepoint on the stack; RELEASE pops it. Either may fail only if
            // SQLite already rolled the whole transaction back, which leaves nothing to undo.
            try? execute("ROLLBACK TO SAVEPOINT \(quoted)")
            try? execute("RELEASE SAVEPOINT \(quoted)")
            throw error
        }
        return result
    }

    /// Begins a transaction for callers that commit across calls (a writer committing batches).
    public func beginTransaction(_ kind: TransactionKind = .deferred) throws {
        try cachedStatement("BEGIN \(kind.rawValue) TRANSACTION").run()
    }

    /// Commits the transaction `beginTransaction` opened; throws (e.g. `SQLITE_BUSY`) when it cannot.
    public func commit() throws {
        try cachedStatement("COMMIT TRANSACTION").run()
    }

    /// Rolls back the transaction `beginTransaction` opened; throws if none is open.
    public func rollback() throws {
        try cachedStatement("ROLLBACK TRANSACTION").run()
    }

    /// Rolls back if a transaction is still open. SQLite may already have rolled back on its own
    /// (after `SQLITE_FULL` or `SQLITE_IOERR`), in which case there is nothing to do.
    private func rollbackIfOpen() {
        if !isAutocommit {
            try? rollback()
        }
    }
}
