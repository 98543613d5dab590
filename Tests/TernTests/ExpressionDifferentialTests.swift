import Foundation
import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore
import TernGenerate
import TernSQLite

/// SQL push-down and the Swift evaluator must agree on every value, NULL and storage class
/// included. These tests generate expressions and predicates as text, at random, and compare the
/// two executions over a store full of awkward values.
@Suite("Expressions: SQL and Swift agree")
struct ExpressionDifferentialTests {
    static let model = ObjectModel(
        versionName: "diff",
        entities: [
            Entity(
                name: "Item",
                attributes: [
                    Attribute(name: "i", type: .integer64), Attribute(name: "r", type: .double),
                    Attribute(name: "t", type: .string), Attribute(name: "u", type: .string),
                ],
                relationships: [
                    Relationship(name: "owner", destination: "Owner", inverse: "items"),
                    Relationship(name: "tags", destination: "Tag", inverse: "item", isToMany: true),
                ]),
            Entity(
                name: "Owner", attributes: [Attribute(name: "name", type: .string), Attribute(name: "score", type: .integer32)],
                relationships: [Relationship(name: "items", destination: "Item", inverse: "owner", isToMany: true)]),
            Entity(
                name: "Tag", attributes: [Attribute(name: "label", type: .string), Attribute(name: "weight", type: .integer16)],
                relationships: [Relationship(name: "item", destination: "Item", inverse: "tags")]),
        ])

    static let integers: [Int64] = [0, 1, -1, 2, 3, 7, -7, 10, 255, 1 << 31, -(1 << 31), 1 << 53, .max, .min, .max - 1, .min + 1, 4_611_686_018_427_387_904]
    static let reals: [Double] = [
        0.0, -0.0, 0.5, -0.5, 1.0, 2.5, 1e15, 1e308, -1e308, 1e-308, 9.223372036854775807e18, -9.223372036854775808e18, 3.0, 0.1, 1.8, 32.0,
    ]
    static let texts: [String] = [
        "", " ", "a", "A", "ab", "abc", "Abc", "b", " a ", "a b", "First Last", "Zoë", "ZOË", "zoe", "Zoe\u{0308}", "é", "e\u{0301}", "É", "ß", "*", "?", "[",
        "]", "[a]", "a*b", "a?c", "x.y", "100", "10", "9", "naïve", "日本語", "🙂", "Ünïcödé", "straße",
    ]

    let directory: TemporaryDirectory
    let connection: Connection
    let layout: StoreLayout

    init() throws {
        directory = try TemporaryDirectory()
        let path = directory.path("diff.sqlite")
        connection = try StoreFile.create(at: path, model: Self.model)
        layout = StoreLayout(model: Self.model)
        try SQLCompiler.prepare(connection)
        var rng = SplitMix64(seed: 42)
        let writer = try ObjectWriter(connection: connection, layout: layout)
        func pick<T>(_ values: [T], null: Double = 0.15) -> T? {
            Double.random(in: 0..<1, using: &rng) < null ? nil : values.randomElement(using: &rng)!
        }
        try connection.transaction {
            for _ in 0..<12 {
                try writer.insert(
                    "Owner",
                    [
                        "name": pick(Self.texts).map { .text($0) } ?? .null,
                        "score": pick(Self.integers.filter { Int32(exactly: $0) != nil }).map { .integer($0) } ?? .null,
                    ])
            }
            for _ in 0..<70 {
                try writer.insert(
                    "Item",
                    [
                        "i": pick(Self.integers).map { .integer($0) } ?? .null,
                        "r": pick(Self.reals).map { .real($0) } ?? .null,
                        "t": pick(Self.texts).map { .text($0) } ?? .null,
                        "u": pick(Self.texts).map { .text($0) } ?? .null,
                        "owner": pick(Array(1...12)).map { .integer(Int64($0)) } ?? .null,
                    ])
            }
            for _ in 0..<150 {
                try writer.insert(
                    "Tag",
                    [
                        "label": pick(Self.texts).map { .text($0) } ?? .null,
                        "weight": pick([0, 1, 3, 5, -2, 300]).map { .integer($0) } ?? .null,
                        "item": .integer(Int64.random(in: 1...70, using: &rng)),
                    ])
            }
            try writer.finish()
        }
    }

