import TernSQLite
import TernModel
import TernPlanning
import TernDurability

/// `tern_running_rank(owner, key)`: the place of `key` among the keys of `owner` so far, for
/// pairs that come in order of owner, then key — what `row_number() OVER (PARTITION BY owner
/// ORDER BY key)` gives, without the window's buffer of every row. It depends on the order
/// rows come in, which only the query plan decides: so it refuses any pair not after the one
/// before (`isOutOfOrder`), and the caller ranks them with the window instead. Ranks begin
/// again after `reset()`.
final class RunningRank {
    private static let outOfOrder = "tern_running_rank: pairs out of owner and key order"
    private var previous: (owner: Int64, key: Int64)?
    private var rank: Int64 = 0

    func register(on connection: Connection) throws {
        try connection.createFunction("tern_running_rank", argumentCount: 2, deterministic: false) { arguments in
            try self.next(owner: arguments[0], key: arguments[1])
        }
    }

    func reset() { previous = nil }

    /// Whether `error` is this function refusing a pair out of order.
    static func isOutOfOrder(_ error: SQLiteError) -> Bool { error.message.contains(outOfOrder) }

    private func next(owner: SQLiteValue, key: SQLiteValue) throws -> SQLiteValue {
        guard case .integer(let owner) = owner, case .integer(let key) = key else { throw TernError(.badInput, Self.outOfOrder) }
        switch previous {
        case let last? where owner == last.owner:
            guard key > last.key else { throw TernError(.badInput, Self.outOfOrder) }
            rank += 1
        case let last? where owner < last.owner:
            throw TernError(.badInput, Self.outOfOrder)
        default:
            rank = 1
        }
        previous = (owner, key)
        return .integer(rank)
    }
}
