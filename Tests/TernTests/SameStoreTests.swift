import Foundation
import Testing
@testable import Tern
@testable import TernExecution
import TernGenerate
import TernModel
import TernSQLite
import TernTesting

/// More workers change how fast a store is migrated, never what is written: steps whose mappings
/// run in SQL give the very same file with one worker, two or four, the metadata, the pages'
/// order and the header's change counter included.
@Suite("The same store, whatever the workers")
struct SameStoreTests {
    enum Workload: String, CaseIterable, CustomTestStringConvertible {
        /// configs/bench: one step, keys kept, two indexes built beside verification.
        case bench
        /// configs/chain: three steps, to-many links renamed and reshaped, lists numbered.
        case chain
        var testDescription: String { rawValue }
    }

    @Test("one worker, two and four write byte-identical stores, and none keeps a page of Tern's work tables", arguments: Workload.allCases)
    func sameFile(_ workload: Workload) throws {
        let directory = try TemporaryDirectory()
        let model = try ModelLoader.load(Configs.path(workload.rawValue))
        let source = directory.path("source.sqlite")
        switch workload {
        case .bench: _ = try DataGenerator.generate(model: model.versions[0], at: source, rows: 3_000, counts: ["Page": 9_000, "Category": 50], seed: 5)
        case .chain: _ = try DataGenerator.generate(model: model.versions[0], at: source, rows: 2_000, seed: 5)
        }
        var files: [Int: Data] = [:]
        for workers in [1, 2, 4] {
            // Small batches: many commits, and as many chances for the runs to part ways.
            let options = MigrationOptions(batchSize: 250, workers: workers, registry: .builtIn(inSwift: false))
            let migration = StoreMigration(store: source, model: model, options: options)
            let output = directory.path("migrated-\(workers).sqlite")
            _ = try migration.runBlocking(try migration.plan(), output: output)
            let connection = try Connection(path: output, configuration: .init(mode: .readOnly))
            #expect(try connection.scalar("PRAGMA freelist_count") == .integer(0), "\(workers) workers left free pages")
            try connection.close()
            files[workers] = try Data(contentsOf: URL(fileURLWithPath: output))
        }
        #expect(files[1] == files[2], "two workers wrote another file than one")
        #expect(files[1] == files[4], "four workers wrote another file than one")
    }
}
