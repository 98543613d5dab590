import Foundation
import Logging
import Testing
@testable import Tern
@testable import TernMapping
@testable import TernModel
@testable import TernStore
import TernGenerate
import TernSQLite

/// Consecutive inferred steps run as one composed step (the store copied once); the store it
/// gives must be the one running them one by one gives — checked by content on generated chains.
@Suite("Consecutive inferred steps composed into one")
struct StepCompositionTests {
    private static let quiet = Logger(label: "tern.test") { _ in SwiftLogNoOpLogHandler() }

    /// Migrates `source` to the current version composed and step by step; a description of the
    /// first difference, or nil. `composed` tells whether the plan had one step.
    private static func compare(source: String, model: VersionedModel, scratch: TemporaryDirectory, rows: Int) throws -> (
        difference: String?, composed: Bool, refusal: String?
    ) {
        var contents: [[String: [String]]] = []
        var steps: [MigrationStep] = []
        for composing in [true, false] {
            var options = MigrationOptions(batchSize: 7, workers: 1, registry: .builtIn)
            options.composeSteps = composing
            let migration = StoreMigration(store: source, model: model, options: options, logger: quiet)
            let plan = try migration.plan()
            // A chain that comes back to its first version has nothing to migrate.
            guard !plan.steps.isEmpty else { return (nil, false, nil) }
            if composing { steps = plan.steps }
            let output = scratch.path("out-\(composing).sqlite")
            do {
                _ = try migration.runBlocking(plan, output: output)
            } catch {
                throw TernError(.io, "\(composing ? "composed" : "step by step"): \(error)")
            }
            contents.append(try StoreContent.dump(output, model: model.version(named: model.currentVersionName)!))
        }
        let refusal = steps.compactMap(\.notComposed).first
        for table in Set(contents[0].keys).union(contents[1].keys).sorted() where contents[0][table] != contents[1][table] {
            return ("\(table): composed \(contents[0][table] ?? []) — step by step \(contents[1][table] ?? [])", steps.count == 1, refusal)
        }
        return (nil, steps.count == 1, refusal)
    }

    @Test("generated chains of three or four inferred steps: the composed step gives the store the steps give one by one", arguments: 0..<4)
    func generatedChains(block: UInt64) throws {
        var composed = 0
        var refusals: [String] = []
        for seed in (block * 50)..<(block * 50 + 50) {
            let scratch = try TemporaryDirectory()
            let chain = try RandomChainCase.make(seed: seed, in: scratch.url.appendingPathComponent("model"))
            let model = try #require(try? ModelLoader.load(chain.directory.path), "seed \(seed): the generated chain does not load — \(chain.summary)")
            let source = scratch.path("source.sqlite")
            var rng = SplitMix64(seed: seed)
            _ = try DataGenerator.generate(model: model.versions[0], at: source, rows: Int(rng.next() % 40), seed: seed)
            let result: (difference: String?, composed: Bool, refusal: String?)
            do {
                result = try Self.compare(source: source, model: model, scratch: scratch, rows: 0)
            } catch {
                Issue.record("seed \(seed): \(error) — \(chain.summary)")
                continue
            }
            if let difference = result.difference {
                Issue.record("seed \(seed): \(difference) — \(chain.summary)")
            }
            if result.composed { composed += 1 }
            if let refusal = result.refusal { refusals.append("seed \(seed): \(refusal)") }
        }
        // Most chains compose; the rest are refused for a reason the plan states.
        #expect(composed >= 35, "only \(composed) of 50 chains composed: \(refusals)")
    }