    /// Both executions of one expression over every Item.
    private func runBoth(expression text: String) throws -> (sql: [SQLiteValue], swift: [SQLiteValue]) {
        let compiled = try ExpressionBinder.expression(text, entity: "Item", model: Self.model, now: 12345.5)
        var compiler = SQLCompiler(layout: layout)
        let fragment = compiler.sql(compiled, alias: "s")
        let sqlValues = try column("SELECT \(fragment.sql) FROM ZITEM s ORDER BY s.Z_PK", fragment.arguments)
        let program = ExpressionProgram(compiled)
        let swiftValues = try inputRows(compiled.inputs).map { try program.evaluate($0) }
        // As a worker evaluates it: the inputs where they lie in a longer row read whole.
        let inRows = try inputRows(compiled.inputs).map { inputs in
            let row: [SQLiteValue] = [.text("key"), .integer(-1)] + inputs + [.text("after")]
            return try program.evaluate(row[2..<(2 + inputs.count)])
        }
        #expect(inRows == swiftValues, "\(text): evaluated in a longer row")
        return (sqlValues, swiftValues)
    }

    private func runBoth(predicate text: String) throws -> (sql: [SQLiteValue], swift: [SQLiteValue]) {
        let compiled = try ExpressionBinder.predicate(text, entity: "Item", model: Self.model, variables: ["limit": .integer(5), "word": .text("a")])
        var compiler = SQLCompiler(layout: layout)
        let fragment = compiler.sql(compiled, alias: "s")
        let sqlValues = try column("SELECT \(fragment.sql) FROM ZITEM s ORDER BY s.Z_PK", fragment.arguments)
        let program = PredicateProgram(compiled, elements: StoreElementSource(connection: connection, layout: layout))
        let swiftValues: [SQLiteValue] = try inputRows(compiled.inputs).map { inputs in
            try program.evaluate(inputs).map { .integer($0 ? 1 : 0) } ?? .null
        }
        return (sqlValues, swiftValues)
    }

    private func column(_ sql: String, _ arguments: [SQLiteValue]) throws -> [SQLiteValue] {
        let statement = try connection.prepare(sql)
        try statement.bind(arguments)
        var rows = statement.rows()
        var values: [SQLiteValue] = []
        while let row = try rows.next() { values.append(row.value(at: 0)) }
        return values
    }

    private func inputRows(_ inputs: [Input]) throws -> [[SQLiteValue]] {
        var compiler = SQLCompiler(layout: layout)
        let columns = inputs.isEmpty ? "1" : inputs.map { compiler.sql($0, alias: "s") }.joined(separator: ", ")
        let statement = try connection.prepare("SELECT \(columns) FROM ZITEM s ORDER BY s.Z_PK")
        var rows = statement.rows()
        var result: [[SQLiteValue]] = []
        while let row = try rows.next() { result.append(inputs.isEmpty ? [] : row.values) }
        return result
    }

    /// Same storage class and same value; reals bit for bit.
    static func same(_ a: SQLiteValue, _ b: SQLiteValue) -> Bool {
        switch (a, b) {
        case (.real(let x), .real(let y)): x.bitPattern == y.bitPattern
        default: a == b
        }
    }

    private func expectAgreement(_ text: String, _ results: (sql: [SQLiteValue], swift: [SQLiteValue])) {
        let mismatches = zip(results.sql, results.swift).enumerated().filter { !Self.same($0.element.0, $0.element.1) }
        #expect(results.sql.count == results.swift.count)
        if let first = mismatches.first {
            Issue.record("\(text): \(mismatches.count) rows differ; row \(first.offset + 1): SQL \(first.element.0), Swift \(first.element.1)")
        }
    }

