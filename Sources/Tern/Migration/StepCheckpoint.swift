import TernSQLite

/// Where a step stands, kept in the destination file itself so that it commits in the same
/// transaction as the rows it describes: never ahead of them, never behind.
///
/// A step is a sequence of units (an entity mapping's instance creation, one relationship's
/// links, …). Each unit records the last source key it finished and its count; a finished unit
/// is marked done. A finished step sets the file's `user_version` to `completedMarker`, in the
/// transaction that also removes Tern's tables.
struct StepCheckpoint {
    struct Unit {
        var lastKey: Int64 = 0
        var count = 0
        var done = false
    }

    /// 'TERN' in ASCII.
    static let completedMarker: Int64 = 0x5445_524E

    static let createStatements = [
        "CREATE TABLE IF NOT EXISTS TERN_PROGRESS (unit TEXT PRIMARY KEY, last_key INTEGER NOT NULL, count INTEGER NOT NULL, done INTEGER NOT NULL)",
        "CREATE TABLE IF NOT EXISTS TERN_KEYS (root TEXT PRIMARY KEY, next INTEGER NOT NULL)",
    ]

    private(set) var units: [String: Unit] = [:]
    private(set) var nextKeys: [String: Int64] = [:]

    /// An empty checkpoint, for a step that has nothing left to do.
    init() {}

    /// Reads what earlier runs committed (nothing for a new store), creating the tables if needed.
    init(connection: Connection) throws {
        for statement in Self.createStatements { try connection.execute(statement) }
        let progress = try connection.prepare("SELECT unit, last_key, count, done FROM TERN_PROGRESS")
        var rows = progress.rows()
        while let row = try rows.next() {
            units[row.text(at: 0)!] = Unit(lastKey: row.int64(at: 1), count: Int(row.int64(at: 2)), done: row.int64(at: 3) != 0)
        }
        let keys = try connection.prepare("SELECT root, next FROM TERN_KEYS")
        var keyRows = keys.rows()
        while let row = try keyRows.next() {
            nextKeys[row.text(at: 0)!] = row.int64(at: 1)
        }
    }

    subscript(unit: String) -> Unit {
        units[unit] ?? Unit()
    }

    /// Records a unit's progress and the key counters; call inside the transaction that wrote
    /// the rows.
    mutating func save(_ unit: String, lastKey: Int64 = 0, count: Int = 0, done: Bool = false, nextKeys keys: [String: Int64], on connection: Connection) throws {
        units[unit] = Unit(lastKey: lastKey, count: count, done: done)
        try connection.execute("INSERT INTO TERN_PROGRESS (unit, last_key, count, done) VALUES (?, ?, ?, ?) ON CONFLICT (unit) DO UPDATE SET last_key = excluded.last_key, count = excluded.count, done = excluded.done",
                               unit, lastKey, count, done)
        for (root, next) in keys where nextKeys[root] != next {
            try connection.execute("INSERT INTO TERN_KEYS (root, next) VALUES (?, ?) ON CONFLICT (root) DO UPDATE SET next = excluded.next", root, next)
            nextKeys[root] = next
        }
    }

    /// Whether the store at this connection holds a finished step.
    static func isCompleted(_ connection: Connection) throws -> Bool {
        try connection.pragma("user_version")?.int64 == completedMarker
    }
}

/// A migration stopped at a batch boundary because it was asked to (SIGINT, SIGTERM); its
/// checkpoint is committed and `--resume` continues from it.
extension MigrationInterrupted {
    /// Runs `body`, turning a statement interrupted because a stop was asked for
    /// (`Connection.interrupt(when:)`) into `MigrationInterrupted`.
    static func whenAsked<Result>(_ shouldStop: () -> Bool, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as SQLiteError where error.code.primary == .SQLITE_INTERRUPT && shouldStop() {
            throw MigrationInterrupted()
        }
    }
}

public struct MigrationInterrupted: Error, CustomStringConvertible {
    public var description: String { "interrupted; the work done so far is saved: run the same command with --resume to continue" }
}
