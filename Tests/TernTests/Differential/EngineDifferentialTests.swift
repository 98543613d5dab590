import Foundation
import Logging
import Synchronization
import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore
import TernGenerate
import TernExamples
import TernSQLite

/// The engine against the reference migrator on generated cases: every way of running a
/// migration — all in SQL, every mapping forced through Swift on 1, 2 or 4 workers, batch sizes
/// from 1 up, a run stopped at a random batch and resumed — must give the reference's
/// destination, by content.
///
/// `TERN_DIFF_CASES` (default 300), `TERN_DIFF_SEED` (the first seed, default 1) and
/// `TERN_DIFF_SECONDS` (stop starting cases after this long) size a run; `scripts/soak` sets them.
@Suite("Engine differential: every path equals the reference migrator")
struct EngineDifferentialTests {
    static let environment = ProcessInfo.processInfo.environment
    static let cases = Int(environment["TERN_DIFF_CASES"] ?? "") ?? 300
    static let firstSeed = UInt64(environment["TERN_DIFF_SEED"] ?? "") ?? 1
    static let seconds = Double(environment["TERN_DIFF_SECONDS"] ?? "")
    /// Thousands of migrations: only their warnings are worth printing.
    static let quiet: Logger = {
        var logger = Logger(label: "tern.differential")
        logger.logLevel = .warning
        return logger
    }()

    @Test("generated models, mappings and stores: SQL, Swift, workers, batch sizes and resume all equal the reference")
    func differential() throws {
        let started = ContinuousClock.now
        var failures: [String] = []
        var ran = 0
        for seed in Self.firstSeed..<(Self.firstSeed + UInt64(Self.cases)) {
            if let seconds = Self.seconds, (ContinuousClock.now - started).seconds > seconds { break }
            if let failure = try Self.check(seed: seed) {
                failures.append(failure)
                Issue.record(Comment(rawValue: failure))
                print("FAILED \(failure)")
                if failures.count >= 5 { break }
            }
            ran += 1
        }
        print(
            "engine differential: \(ran) cases from seed \(Self.firstSeed) in \(String(format: "%.1f", (ContinuousClock.now - started).seconds)) s, \(failures.count) failed"
                + (failures.isEmpty ? "" : "; failing seeds: " + failures.map { $0.prefix { $0 != ":" } }.joined(separator: ", ")))
    }

    /// Runs one case; returns a description of the first difference, or nil.
    static func check(seed: UInt64) throws -> String? {
        let directory = try TemporaryDirectory()
        let generated = try RandomMigrationCase.make(seed: seed, in: directory.url.appendingPathComponent("model"))
        let model: VersionedModel
        do {
            model = try ModelLoader.load(generated.directory.path)
        } catch {
            return "seed \(seed): the generated model does not load: \(error) — \(generated.summary)"
        }
        var rng = SplitMix64(seed: seed &* 31 &+ 7)
        let source = directory.path("source.sqlite")
        let sourceModel = model.versions[0]
        _ = try DataGenerator.generate(
            model: sourceModel, at: source, rows: Int(rng.next() % 30), counts: Dictionary(uniqueKeysWithValues: generated.emptyEntities.map { ($0, 0) }),
            seed: seed)
        try AwkwardValues.apply(to: source, model: sourceModel, rng: &rng)

        let planning = StoreMigration(store: source, model: model, logger: Self.quiet)
        let plan: StoreMigration.Plan
        do {
            plan = try planning.plan()
        } catch {
            return "seed \(seed): the generated mapping does not load: \(error) — \(generated.summary)"
        }
        // A value that does not fit its attribute (an awkward Int64.max plus one): every run must
        // refuse it in validation, as the reference does.
        let expected: [String: [String]]?
        var unfit: ReferenceMigrator.ValueDoesNotFit?
        do {
            expected = try ReferenceMigrator.content(source: source, step: plan.steps[0], scratch: directory.path("reference.sqlite"))
        } catch let error as ReferenceMigrator.ValueDoesNotFit {
            (expected, unfit) = (nil, error)
        }
        let destination = model.version(named: model.currentVersionName)!

        let batchSizes = [1, 2, 5, 64, 10_000]
        let swift = PolicyRegistry.builtIn.sendingEveryMappingThroughSwift()
        var runs: [(name: String, options: MigrationOptions, stopAfter: Int?)] = [
            ("SQL", MigrationOptions(batchSize: batchSizes[Int(rng.next() % 5)], workers: 1, registry: .builtIn), nil),
            ("Swift", MigrationOptions(batchSize: batchSizes[Int(rng.next() % 5)], workers: [1, 2, 4][Int(rng.next() % 3)], registry: swift), nil),
        ]
        let swiftPlan = plan.deciding(with: swift.forModel(at: model.path))
        let stopAfter = 1 + Int(rng.next() % 6)
        _ = rng.next()  // drawn for the seeds' sequence, as it was
        let stoppedBatchSize = [1, 2, 5][Int(rng.next() % 3)]
        let stoppedInSwift = rng.next() % 2 != 0
        runs.append(
            (
                "\(stoppedInSwift ? "Swift" : "SQL") stopped after \(stopAfter) batches and resumed",
                MigrationOptions(batchSize: stoppedBatchSize, workers: 2, registry: stoppedInSwift ? swift : .builtIn), stopAfter
            ))
        for (index, run) in runs.enumerated() {
            let output = directory.path("out-\(index).sqlite")
            var options = run.options
            // Each run's plan decides, with its policies, which mappings run in Swift.
            let plan = run.name.hasPrefix("Swift") ? swiftPlan : plan
            if let stopAfter = run.stopAfter {
                let batches = Mutex(0)
                options.progress = { event in
                    if case .batchCommitted = event { batches.withLock { $0 += 1 } }
                }
                options.shouldStop = { batches.withLock { $0 >= stopAfter } }
                let migration = StoreMigration(store: source, model: model, options: options, logger: Self.quiet)
                do {
                    do {
                        _ = try migration.runBlocking(plan, output: output)
                    } catch let error as TernFailure where error.underlying is MigrationInterrupted {
                        options.shouldStop = { false }
                        _ = try StoreMigration(store: source, model: model, options: options, logger: Self.quiet).runBlocking(
                            plan, output: output, resume: true)
                    }
                } catch {
                    if unfit != nil, "\(error)".contains("does not fit") { continue }
                    return "seed \(seed), \(run.name): \(error) — \(generated.summary)"
                }
            } else {
                do {
                    _ = try StoreMigration(store: source, model: model, options: options, logger: Self.quiet).runBlocking(plan, output: output)
                } catch {
                    if unfit != nil, "\(error)".contains("does not fit") { continue }
                    return "seed \(seed), \(run.name): \(error) — \(generated.summary)"
                }
            }
            guard let expected else {
                return "seed \(seed), \(run.name): migrated though \(unfit!) — \(generated.summary)"
            }
            let actual = try StoreContent.dump(output, model: destination, appValues: true)
            for key in Set(expected.keys).union(actual.keys).sorted() where expected[key] != actual[key] {
                let want = expected[key] ?? []
                let have = actual[key] ?? []
                let missing = want.first { !have.contains($0) }
                let extra = have.first { !want.contains($0) }
                return
                    "seed \(seed), \(run.name): \(key) differs (\(want.count) expected, \(have.count) found; first missing: \(missing ?? "none"); first unexpected: \(extra ?? "none")) — \(generated.summary)"
            }
        }
        return nil
    }
}