    @Test("the seed and BookStore examples compile both ways and agree")
    func examples() throws {
        for text in [
            "$source.i", "($source.r - 32.0) / 1.8", "$source.r * 1.04", "$source.i * 1.04", "substringBefore:($source.t, \" \")",
            "substringAfter:($source.t, \" \")", "$source.owner.name", "$source.tags.@count", "uppercase:($source.t)", "now()",
            "$source.#i", "abs:($source.i)", "-$source.i", "$source.i + 1", "$source.i - 1", "$source.i * 2", "divide:by:($source.i, 0)",
        ] {
            expectAgreement(text, try runBoth(expression: text))
        }
        for text in [
            "i > 3", "t BEGINSWITH[c] 'a'", "ANY tags.label CONTAINS[cd] 'e'", "ALL tags.weight > 0", "NONE tags.label == nil",
            "owner == nil", "owner.name LIKE '*a*'", "t MATCHES '[A-Z].*'", "i BETWEEN {0, 10}", "t IN {'a', 'b', nil}",
            "NOT (i < 0 OR r > 1.0)", "TRUEPREDICATE", "FALSEPREDICATE", "i > $limit", "tags.@count >= 2", "t == $word",
        ] {
            expectAgreement(text, try runBoth(predicate: text))
        }
    }

    /// SQL for an expression or predicate over Item, as the engine compiles it.
    @Test("length: counts as NSString's length does (UTF-16 code units: an emoji counts 2, a decomposed accent 2), both ways")
    func lengthCountsAsNSString() throws {
        let results = try runBoth(expression: "length:($source.t)")
        expectAgreement("length:", results)
        let texts = try column("SELECT ZT FROM ZITEM ORDER BY Z_PK", [])
        let expected = texts.map { $0.text.map { SQLiteValue.integer(Int64(NSString(string: $0).length)) } ?? .null }
        #expect(results.sql == expected)
        #expect(texts.contains { $0.text == "🙂" } && texts.contains { $0.text == "Zoe\u{0308}" })
    }

    private func compiledSQL(expression text: String) throws -> String {
        var compiler = SQLCompiler(layout: layout)
        return compiler.sql(try ExpressionBinder.expression(text, entity: "Item", model: Self.model, now: 0), alias: "s").sql
    }

    @Test("hostile shapes run, both ways alike, in SQL that grows linearly: nested functions, long OR and AND chains, an IN of 999 values")
    func hostileShapesRun() throws {
        func nested(_ function: String, _ depth: Int, _ inner: String, _ rest: String) -> String {
            (0..<depth).reduce(inner) { text, _ in "\(function)(\(text)\(rest))" }
        }
        // Nested calls whose SQL names an argument several times: the SQL grows by a constant per level.
        let sizes = try [2, 4, 8, 16].map { depth in
            let text = nested("substringBefore:", depth, "$source.t", ", \" \"")
            expectAgreement(text, try runBoth(expression: text))
            let abs = nested("abs:", depth, "$source.i - 1", "")
            expectAgreement(abs, try runBoth(expression: abs))
            return try compiledSQL(expression: text).utf8.count
        }
        #expect(sizes[3] - sizes[2] <= 2 * (sizes[2] - sizes[1]) + 64, "SQL sizes by depth: \(sizes)")
        #expect(sizes[3] < 4_000, "16 nested calls compile to \(sizes[3]) bytes of SQL")
        // Unary plus, however many, and a concatenation of 2,000 parts.
        expectAgreement("plus", try runBoth(expression: String(repeating: "+", count: 100_000) + "$source.i"))
        let parts = "concat:(" + Array(repeating: "$source.t", count: 2_000).joined(separator: ", ") + ")"
        expectAgreement("concat of 2,000", try runBoth(expression: parts))
        let mixed = "substring:from:length:(substringAfter:(concat:(uppercase:($source.t), $source.u), \"A\"), abs:($source.i - 3), 2)"
        expectAgreement(mixed, try runBoth(expression: mixed))

        // Realistic long predicates: 100 ORs, an IN of 999 values (of a computed value too), 5,000 ORs, 20,000 ANDs.
        let hundred = (0..<100).map { "i == \($0)" }.joined(separator: " OR ")
        let list = "{" + (0..<999).map { "\($0)" }.joined(separator: ", ") + "}"
        for text in [
            hundred, "i IN \(list)", "(i + 1) IN \(list)", "t IN {" + Self.texts.map { ExpressionGenerator.literal($0) }.joined(separator: ", ") + "}",
            (0..<5_000).map { "i == \($0)" }.joined(separator: " OR "), (0..<20_000).map { "i != \($0)" }.joined(separator: " AND "),
        ] {
            expectAgreement(String(text.prefix(60)), try runBoth(predicate: text))
        }
    }

