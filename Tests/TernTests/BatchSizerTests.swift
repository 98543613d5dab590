import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore

/// Batches of a mapping that runs in Swift are sized by their bytes and time, within --batch-size.
@Suite("Batch sizes follow what batches cost")
struct BatchSizerTests {
    @Test("cheap batches grow twofold a batch up to --batch-size")
    func grows() {
        var sizer = BatchSizer(maximumObjects: 10_000, memoryBudget: 16 << 20, inFlight: 4)
        var sizes = [sizer.objects]
        for _ in 0..<10 {
            sizer.observe(objects: sizer.objects, bytes: sizer.objects * 100, seconds: 0.001)
            sizes.append(sizer.objects)
        }
        #expect(sizes == [64, 128, 256, 512, 1024, 2048, 4096, 8192, 10_000, 10_000, 10_000])
    }

    @Test("a batch's share of the memory budget caps it by its bytes per object, however many --batch-size allows")
    func boundedByBytes() {
        var sizer = BatchSizer(maximumObjects: 10_000, memoryBudget: 16 << 20, inFlight: 4)
        #expect(sizer.bytesPerBatch == (16 << 20) / 4 / BatchSizer.copiesInMemory)
        sizer.observe(objects: 64, bytes: 64 * 20_000, seconds: 0.001)
        #expect(sizer.objects == sizer.bytesPerBatch / 20_000)
        // One object larger than the whole share still makes a batch of one.
        sizer.observe(objects: 1, bytes: 100 << 20, seconds: 0.001)
        #expect(sizer.objects == 1)
    }

    @Test("a slow policy makes batches of about half a second")
    func boundedByTime() {
        var sizer = BatchSizer(maximumObjects: 10_000, memoryBudget: 16 << 20, inFlight: 4)
        sizer.observe(objects: 64, bytes: 64 * 100, seconds: 0.64)  // 10 ms an object
        #expect(sizer.objects == 50)
    }

    @Test("never above --batch-size, never below one")
    func limits() {
        var sizer = BatchSizer(maximumObjects: 10, memoryBudget: 16 << 20, inFlight: 4)
        #expect(sizer.objects == 10)
        sizer.observe(objects: 10, bytes: 0, seconds: 0)
        #expect(sizer.objects == 10)
        sizer.observe(objects: 10, bytes: 10, seconds: 1_000)
        #expect(sizer.objects == 1)
    }
}
