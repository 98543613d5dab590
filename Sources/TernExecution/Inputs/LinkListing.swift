import TernSQLite
import TernStore
import TernPlanning
import TernDurability

/// A relationship's links as verification compares them: rows `owner, target, position,
/// inverse_position`, a position being a column's value, NULL, or a rank — the row's place in
/// its partition by some keys, `row_number()`.
struct LinkListing {
    enum Position {
        case null
        case value(String)
        /// `row_number() OVER (PARTITION BY partition ORDER BY keys…)`.
        case rank(partition: String, keys: [String])

        var window: String {
            switch self {
            case .null: "NULL"
            case .value(let column): column
            case .rank(let partition, let keys): "row_number() OVER (PARTITION BY \(partition) ORDER BY \(keys.joined(separator: ", ")))"
            }
        }
    }

    var owner: String
    var target: String
    var position: Position
    var inversePosition: Position
    /// What follows `FROM`: the table or subquery the rows come from, and any condition on them.
    var rows: String

    /// The links with their positions, ranked by window functions: what a message names a
    /// link from.
    var listed: String {
        "SELECT \(owner) AS owner, \(target) AS target, \(position.window) AS position, \(inversePosition.window) AS inverse_position FROM \(rows)"
    }

    /// Their count and checksum, ranked by window functions.
    var checksum: SQLFragment {
        SQLFragment("SELECT count(*), tern_checksum('NNNN', owner, target, position, inverse_position) FROM (\(listed))")
    }

    /// The same count and checksum with the rank worked out as the rows come, sorted by its
    /// partition and keys (`RankedChecksum`): a window keeps each partition's rows in a table of
    /// its own, and most lists hold a link or two. Nil where both positions are ranks, which
    /// want two orders.
    var rankedChecksum: SQLFragment? {
        let positions = [position, inversePosition]
        let ranked = positions.indices.compactMap { index -> (slot: Int, partition: String, keys: [String])? in
            guard case .rank(let partition, let keys) = positions[index] else { return nil }
            return (index + 2, partition, keys)
        }
        guard ranked.count == 1, let rank = ranked.first, rank.keys.count <= RankedChecksum.mostKeys else { return nil }
        let keys = rank.keys.indices.map { "tern_key_\($0)" }
        let unranked = positions.map { if case .rank = $0 { "NULL" } else { $0.window } }
        // The sort is kept: SQLite drops a subquery's ORDER BY only under an outer ORDER BY or a
        // join, or with built-in aggregates alone. `+` keeps an index on the partition from
        // giving the order, which would then read every row's keys from the table one by one.
        let sorted = """
            SELECT \(owner) AS owner, \(target) AS target, \(unranked[0]) AS position, \(unranked[1]) AS inverse_position,
                   +\(rank.partition) AS tern_partition\(zip(rank.keys, keys).map { ", \($0) AS \($1)" }.joined())
            FROM \(rows) ORDER BY tern_partition\(keys.map { ", \($0)" }.joined())
            """
        return SQLFragment(
            "SELECT count(*), \(RankedChecksum.name)('NNNN', \(rank.slot), \(keys.count), tern_partition\(keys.map { ", \($0)" }.joined()), owner, target, position, inverse_position) FROM (\(sorted))"
        )
    }
}