    @Test(
        "hostile shapes too deep to run are refused when they load, naming the place: 200 nested abs:, 20,000 NOTs, 100,000 unary minuses, 1,000 chained +",
        arguments: [
            String(repeating: "abs:(", count: 200) + "$source.i" + String(repeating: ")", count: 200),
            String(repeating: "-", count: 100_000) + "$source.i",
            String(repeating: "-+", count: 50_000) + "$source.i",
            (0..<1_000).map { _ in "$source.i" }.joined(separator: " + "),
            String(repeating: "(", count: 50_000) + "$source.i" + String(repeating: ")", count: 50_000),
        ])
    func tooDeepExpressionsAreRefused(text: String) throws {
        do {
            _ = try ExpressionBinder.expression(text, entity: "Item", model: Self.model, now: 0)
            Issue.record("accepted: \(text.prefix(40))…")
        } catch {
            #expect(error.message.contains("nests deeper than \(ExpressionParser.maximumDepth) levels"), "\(error)")
        }
    }

    @Test("predicates too deep to run are refused when they load: 20,000 NOTs, 50,000 parentheses")
    func tooDeepPredicatesAreRefused() throws {
        for text in [
            String(repeating: "NOT ", count: 20_000) + "i > 0", String(repeating: "(", count: 50_000) + "i > 0" + String(repeating: ")", count: 50_000),
        ] {
            do {
                _ = try ExpressionBinder.predicate(text, entity: "Item", model: Self.model)
                Issue.record("accepted: \(text.prefix(40))…")
            } catch {
                #expect(error.message.contains("nests deeper than"), "\(error)")
            }
        }
    }

    @Test("3,000 random value expressions agree", arguments: 0..<6)
    func randomExpressions(batch: Int) throws {
        var generator = ExpressionGenerator(seed: UInt64(1000 + batch))
        for _ in 0..<500 {
            let text = Bool.random(using: &generator.rng) ? generator.number(depth: 4) : generator.text(depth: 4)
            expectAgreement(text, try runBoth(expression: text))
        }
    }

    @Test("3,000 random predicates agree", arguments: 0..<6)
    func randomPredicates(batch: Int) throws {
        var generator = ExpressionGenerator(seed: UInt64(2000 + batch))
        for _ in 0..<500 {
            let text = generator.predicate(depth: 3)
            expectAgreement(text, try runBoth(predicate: text))
        }
    }
}

/// Writes random, well-typed expressions and predicates over the differential model, as text.
struct ExpressionGenerator {
    var rng: SplitMix64

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    private mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    private mutating func pick<T>(_ values: [T]) -> T { values.randomElement(using: &rng)! }

