import TernSQLite

/// The objects a live catch-up round rewrites, and those changed since the last full
/// verification, as tables in the migrated store (`TERN_LIVE_*`): committed with the round,
/// so the checks that read the store from connections of their own see them too.
package enum LiveChanges {
    /// This round's objects: `(source table, key)`.
    static let round = "TERN_LIVE_CHANGED"
    /// Every object changed since the last full verification.
    static let unverified = "TERN_LIVE_UNVERIFIED"
    /// How far the change log is applied (one row), in the migrated store and in the mirror.
    static let state = "TERN_LIVE_STATE"

    /// Creates the tables where they are missing.
    static func create(on connection: Connection) throws {
        for table in [round, unverified] {
            try connection.execute("CREATE TABLE IF NOT EXISTS \(table) (tbl TEXT NOT NULL, key INTEGER NOT NULL, PRIMARY KEY (tbl, key)) WITHOUT ROWID")
        }
    }

    /// Every table catching up keeps in the migrated store.
    static let tables = [round, unverified, state]

    /// SQL listing this round's changed keys of source table `table`.
    static func keys(of table: String) -> String {
        "SELECT key FROM \(round) WHERE tbl = \(quoteLiteral(table))"
    }

    /// SQL listing every key changed since the last full verification, of any table: a check
    /// restricted to them over-covers, never misses.
    static var unverifiedKeys: String { "SELECT key FROM \(unverified)" }
}
