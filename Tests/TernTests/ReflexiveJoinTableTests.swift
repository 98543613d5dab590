import Foundation
import Testing
@testable import TernModel
@testable import TernStore

/// Which side of a reflexive many-to-many names its join table, against the facts of
/// `../shared/fixtures/observations/reflexive-many-to-many.md`: one real entity (`UserClient`)
/// whose choice flips as attributes are added. Every expected name comes from that file; the
/// entity is rebuilt from the property lists it gives.
@Suite("A reflexive many-to-many's join table is named as Core Data names it")
struct ReflexiveJoinTableTests {
    static let observations = Fixtures.root.deletingLastPathComponent().appendingPathComponent("observations/reflexive-many-to-many.md")

    /// A version's row of the file's table: the versions it covers and the join tables (name,
    /// columns) with the entity number written `<n>`.
    struct Row {
        var versions: String
        var tables: [String: [String]]
    }

    static func rows(_ text: String) -> [Row] {
        text.split(separator: "\n").filter { $0.hasPrefix("| ") && $0.contains("`Z_") }.map { line in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            var tables: [String: [String]] = [:]
            for table in cells[1].split(separator: "`").filter({ $0.hasPrefix("Z_") }) {
                let normal = table.replacing(/Z_(\d+|<n>)/, with: "Z_<n>")
                let name = String(normal.prefix { $0 != " " })
                let columns = normal.drop { $0 != "(" }.dropFirst().dropLast().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                tables[name] = columns
            }
            return Row(versions: cells[0], tables: tables)
        }
    }

    /// Whether `version` (`2.95.0`) falls in `versions` (`2.4 … 2.95 (27 … 33 properties)` or
    /// `1.27, 1.28, 2.3 (24 properties)`).
    static func covers(_ versions: String, _ version: String) -> Bool {
        func parts(_ text: some StringProtocol) -> [Int] {
            var numbers = text.split(separator: ".").compactMap { Int($0) }
            while numbers.last == 0, numbers.count > 2 { numbers.removeLast() }
            return numbers
        }
        let list = versions.prefix { $0 != "(" }.trimmingCharacters(in: .whitespaces)
        let wanted = parts(version)
        if list.contains("…") {
            let ends = list.split(separator: "…").map { parts($0.trimmingCharacters(in: .whitespaces)) }
            return !(wanted.lexicographicallyPrecedes(ends[0])) && !(ends[1].lexicographicallyPrecedes(wanted))
        }
        return list.split(separator: ",").contains { parts($0.trimmingCharacters(in: .whitespaces)) == wanted }
    }

    /// The model of one listed version: `UserClient` with the listed properties (the pairs the
    /// file names as inverses), and the other entities it points at.
    static func model(version: String, properties: String) throws -> ObjectModel {
        let inverses = [
            "ignoredClients": "ignoredByClients", "ignoredByClients": "ignoredClients", "trustedClients": "trustedByClients",
            "trustedByClients": "trustedClients", "missingClients": "missedByClient", "missedByClient": "missingClients",
        ]
        var attributes: [Attribute] = []
        var relationships: [Relationship] = []
        var others: Set<String> = []
        for property in properties.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let name = String(property.prefix { $0 != " " })
            let kind = property.drop { $0 != "(" }.dropFirst().dropLast().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            let words = kind[0].split(separator: " ", maxSplits: 1).map(String.init)
            let transient = kind.contains("transient")
            if words[0] == "attribute" {
                attributes.append(Attribute(name: name, type: try #require(AttributeType(xcodeName: words[1])), isTransient: transient))
            } else {
                if words[1] != "UserClient" { others.insert(words[1]) }
                relationships.append(
                    Relationship(
                        name: name, destination: words[1], inverse: inverses[name], isToMany: words[0] == "to-many", isTransient: transient))
            }
        }
        let entities =
            [Entity(name: "UserClient", attributes: attributes, relationships: relationships)]
            + others.map { Entity(name: $0, attributes: [Attribute(name: "name", type: .string)]) }
        return ObjectModel(versionName: version, entities: entities)
    }

    @Test("every row of the observations: the join table's name at each listed version, and its columns")
    func observations() throws {
        let text = try String(contentsOf: Self.observations, encoding: .utf8)
        let rows = Self.rows(text)
        #expect(rows.count == 3)
        let listed = text.split(separator: "\n").compactMap { line -> (String, String)? in
            guard let match = line.firstMatch(of: /^- \*\*([0-9.]+)\*\*: (.*)$/) else { return nil }
            return (String(match.1), String(match.2))
        }
        #expect(listed.count == 4)
        var checked = 0
        for (version, properties) in listed {
            let row = try #require(rows.first { Self.covers($0.versions, version) }, "no row covers \(version)")
            let model = try Self.model(version: version, properties: properties)
            let number = model.entityNumbers["UserClient"]!
            let layout = StoreLayout(model: model)
            var derived: [String: [String]] = [:]
            for join in layout.joinTables where join.entity == "UserClient" && join.inverseEntity == "UserClient" {
                func normal(_ name: String) -> String { name.replacingOccurrences(of: "Z_\(number)", with: "Z_<n>") }
                derived[normal(join.table)] = [normal(join.ownerColumn), normal(join.destinationColumn)]
            }
            #expect(Set(derived.keys) == Set(row.tables.keys), "\(version): \(derived.keys.sorted()) where Core Data wrote \(row.tables.keys.sorted())")
            for (table, columns) in row.tables {
                // The columns of a table Core Data makes: the one named after the other side,
                // then the one named after the table's own side. A store migrated from the
                // version before keeps its table's columns as they were when the table is only
                // renamed (2.95 → 2.96's trusted pair), so the columns are compared as a set.
                #expect(Set(derived[table] ?? []) == Set(columns), "\(version): \(table)")
                if let derivedColumns = derived[table] { #expect(derivedColumns[1] == table, "\(version): \(table) \(derivedColumns)") }
            }
            checked += 1
        }
        #expect(checked == 4)
    }
}
