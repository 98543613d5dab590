import Foundation
import Testing
import TernStore
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
import TernGenerate
import TernSQLite
import TernTesting
import TernLoop

/// Verification's source side read during the pass reads the source alone.
@Suite("Early expectations")
struct EarlyExpectationsTests {
    @Test(
        "a scan over the source alone is read and kept by its query beside the step store as soon as it is read; one naming a table of the store being written cannot be prepared there and is left to verification"
    )
    func sourceOnly() throws {
        let directory = try TemporaryDirectory()
        let model = try ModelLoader.load(Configs.path("bench"))
        let source = directory.path("bench-1.sqlite")
        _ = try DataGenerator.generate(model: model.versions[0], at: source, rows: 300, counts: ["Page": 900, "Category": 5], seed: 4)
        let reader = try ReadOnlyStore(path: source)
        let overSource = SQLFragment("SELECT count(*), sum(s.\"Z_PK\") FROM \"src\".\"ZBOOK\" s WHERE (s.\"Z_PK\" > ?)", [.integer(100)])
        // ZBOOK exists in the source only as src.ZBOOK: unqualified, it names the main database's.
        let overStore = SQLFragment("SELECT count(*), sum(d.\"Z_PK\") FROM \"ZBOOK\" d WHERE (1)")
        let cache = SourceScanCache(stepStore: directory.path("step.sqlite"))
        let early = try EarlyExpectations(
            [overStore, overSource], keepingIn: cache, sourceAttachURI: reader.attachPath, externalData: ExternalDataFolders(), waitForTurn: {},
            gate: CoreGate(),
            shouldStop: { false })
        // Read in order, on a thread of its own, and kept at once: once the scan over the
        // source is in the cache, the other was tried.
        Latch.until(timeout: 30) { cache.scans(of: [overSource])[overSource] != nil }
        #expect(cache.scans(of: [overSource, overStore]) == [overSource: ScanResult(count: 200, value: (101...300).reduce(0, +))])
        let read = early.finish()
        #expect(read.count == 1)
        #expect(read[overSource] == ScanResult(count: 200, value: (101...300).reduce(0, +)))
        #expect(read[overStore] == nil)
    }
}