/// Makes a generated store awkward: NULLs in optional attributes, extreme and odd values, and
/// order keys that disagree with key order.
enum AwkwardValues {
    static func apply(to path: String, model: ObjectModel, rng: inout SplitMix64) throws {
        let connection = try Connection(path: path, configuration: .init(mode: .readWrite))
        let layout = StoreLayout(model: model)
        for entity in model.entities {
            let entityLayout = layout.entities[entity.name]!
            let table = quoteIdentifier(entityLayout.table)
            for attribute in entity.attributes where !attribute.isTransient {
                let column = quoteIdentifier(entityLayout.attributeColumns[attribute.name]!)
                let remainder = Int64(rng.next() % 4)
                if attribute.isOptional {
                    try connection.execute("UPDATE \(table) SET \(column) = NULL WHERE Z_ENT = \(entityLayout.number) AND Z_PK % 4 = ?", remainder)
                }
                let odd: [SQLiteValue]
                switch attribute.type {
                case .integer64: odd = [.integer(Int64.max), .integer(Int64.min), .integer(0)]
                case .integer16, .integer32: odd = [.integer(-1), .integer(0)]
                case .double, .float, .decimal: odd = [.real(1e308), .real(-0.0), .real(-2.5e-300)]
                case .string: odd = [.text(""), .text("Ünï 😀 'q' \"d\""), .text("  spaced  ")]
                case .date: odd = [.real(-978_307_200), .real(0.5)]
                case .binary: odd = [.blob([]), .blob([0, 255, 0])]
                default: odd = []
                }
                for (offset, value) in odd.enumerated() where attribute.name != "uid" {
                    try connection.execute(
                        "UPDATE \(table) SET \(column) = ? WHERE Z_PK = (SELECT Z_PK FROM \(table) WHERE Z_ENT = \(entityLayout.number) ORDER BY Z_PK LIMIT 1 OFFSET ?)",
                        value, Int64(offset + 1))
                }
            }
        }
        // Order keys that disagree with key order: positions are the source's, not its keys'.
        let multiplier = Int64(1 + rng.next() % 97) * 2 + 1
        for table in Set(layout.entities.values.map(\.table)) {
            for column in Set(layout.entities.values.filter { $0.table == table }.flatMap { $0.orderColumns.values }) {
                try connection.execute(
                    "UPDATE \(quoteIdentifier(table)) SET \(quoteIdentifier(column)) = (Z_PK * \(multiplier)) % 1009 WHERE \(quoteIdentifier(column)) IS NOT NULL"
                )
            }
        }
        for join in layout.joinTables {
            for column in [join.orderColumn, join.inverseOrderColumn].compactMap({ $0 }) {
                try connection.execute(
                    "UPDATE \(quoteIdentifier(join.table)) SET \(quoteIdentifier(column)) = ((\(quoteIdentifier(join.ownerColumn)) * 31 + \(quoteIdentifier(join.destinationColumn))) * \(multiplier)) % 1009"
                )
            }
        }
        try connection.close()
    }
}
