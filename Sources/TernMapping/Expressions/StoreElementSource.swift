import TernSQLite
import TernModel
import TernStore

/// Reads to-many elements from a store for quantified predicates evaluated in Swift, with one
/// prepared query per relationship.
public final class StoreElementSource: ElementSource {
    private let connection: Connection
    private var compiler: SQLCompiler
    private var queries: [String: Statement] = [:]

    /// Reads elements through `connection`, a store laid out as `layout`; queries are prepared on first use.
    public init(connection: Connection, layout: StoreLayout) {
        self.connection = connection
        compiler = SQLCompiler(layout: layout)
    }

    /// The values for `inputs` of each element of `relationship` of the `entity` object with key `owner`.
    /// Throws `SQLiteError` if the query cannot be prepared or run.
    public func elements(of relationship: String, entity: String, owner: Int64, inputs: [Input]) throws -> [[SQLiteValue]] {
        let key = "\(entity).\(relationship).\(inputs)"
        let statement =
            try queries[key]
            ?? {
                let prepared = try connection.prepare(compiler.elementsQuery(of: relationship, entity: entity, inputs: inputs))
                queries[key] = prepared
                return prepared
            }()
        statement.reset()
        try statement.bind(owner, at: 1)
        var rows = statement.rows()
        var elements: [[SQLiteValue]] = []
        while let row = try rows.next() {
            elements.append(row.values)
        }
        return elements
    }
}
