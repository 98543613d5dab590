/// Prepared statements kept by SQL text, dropping the least recently used past a capacity.
///
/// Owned by one `Connection`; the small capacity keeps the linear recency scan cheap.
final class StatementCache {
    private let capacity: Int
    private var entries: [(sql: String, statement: Statement)] = []

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    func statement(for sql: String) -> Statement? {
        guard let index = entries.lastIndex(where: { $0.sql == sql }) else { return nil }
        let entry = entries.remove(at: index)
        entries.append(entry)
        return entry.statement
    }

    func insert(_ statement: Statement, for sql: String) {
        guard capacity > 0 else { return }
        if entries.count >= capacity {
            entries.removeFirst()
        }
        entries.append((sql, statement))
    }

    /// Finalizes every cached statement (each is released, and its `deinit` finalizes it).
    func removeAll() {
        for entry in entries { entry.statement.finalize() }
        entries.removeAll()
    }
}