    static func literal(_ value: Int64) -> String { value == .min ? "(-9223372036854775807 - 1)" : (value < 0 ? "(\(value))" : "\(value)") }
    static func literal(_ value: Double) -> String {
        let text = "\(value)"
        return value.sign == .minus ? "(\(text))" : text
    }
    static func literal(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    mutating func number(depth: Int) -> String {
        if depth <= 0 || chance(0.3) {
            switch Int.random(in: 0..<8, using: &rng) {
            case 0: return Self.literal(pick(ExpressionDifferentialTests.integers))
            case 1: return Self.literal(pick(ExpressionDifferentialTests.reals))
            case 2: return "$source.r"
            case 3: return "$source.owner.score"
            case 4: return "$source.tags.@count"
            case 5: return "nil"
            default: return "$source.i"
            }
        }
        let d = depth - 1
        switch Int.random(in: 0..<11, using: &rng) {
        case 9: return "ifNil:(\(number(depth: d)), \(number(depth: d)))"
        case 0: return "(\(number(depth: d)) + \(number(depth: d)))"
        case 1: return "(\(number(depth: d)) - \(number(depth: d)))"
        case 2: return "(\(number(depth: d)) * \(number(depth: d)))"
        case 3: return "(\(number(depth: d)) / \(number(depth: d)))"
        case 4: return "-\(number(depth: d))"
        case 5: return "abs:(\(number(depth: d)))"
        case 6: return "length:(\(text(depth: d)))"
        case 7: return "\(pick(["add:to:", "from:subtract:", "multiply:by:", "divide:by:"]))(\(number(depth: d)), \(number(depth: d)))"
        default: return "(\(number(depth: d)))"
        }
    }

    mutating func text(depth: Int) -> String {
        if depth <= 0 || chance(0.3) {
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: return Self.literal(pick(ExpressionDifferentialTests.texts))
            case 1: return "$source.u"
            case 2: return "$source.owner.name"
            case 3: return "nil"
            default: return "$source.t"
            }
        }
        let d = depth - 1
        switch Int.random(in: 0..<9, using: &rng) {
        case 7: return "ifNil:(\(text(depth: d)), \(text(depth: d)))"
        case 0: return "uppercase:(\(text(depth: d)))"
        case 1: return "lowercase:(\(text(depth: d)))"
        case 2: return "trim:(\(text(depth: d)))"
        case 3: return "substringBefore:(\(text(depth: d)), \(text(depth: d)))"
        case 4: return "substringAfter:(\(text(depth: d)), \(text(depth: d)))"
        case 5: return "substring:from:length:(\(text(depth: d)), \(number(depth: 1)), \(number(depth: 1)))"
        case 6: return "concat:(\(text(depth: d)), \(text(depth: d)))"
        default: return text(depth: d)
        }
    }

    mutating func predicate(depth: Int) -> String {
        if depth > 0, chance(0.35) {
            let d = depth - 1
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: return "(\(predicate(depth: d)) AND \(predicate(depth: d)))"
            case 1: return "(\(predicate(depth: d)) OR \(predicate(depth: d)))"
            default: return "NOT (\(predicate(depth: d)))"
            }
        }
        let options = pick(["", "", "[c]", "[d]", "[cd]"])
        switch Int.random(in: 0..<11, using: &rng) {
        case 0, 1: return "\(number(depth: 2)) \(pick(["==", "!=", "<", "<=", ">", ">="])) \(number(depth: 2))"
        case 2: return "\(text(depth: 2)) \(pick(["==", "!="]))\(options) \(text(depth: 2))"
        case 3: return "\(text(depth: 2)) \(pick(["<", "<=", ">", ">="])) \(text(depth: 2))"
        case 4: return "\(text(depth: 2)) \(pick(["BEGINSWITH", "ENDSWITH", "CONTAINS"]))\(options) \(text(depth: 2))"
        case 5: return "\(text(depth: 1)) LIKE\(options) \(Self.literal(pick(["*", "a*", "*b", "?", "a?c", "*[a]*", "Z*", "*ë*", "", "**", "?*?"])))"
        case 6: return "\(text(depth: 1)) MATCHES\(options) \(Self.literal(pick([".*", "[a-z]+", "a.*", ".*b", "Z.*", "[[:alpha:] ]*", "\\\\d+", "ab|abc"])))"
        case 7: return "\(number(depth: 2)) BETWEEN {\(number(depth: 1)), \(number(depth: 1))}"
        case 8: return "\(text(depth: 1)) IN {\(text(depth: 0)), \(text(depth: 0)), nil}"
        case 9:
            return
                "\(pick(["ANY", "ALL", "NONE"])) tags.\(pick(["label BEGINSWITH\(options) \(Self.literal(pick(ExpressionDifferentialTests.texts)))", "weight > \(Self.literal(pick([Int64(0), 1, 3, -1])))", "label == nil"]))"
        default: return pick(["TRUEPREDICATE", "FALSEPREDICATE", "owner == nil", "owner != nil", "i > $limit", "t == $word"])
        }
    }
}
