import Foundation
import Logging
import Testing
import TernGenerate
import TernSQLite
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernModel
@testable import TernStore

/// Generated models whose entity, attribute and relationship names are drawn from the awkward
/// ones — names differing in case alone, Core Data's own tables (`_MODELCACHE`), a join table's
/// name (`_1TAGS`), an index's name, Tern's work-table prefix, SQL keywords, non-ASCII letters —
/// each either refused where the model is loaded or laid out (a `TernError`, before any store is
/// written), or generated and migrated to a version adding more such names with every object kept.
/// Never a bare SQLite error, never an object lost.
@Suite("Awkward names: every model migrates or is refused before any work")
struct SchemaNameFuzzTests {
    static let entityNames = [
        "Item", "ITEM", "Tag", "TAG", "Note", "_MODELCACHE", "_METADATA", "_PRIMARYKEY", "_1TAGS", "_2ITEMS", "_3NOTES", "_4TAGS", "STRASSE",
        "Straße", "Tern_rebuilt_ZITEM", "ITEM_Z_ENT_INDEX", "Select", "Z_PK", "Order",
    ]
    static let attributeNames = [
        "title", "TITLE", "Title", "_pk", "_ent", "_opt", "NAME", "name", "order", "select", "tern_x", "z", "ent", "label", "näme",
    ]
    /// Only warnings: a migration per seed.
    static let quiet: Logger = {
        var logger = Logger(label: "tern.names")
        logger.logLevel = .warning
        return logger
    }()
    static let relationshipNames = ["tags", "TAGS", "items", "notes", "parent", "children", "_pk", "group"]

    /// What one seed's model is: YAML per version, and a line saying it for failures.
    struct Case {
        var v1: String
        var v2: String
        var summary: String
    }

