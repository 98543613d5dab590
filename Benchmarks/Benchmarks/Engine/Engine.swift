import Benchmark
import Foundation
import Tern
import TernGenerate
import TernSQLite

/// The engine's hot components: value expressions evaluated in Swift per row (what policies'
/// default objects cost), association look-ups (what fixing up foreign keys costs), and batches
/// committed with their checkpoints (what resumability costs), on configs/bench.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident],
        scalingFactor: .one,
        maxDuration: .seconds(2),
        maxIterations: 200,
        // Whole steps and tight loops on a shared 2-core machine swing by a third between runs:
        // time gets a wide margin here; malloc counts, which do not depend on the machine, a narrow one.
        thresholds: [
            .mallocCountTotal: .init(relative: [.p90: 5], absolute: [.p90: 50]),
            .wallClock: .init(relative: [.p90: 50]),
            .peakMemoryResident: .init(relative: [.p90: 10]),
        ]
    )

    let rows = 10_000

    // `price * 1.04` and the author split, compiled once, evaluated for 10,000 source rows.
    Benchmark("ExpressionEvaluation10000Rows") { (benchmark: Benchmark, programs: BenchPrograms) in
        let authors: [SQLiteValue] = (0..<rows).map { .text("First\($0) Last\($0)") }
        for _ in benchmark.scaledIterations {
            var checksum = 0
            for row in 0..<rows {
                let price = try programs.price.evaluate([.real(Double(row))])
                let first = try programs.firstName.evaluate([authors[row]])
                let last = try programs.lastName.evaluate([authors[row]])
                checksum &+= (price.double.map { Int($0) } ?? 0) &+ (first.text?.utf8.count ?? 0) &+ (last.text?.utf8.count ?? 0)
            }
            blackHole(checksum)
        }
    } setup: {
        try BenchPrograms()
    }

    // 10,000 look-ups of source keys in a 1,000,000-row association table, as stage 2 and the
    // fused foreign keys do them (a covering index on source, destination).
    Benchmark("AssociationLookup10000Keys") { (benchmark: Benchmark, connection: Connection) in
        for _ in benchmark.scaledIterations {
            let lookup = try connection.cachedStatement("SELECT destination FROM TERN_ASSOC_1 WHERE source = ?")
            var checksum: Int64 = 0
            var key: Int64 = 12_345
            for _ in 0..<rows {
                key = (key &* 48_271) % 1_000_000 + 1
                try lookup.bind(key, at: 1)
                if try lookup.step() { checksum &+= lookup.row.int64(at: 0) }
                lookup.reset()
            }
            blackHole(checksum)
        }
    } setup: {
        let connection = try Connection(path: ":memory:")
        try connection.execute("CREATE TABLE TERN_ASSOC_1 (source INTEGER NOT NULL, destination INTEGER NOT NULL)")
        try connection.execute("WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < 1000000) INSERT INTO TERN_ASSOC_1 SELECT n, 2000000 - n FROM k")
        try connection.execute("CREATE INDEX TERN_ASSOC_1_SOURCE ON TERN_ASSOC_1 (source, destination)")
        return connection
    }

    // A whole step of 10,000 books (40,001 objects) in batches of 100: about 400 commits, each
    // with its checkpoint, then relationships, validation and verification. Compare with the
    // same step in batches of 10,000 to see what checkpoints cost.
    for batchSize in [100, 10_000] {
        Benchmark("MigrateStep10000BooksBatch\(batchSize)", configuration: .init(maxIterations: 20)) { (benchmark: Benchmark, store: BenchStore) in
            for _ in benchmark.scaledIterations {
                let output = store.directory + "/out-\(UUID().uuidString).sqlite"
                try Migrator.migrate(store.step, from: store.source, to: output, options: MigrationOptions(batchSize: batchSize, workers: 1))
                StoreMigration.remove(output)
            }
        } setup: {
            try BenchStore(books: rows)
        }
    }
}

/// configs/bench, from this package's directory.
func benchModel() throws -> VersionedModel {
    try ModelLoader.load(URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../configs/bench").standardizedFileURL.path)
}

/// The bench mapping's value expressions, compiled to Swift.
struct BenchPrograms {
    let price: ExpressionProgram
    let firstName: ExpressionProgram
    let lastName: ExpressionProgram

    init() throws {
        let model = try benchModel()
        let file = URL(fileURLWithPath: model.path).appendingPathComponent("mappings/1-to-2.yaml").path
        let mapping = try MappingLoader.load(file, source: model.versions[0], destination: model.versions[1])
        let books = mapping.entities.first { $0.mapping.name == "BookToPublication" }!
        price = ExpressionProgram(books.attributes["price"]!)
        firstName = ExpressionProgram(books.attributes["firstName"]!)
        lastName = ExpressionProgram(books.attributes["lastName"]!)
    }
}

/// A Bench 1 store and its step to Bench 2, in a temporary directory.
struct BenchStore {
    let directory: String
    let source: String
    let step: MigrationStep

    init(books: Int) throws {
        let model = try benchModel()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-engine-bench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        source = directory + "/Bench.sqlite"
        _ = try DataGenerator.generate(model: model.versions[0], at: source, rows: books, counts: ["Page": 3 * books, "Category": 1_000], seed: 1)
        let mappings = MigrationPlanner.mappingFiles(for: model)
        step = try MigrationPlanner.chain(in: model, from: "Bench 1", to: "Bench 2", mappingFiles: mappings)[0]
    }
}
