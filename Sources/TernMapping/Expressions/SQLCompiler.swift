import TernSQLite
import TernModel
import TernStore

/// Compiles bound expressions and predicates to SQL over a store's layout, so whole batches are
/// computed inside SQLite. The SQL reads the object's row through `alias`.
///
/// Connections running this SQL need Tern's text functions (`ExpressionSQL.prepare(_:)`).
public struct SQLCompiler {
    /// The tables and columns the compiled SQL reads.
    public let layout: StoreLayout
    /// The schema the store's tables are read from (`src` when the store is attached to another
    /// connection); nil for the connection's main database.
    public let schema: String?
    private var aliasCounter = 0

    /// A compiler for SQL over `layout`, read from `schema` (nil: the connection's main database).
    public init(layout: StoreLayout, schema: String? = nil) {
        self.layout = layout
        self.schema = schema
    }

    /// A table of the store, qualified by its schema.
    func table(_ name: String) -> String {
        schema.map { "\(quoteIdentifier($0)).\(quoteIdentifier(name))" } ?? quoteIdentifier(name)
    }

    /// Registers the SQL functions compiled SQL may call (`tern_upper`, `tern_fold`, …), and
    /// those reading values stored outside the store in `externalData`'s folders.
    public static func prepare(_ connection: Connection, externalData: ExternalDataFolders = ExternalDataFolders()) throws {
        try TextFunctions.register(on: connection)
        try externalData.register(on: connection)
        for (function, (name, count)) in calledOnce.merging([.length: lengthFunction], uniquingKeysWith: { first, _ in first }) {
            try connection.createFunction(name, argumentCount: count) { arguments in try ExpressionProgram.call(function, arguments) }
        }
    }

    /// The functions whose SQL form names an argument several times: over a column or a
    /// constant they are written out in SQL (fast, SQLite's own operations); over anything
    /// larger, as a call of the Swift evaluator's code, so each argument appears once and nested
    /// calls grow the SQL linearly, not exponentially.
    static let calledOnce: [BuiltinFunction: (name: String, arguments: Int)] = [
        .substringBefore: ("tern_substring_before", 2), .substringAfter: ("tern_substring_after", 2),
        .substring: ("tern_substring", 3), .abs: ("tern_abs", 1),
    ]

    /// `length:` counts UTF-16 code units, as NSString does; SQLite's `length` counts characters
    /// and stops at a NUL, so SQL calls the Swift evaluator's code.
    package static let lengthFunction = (name: "tern_length", arguments: 1)

    /// SQL computing the expression's value for the object whose row is `alias`.
    public mutating func sql(_ expression: CompiledExpression, alias: String) -> SQLFragment {
        sql(expression.expression, inputs: expression.inputs, alias: alias)
    }

    /// SQL computing the predicate for the object whose row is `alias`: true, false or NULL (unknown).
    public mutating func sql(_ predicate: CompiledPredicate, alias: String) -> SQLFragment {
        sql(predicate.predicate, entity: predicate.entity, inputs: predicate.inputs, alias: alias)
    }

    /// SQL reading one input for the object at `alias`: what a batch reader selects so the Swift
    /// evaluator gets its inputs.
    public mutating func sql(_ input: Input, alias: String) -> String {
        sql(entity: input.entity, relationships: input.relationships[...], final: input.final, alias: alias)
    }

    private mutating func freshAlias() -> String {
        aliasCounter += 1
        return "t\(aliasCounter)"
    }

    private mutating func sql(entity: String, relationships: ArraySlice<String>, final: Input.Final, alias: String) -> String {
        let own = layout.entities[entity]!
        guard let first = relationships.first else {
            switch final {
            case .attribute(let name):
                // An expression sees a value stored outside the store as the app does: its bytes.
                let column = "\(alias).\(quoteIdentifier(own.attributeColumns[name]!))"
                return layout.model.allAttributes(of: entity).contains { $0.name == name && $0.allowsExternalStorage }
                    ? "tern_external_bytes(\(column))" : column
            case .ownKey: return "\(alias).\"Z_PK\""
            case .objectKey: preconditionFailure("an object key follows a relationship")
            case .count(let name): return countSQL(entity: entity, relationship: name, alias: alias)
            }
        }
        let foreignKey = "\(alias).\(quoteIdentifier(own.foreignKeyColumns[first]!))"
        if relationships.count == 1, final == .objectKey { return foreignKey }
        let destination = layout.model.allRelationships(of: entity).first { $0.name == first }!.destination
        let next = freshAlias()
        let value = sql(entity: destination, relationships: relationships.dropFirst(), final: final, alias: next)
        return "(SELECT \(value) FROM \(table(layout.entities[destination]!.table)) \(next) WHERE \(next).\"Z_PK\" = \(foreignKey))"
    }