    @Test("BookStore 1 → 3, two inferred steps, is one step; the plan says so, and the mapping-file steps say why they stand alone")
    func bookStorePlan() throws {
        let model = try ModelLoader.load(Configs.path("bookstore"))
        let scratch = try TemporaryDirectory()
        let source = scratch.path("bookstore-1.sqlite")
        _ = try DataGenerator.generate(model: model.versions[0], at: source, rows: 60, seed: 2)
        let plan = try StoreMigration(store: source, model: model, options: MigrationOptions(registry: .builtIn), logger: Self.quiet).plan()
        #expect(
            plan.steps.map { "\($0.source.versionName) → \($0.destination.versionName)" } == [
                "BookStore 1 → BookStore 3", "BookStore 3 → BookStore 4", "BookStore 4 → BookStore 5",
            ])
        #expect(plan.steps[0].composedFrom == ["BookStore 1", "BookStore 2", "BookStore 3"])
        let result = try Self.compare(source: source, model: model, scratch: scratch, rows: 60)
        #expect(result.difference == nil)
    }

    @Test(
        "an order dropped and made again, or a to-many cut to a to-one and widened again, is not composed: the plan says why",
        arguments: [
            (["ordered: true", "ordered: false", "ordered: true"], "order"),
            (["toMany: true", "toMany: false", "toMany: true"], "to-one"),
        ])
    func refused(shapes: [String], reason: String) throws {
        let scratch = try TemporaryDirectory()
        let directory = scratch.url.appendingPathComponent("model")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try "name: Chain\ncurrent: Chain 3\nversions: [v1.yaml, v2.yaml, v3.yaml]\n".write(
            to: directory.appendingPathComponent("model.yaml"), atomically: true, encoding: .utf8)
        for (index, shape) in shapes.enumerated() {
            let toMany = shape.hasPrefix("toMany") ? shape : "toMany: true"
            let ordered = shape.hasPrefix("ordered") ? shape : "ordered: false"
            try """
            version: Chain \(index + 1)
            entities:
              List:
                attributes: { name: string }
                relationships: { items: { destination: Item, \(toMany), \(ordered) } }
              Item:
                attributes: { label: string\(index == 2 ? ", note: string" : "") }
            """.write(to: directory.appendingPathComponent("v\(index + 1).yaml"), atomically: true, encoding: .utf8)
        }
        let model = try ModelLoader.load(directory.path)
        let source = scratch.path("source.sqlite")
        _ = try DataGenerator.generate(model: model.versions[0], at: source, rows: 30, seed: 4)
        let plan = try StoreMigration(store: source, model: model, options: MigrationOptions(registry: .builtIn), logger: Self.quiet).plan()
        try #require(plan.steps.count == 2)
        #expect(plan.steps[0].notComposed?.contains(reason) == true, "\(plan.steps[0].notComposed ?? "no reason")")
        #expect(try Self.compare(source: source, model: model, scratch: scratch, rows: 30).difference == nil)
    }

    @Test(
        "one attribute through four versions: the first default a version fills in stays, whatever later versions say",
        arguments: [
            (["string", "{ type: string, optional: false, default: \"first\" }", "string", "{ type: string, optional: false, default: \"second\" }"], "first"),
            (["string", "string", "{ type: string, optional: false, default: \"filled\" }", "string"], "filled"),
            (["integer16", "{ type: integer32, optional: false, default: \"5\" }", "integer64", "{ type: integer64, optional: false, default: \"9\" }"], "5"),
        ])
    func oneAttribute(shapes: [String], filled: String) throws {
        let scratch = try TemporaryDirectory()
        let directory = scratch.url.appendingPathComponent("model")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try "name: Chain\ncurrent: Chain 4\nversions: [v1.yaml, v2.yaml, v3.yaml, v4.yaml]\n".write(
            to: directory.appendingPathComponent("model.yaml"), atomically: true, encoding: .utf8)
        for (index, shape) in shapes.enumerated() {
            try "version: Chain \(index + 1)\nentities:\n  Note:\n    attributes:\n      value: \(shape)\n      step\(index): string\n"
                .write(to: directory.appendingPathComponent("v\(index + 1).yaml"), atomically: true, encoding: .utf8)
        }
        let model = try ModelLoader.load(directory.path)
        let source = scratch.path("source.sqlite")
        _ = try DataGenerator.generate(model: model.versions[0], at: source, rows: 20, seed: 6)
        let connection = try Connection(path: source)
        try connection.execute("UPDATE ZNOTE SET ZVALUE = NULL WHERE Z_PK % 2 = 0")
        try connection.close()
        let plan = try StoreMigration(store: source, model: model, options: MigrationOptions(registry: .builtIn), logger: Self.quiet).plan()
        #expect(plan.steps.count == 1)
        #expect(try Self.compare(source: source, model: model, scratch: scratch, rows: 20).difference == nil)
        let output = try Connection(path: scratch.path("out-true.sqlite"), configuration: .init(mode: .readOnly))
        #expect(try output.scalar("SELECT count(*) FROM ZNOTE WHERE Z_PK % 2 = 0 AND CAST(ZVALUE AS TEXT) = ?", filled) == .integer(10))
    }
}