    static func makeCase(seed: UInt64) -> Case {
        var rng = SplitMix64(seed: seed)
        func pick<T>(_ items: [T]) -> T { items[Int(rng.next() % UInt64(items.count))] }
        var entities: [String] = []
        for _ in 0..<(2 + Int(rng.next() % 3)) {
            let name = pick(Self.entityNames)
            if !entities.contains(name) { entities.append(name) }
        }
        let added = pick(Self.entityNames.filter { !entities.contains($0) })
        var lines: [String: [String]] = [:]  // entity → its YAML lines under the entity
        var parents: [String: String] = [:]
        for (index, entity) in entities.enumerated() {
            var attributes: [String] = []
            for _ in 0..<(1 + Int(rng.next() % 3)) {
                let name = pick(Self.attributeNames)
                if !attributes.contains(name) { attributes.append(name) }
            }
            lines[entity] = ["    attributes: { \(attributes.map { "\"\($0)\": string" }.joined(separator: ", ")) }"]
            if index > 0, rng.next() % 4 == 0 { parents[entity] = entities[0] }
        }
        // One relationship pair between two entities (a many-to-many one time in two).
        var relationships: [String: [String]] = [:]
        if entities.count >= 2 {
            let (a, b) = (entities[0], entities[1])
            let forward = pick(Self.relationshipNames)
            let backward = pick(Self.relationshipNames.filter { $0 != forward || a != b })
            let manyToMany = rng.next() % 2 == 0
            relationships[a, default: []].append("      \"\(forward)\": { destination: \"\(b)\", toMany: true, inverse: \"\(backward)\" }")
            relationships[b, default: []].append("      \"\(backward)\": { destination: \"\(a)\", toMany: \(manyToMany), inverse: \"\(forward)\" }")
        }
        func yaml(version: String, with extra: [String]) -> String {
            var text = "version: \(version)\nentities:\n"
            for entity in entities + extra {
                text += "  \"\(entity)\":\n"
                if let parent = parents[entity] { text += "    parent: \"\(parent)\"\n" }
                text += (lines[entity] ?? ["    attributes: { label: string }"]).joined(separator: "\n") + "\n"
                if let pairs = relationships[entity] { text += "    relationships:\n" + pairs.joined(separator: "\n") + "\n" }
            }
            return text
        }
        let summary = "entities \(entities), then \(added); parents \(parents); relationships \(relationships.mapValues { $0.count })"
        return Case(v1: yaml(version: "Names 1", with: []), v2: yaml(version: "Names 2", with: [added]), summary: summary)
    }

    /// Runs one seed; returns what went wrong, or nil. `outcome` counts refusals and migrations.
    static func check(seed: UInt64, outcome: inout [String: Int]) throws -> String? {
        let directory = try TemporaryDirectory()
        let generated = Self.makeCase(seed: seed)
        let folder = directory.url.appendingPathComponent("model")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (file, text) in [
            ("model.yaml", "name: Names\ncurrent: Names 2\nversions: [v1.yaml, v2.yaml]\n"), ("v1.yaml", generated.v1), ("v2.yaml", generated.v2),
        ] {
            try text.write(to: folder.appendingPathComponent(file), atomically: true, encoding: .utf8)
        }
        let model: VersionedModel
        do {
            model = try ModelLoader.load(folder.path)
        } catch let error as TernError where error.kind == .badInput {
            outcome["refused at load", default: 0] += 1
            return nil
        } catch {
            return "seed \(seed): loading failed with \(error), not a refusal — \(generated.summary)"
        }
        let (v1, v2) = (model.versions[0], model.version(named: "Names 2")!)
        let source = directory.path("source.sqlite")
        let clashes = StoreLayout(model: v1).nameClashes()
        do {
            _ = try DataGenerator.generate(model: v1, at: source, rows: 6, seed: seed)
            if !clashes.isEmpty { return "seed \(seed): generated a store though \(clashes[0]) — \(generated.summary)" }
        } catch let error as TernError where error.kind == .badInput && !clashes.isEmpty {
            if FileManager.default.fileExists(atPath: source) { return "seed \(seed): a refused store was left behind" }
            outcome["refused when laid out", default: 0] += 1
            return nil
        } catch {
            return "seed \(seed): generating failed with \(error) — \(generated.summary)"
        }
        let migration = StoreMigration(store: source, model: model, logger: Self.quiet)
        let plan: StoreMigration.Plan
        let destinationClashes = StoreLayout(model: v2).nameClashes()
        do {
            plan = try migration.plan()
            if !destinationClashes.isEmpty { return "seed \(seed): planned though \(destinationClashes[0]) — \(generated.summary)" }
        } catch let error as TernFailure where (error.underlying as? TernError)?.kind == .badInput && !destinationClashes.isEmpty {
            outcome["refused when planned", default: 0] += 1
            return nil
        } catch {
            return "seed \(seed): planning failed with \(error) — \(generated.summary)"
        }
        let output = directory.path("out.sqlite")
        do {
            _ = try migration.runBlocking(plan, output: output)
        } catch {
            return "seed \(seed): migrating failed with \(error) — \(generated.summary)"
        }
        let before = try Self.counts(source, layout: StoreLayout(model: v1))
        let after = try Self.counts(output, layout: StoreLayout(model: v2))
        for (entity, count) in before where after[entity] != count {
            return "seed \(seed): \(entity) had \(count) objects, has \(after[entity] ?? 0) — \(generated.summary)"
        }
        outcome["migrated", default: 0] += 1
        return nil
    }

    /// Objects per entity (by `Z_ENT`) in the store at `path`.
    static func counts(_ path: String, layout: StoreLayout) throws -> [String: Int64] {
        let connection = try Connection(path: path)
        defer { try? connection.close() }
        var counts: [String: Int64] = [:]
        for (name, entity) in layout.entities {
            counts[name] = try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(entity.table)) WHERE Z_ENT = ?", Int64(entity.number))?.int64
        }
        return counts
    }

    @Test("200 generated models of awkward names: refused before any store is written, or migrated keeping every object")
    func awkwardNames() throws {
        var outcome: [String: Int] = [:]
        var failures: [String] = []
        for seed in UInt64(1)...200 {
            if let failure = try Self.check(seed: seed, outcome: &outcome) {
                failures.append(failure)
                if failures.count >= 5 { break }
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        print("awkward names: \(outcome.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))")
        // The draw reaches every outcome: the test would notice a check that refuses everything.
        #expect((outcome["migrated"] ?? 0) >= 20 && (outcome["refused when laid out"] ?? 0) + (outcome["refused when planned"] ?? 0) >= 20, "\(outcome)")
    }
}