    private mutating func countSQL(entity: String, relationship: String, alias: String) -> String {
        let other = freshAlias()
        return "(SELECT count(*) \(elementsSQL(entity: entity, relationship: relationship, owner: "\(alias).\"Z_PK\"", element: other)))"
    }

    /// A query for the element values of a to-many relationship of one object, whose key is bound
    /// as the only argument: what the Swift evaluator reads for ANY/ALL/NONE.
    public mutating func elementsQuery(of relationship: String, entity: String, inputs: [Input]) -> String {
        let element = freshAlias()
        let columns = inputs.isEmpty ? "1" : inputs.map { sql($0, alias: element) }.joined(separator: ", ")
        return "SELECT \(columns) \(elementsSQL(entity: entity, relationship: relationship, owner: "?", element: element)) ORDER BY \(element).\"Z_PK\""
    }

    /// `FROM … WHERE …` selecting the elements of a to-many relationship as `element`, for the
    /// object whose key is the SQL `owner`.
    private mutating func elementsSQL(entity: String, relationship: String, owner: String, element: String) -> String {
        switch layout.storage(ofRelationship: relationship, of: entity)! {
        case .inverseForeignKey(let table, let column, _), .hiddenKey(let table, let column, _):
            return "FROM \(self.table(table)) \(element) WHERE \(element).\(quoteIdentifier(column)) = \(owner)"
        case .joinTable(let table, let ownColumn, let destinationColumn, _):
            let join = freshAlias()
            let destination = layout.model.allRelationships(of: entity).first { $0.name == relationship }!.destination
            return
                "FROM \(self.table(table)) \(join) JOIN \(self.table(layout.entities[destination]!.table)) \(element) ON \(element).\"Z_PK\" = \(join).\(quoteIdentifier(destinationColumn)) WHERE \(join).\(quoteIdentifier(ownColumn)) = \(owner)"
        case .foreignKey:
            preconditionFailure("\(relationship) is not to-many")
        }
    }

    // MARK: Expressions

    private mutating func sql(_ expression: BoundExpression, inputs: [Input], alias: String) -> SQLFragment {
        switch expression {
        case .constant(let value):
            return SQLFragment("?", [value])
        case .input(let index):
            return SQLFragment(sql(inputs[index], alias: alias))
        case .binary(let op, let lhs, let rhs):
            let left = sql(lhs, inputs: inputs, alias: alias)
            let right = sql(rhs, inputs: inputs, alias: alias)
            if op == .divide {
                return SQLFragment("(CAST(") + left + SQLFragment(" AS REAL) / ") + right + SQLFragment(")")
            }
            return SQLFragment("(") + left + SQLFragment(" \(op.rawValue) ") + right + SQLFragment(")")
        case .negate(let operand):
            return SQLFragment("(0 - ") + sql(operand, inputs: inputs, alias: alias) + SQLFragment(")")
        case .function(let function, let arguments):
            let parts = arguments.map { sql($0, inputs: inputs, alias: alias) }
            if let (name, _) = Self.calledOnce[function], !arguments.allSatisfy(\.isLeaf) {
                return SQLFragment("\(name)(") + parts.dropFirst().reduce(parts[0]) { $0 + SQLFragment(", ") + $1 } + SQLFragment(")")
            }
            return call(function, parts)
        }
    }

    /// One function call; argument fragments may be repeated, each repetition carrying its
    /// arguments again in order.
    private func call(_ function: BuiltinFunction, _ a: [SQLFragment]) -> SQLFragment {
        func f(_ text: String) -> SQLFragment { SQLFragment(text) }
        switch function {
        case .uppercase: return f("tern_upper(") + a[0] + f(")")
        case .lowercase: return f("tern_lower(") + a[0] + f(")")
        case .length: return f("\(Self.lengthFunction.name)(") + a[0] + f(")")
        case .trim: return f("trim(") + a[0] + f(", ' ')")
        // Text may hold a NUL (NSString allows it), where SQLite's `length` and text `substr`
        // stop: the separators are found and cut in the UTF-8 bytes (a BLOB's `instr` and
        // `substr` count bytes, and UTF-8 never matches inside a character; `substr` of an empty
        // BLOB is NULL, hence the `coalesce`), and a cut by character position is the Swift
        // evaluator's.
        case .substringBefore:
            let (text, separator) = (f("CAST(") + a[0] + f(" AS BLOB)"), f("CAST(") + a[1] + f(" AS BLOB)"))
            return f("(CASE WHEN ") + a[0] + f(" IS NULL OR ") + a[1] + f(" IS NULL THEN NULL WHEN instr(") + text + f(", ") + separator
                + f(") > 0 THEN coalesce(CAST(substr(") + text + f(", 1, instr(") + text + f(", ") + separator + f(") - 1) AS TEXT), '') ELSE ") + a[0]
                + f(" END)")
        case .substringAfter:
            let (text, separator) = (f("CAST(") + a[0] + f(" AS BLOB)"), f("CAST(") + a[1] + f(" AS BLOB)"))
            return f("(CASE WHEN ") + a[0] + f(" IS NULL OR ") + a[1] + f(" IS NULL THEN NULL WHEN instr(") + text + f(", ") + separator
                + f(") > 0 THEN coalesce(CAST(substr(") + text + f(", instr(") + text + f(", ") + separator + f(") + length(") + separator
                + f(")) AS TEXT), '') ELSE '' END)")
        case .substring:
            return f("\(Self.calledOnce[.substring]!.name)(") + a[0] + f(", ") + a[1] + f(", ") + a[2] + f(")")
        case .concat:
            // Concatenation is associative: a balanced tree keeps thousands of parts shallow.
            return Self.balanced(a[...], joinedBy: " || ")
        case .ifNil:
            return f("coalesce(") + a[0] + f(", ") + a[1] + f(")")
        case .abs:
            return f("(CASE WHEN ") + a[0] + f(" < 0 THEN 0 - ") + a[0] + f(" ELSE ") + a[0] + f(" END)")
        case .now, .add, .subtract, .multiply, .divide:
            preconditionFailure("\(function) is bound to a constant or an operator")
        }
    }

    // MARK: Predicates

    private mutating func sql(_ predicate: BoundPredicate, entity: String, inputs: [Input], alias: String) -> SQLFragment {
        switch predicate {
        case .constant(let value):
            return SQLFragment(value ? "1" : "0")
        case .not(let inner):
            return SQLFragment("(NOT ") + sql(inner, entity: entity, inputs: inputs, alias: alias) + SQLFragment(")")
        case .and(let lhs, let rhs):
            return SQLFragment("(") + sql(lhs, entity: entity, inputs: inputs, alias: alias) + SQLFragment(" AND ")
                + sql(rhs, entity: entity, inputs: inputs, alias: alias) + SQLFragment(")")
        case .or(let lhs, let rhs):
            return SQLFragment("(") + sql(lhs, entity: entity, inputs: inputs, alias: alias) + SQLFragment(" OR ")
                + sql(rhs, entity: entity, inputs: inputs, alias: alias) + SQLFragment(")")
        case .compare(let lhs, let op, let options, let rhs):
            return compare(sql(lhs, inputs: inputs, alias: alias), op, options, sql(rhs, inputs: inputs, alias: alias))
        case .between(let value, let low, let high):
            return SQLFragment("(") + sql(value, inputs: inputs, alias: alias) + SQLFragment(" BETWEEN ") + sql(low, inputs: inputs, alias: alias)
                + SQLFragment(" AND ") + sql(high, inputs: inputs, alias: alias) + SQLFragment(")")
        case .isIn(let value, let items):
            guard !items.isEmpty else { return SQLFragment("0") }
            // The value is named once per item: a larger one is computed once, in a subquery.
            let name = value.isLeaf ? sql(value, inputs: inputs, alias: alias) : SQLFragment("v")
            let tests = items.map { SQLFragment("(") + name + SQLFragment(" IS ") + sql($0, inputs: inputs, alias: alias) + SQLFragment(")") }
            let any = Self.balanced(tests[...], joinedBy: " OR ")
            return value.isLeaf
                ? any : SQLFragment("(SELECT ") + any + SQLFragment(" FROM (SELECT ") + sql(value, inputs: inputs, alias: alias) + SQLFragment(" AS v))")
        case .quantified(let quantifier, let relationship, let elementEntity, let inner, let elementInputs):
            let element = freshAlias()
            let from = elementsSQL(entity: entity, relationship: relationship, owner: "\(alias).\"Z_PK\"", element: element)
            let condition = sql(inner, entity: elementEntity, inputs: elementInputs, alias: element)
            switch quantifier {
            case .anyElement: return SQLFragment("EXISTS (SELECT 1 \(from) AND ") + condition + SQLFragment(")")
            case .everyElement: return SQLFragment("(NOT EXISTS (SELECT 1 \(from) AND NOT ") + condition + SQLFragment("))")
            case .noElement: return SQLFragment("(NOT EXISTS (SELECT 1 \(from) AND ") + condition + SQLFragment("))")
            }
        }
    }

    /// `parts` joined by an associative operator as a balanced tree: a list of 999 items nests
    /// ten levels deep, within SQLite's parser, not 999.
    private static func balanced(_ parts: ArraySlice<SQLFragment>, joinedBy op: String) -> SQLFragment {
        guard parts.count > 1 else { return parts.first! }
        let middle = parts.startIndex + parts.count / 2
        return SQLFragment("(") + balanced(parts[..<middle], joinedBy: op) + SQLFragment(op) + balanced(parts[middle...], joinedBy: op) + SQLFragment(")")
    }

    private func compare(_ lhs: SQLFragment, _ op: ComparisonOperator, _ options: ComparisonOptions, _ rhs: SQLFragment) -> SQLFragment {
        func f(_ text: String) -> SQLFragment { SQLFragment(text) }
        let folded = options.isEmpty || op == .matches
        let l = folded ? lhs : f("tern_fold(") + lhs + f(", \(options.rawValue))")
        let r = folded ? rhs : f("tern_fold(") + rhs + f(", \(options.rawValue))")
        switch op {
        case .equal: return f("(") + l + f(" IS ") + r + f(")")
        case .notEqual: return f("(") + l + f(" IS NOT ") + r + f(")")
        case .less, .lessOrEqual, .greater, .greaterOrEqual: return f("(") + l + f(" \(op.rawValue) ") + r + f(")")
        // Compared as UTF-8 bytes, so a NUL inside the text (where SQLite's text `substr` and
        // `length` stop) is a byte like any other.
        case .beginsWith:
            let (bl, br) = (f("CAST(") + l + f(" AS BLOB)"), f("CAST(") + r + f(" AS BLOB)"))
            return f("(CASE WHEN ") + l + f(" IS NULL OR ") + r + f(" IS NULL THEN NULL WHEN length(") + br + f(") = 0 THEN 1 WHEN length(") + br
                + f(") > length(") + bl + f(") THEN 0 ELSE substr(") + bl + f(", 1, length(") + br + f(")) = ") + br + f(" END)")
        case .endsWith:
            let (bl, br) = (f("CAST(") + l + f(" AS BLOB)"), f("CAST(") + r + f(" AS BLOB)"))
            return f("(CASE WHEN ") + l + f(" IS NULL OR ") + r + f(" IS NULL THEN NULL WHEN length(") + br + f(") = 0 THEN 1 WHEN length(") + br
                + f(") > length(") + bl + f(") THEN 0 ELSE substr(") + bl + f(", - length(") + br + f(")) = ") + br + f(" END)")
        case .contains: return f("(instr(") + l + f(", ") + r + f(") > 0)")
        case .like: return f("(") + l + f(" GLOB replace(") + r + f(", '[', '[[]'))")
        case .matches: return f("tern_matches(") + l + f(", ") + r + f(", \(options.rawValue))")
        }
    }
}
