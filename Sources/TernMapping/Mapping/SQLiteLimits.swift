import TernSQLite
import TernModel
import TernStore

/// SQLite refuses SQL nested too deeply for its parser ("parser stack overflow"), an expression
/// tree over 1,000 levels, or more than 32,766 bound values. The expression depth limit keeps
/// one expression far from these, but a deep expression inside a long filter can still reach
/// them once compiled; so every compiled value expression and filter is prepared once when the
/// mapping loads, nested a little deeper than the engine nests it, against the source's tables
/// in memory — a mapping SQLite cannot run is refused then, not hours into a migration.
enum SQLiteLimits {
    /// Problems, by entity mapping and property, with the SQL of `entities` over `source`.
    static func problems(in entities: [ValidatedMapping.Entity], source: ObjectModel) -> [String] {
        let layout = StoreLayout(model: source)
        guard let connection = try? Connection(path: ":memory:"), (try? SQLCompiler.prepare(connection)) != nil,
            (try? layout.createTableStatements.forEach { try connection.execute($0) }) != nil
        else { return [] }
        var problems: [String] = []
        for entity in entities {
            guard let sourceEntity = entity.mapping.sourceEntity, let table = layout.entities[sourceEntity]?.table else { continue }
            let at = "entity mapping \(entity.mapping.name)"
            var compiler = SQLCompiler(layout: layout)
            for (name, expression) in entity.attributes.sorted(by: { $0.key < $1.key }) {
                let fragment = compiler.sql(expression, alias: "s")
                if let refusal = refusal(
                    of: "SELECT " + Self.deeper(fragment.sql, by: Self.valueMargin) + " FROM \(quoteIdentifier(table)) s", fragment.arguments.count,
                    on: connection)
                {
                    problems.append("\(at), attribute \(name): too complex for SQLite once compiled (\(refusal)); simplify it or split it")
                }
            }
            if let filter = entity.filter {
                let fragment = compiler.sql(filter, alias: "s")
                if let refusal = refusal(
                    of: "SELECT 1 FROM \(quoteIdentifier(table)) s WHERE " + Self.deeper(fragment.sql, by: Self.filterMargin)
                        + " AND s.\"Z_PK\" > ? AND s.\"Z_PK\" <= ?",
                    fragment.arguments.count + 2, on: connection)
                {
                    problems.append("\(at), filter predicate: too complex for SQLite once compiled (\(refusal)); simplify it or split it across passes")
                }
            }
        }
        return problems
    }

    /// `sql` inside as many parentheses as the engine's deepest statements add around it, and
    /// then some: SQLite's parser stack also holds the statement around an expression (an
    /// INSERT … SELECT with joins, verification's aggregates). Measured: a value expression nested
    /// as deep as the parser allows runs with 8; a filter inside a batch's INSERT needs 16.
    private static func deeper(_ sql: String, by margin: Int) -> String {
        String(repeating: "(", count: margin) + sql + String(repeating: ")", count: margin)
    }

    static let valueMargin = 8
    static let filterMargin = 16

    /// SQLite's words when it cannot take `sql` for its size or depth; nil when it can.
    private static func refusal(of sql: String, _ arguments: Int, on connection: Connection) -> String? {
        if arguments > 32_766 { return "\(arguments) values, more than SQLite binds in one statement" }
        do {
            _ = try connection.prepare(sql)
            return nil
        } catch let error as SQLiteError {
            let limits = ["parser stack overflow", "too large", "too many", "too big", "too deep"]
            return limits.contains { error.message.localizedCaseInsensitiveContains($0) } ? error.message : nil
        } catch {
            return nil
        }
    }
}
