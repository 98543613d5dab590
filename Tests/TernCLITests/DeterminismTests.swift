import Foundation
import Testing

/// The destination must not depend on how the work was cut up: workers read and transform
/// batches in parallel, but keys are given and rows written in source key order.
@Suite("Determinism across --workers and --batch-size")
struct DeterminismTests {
    /// Removed with the suite's instance: nine migrated stores per run.
    let scratch: ScratchFolder
    var directory: URL { scratch.url }

    init() throws {
        scratch = try ScratchFolder("tern-determinism")
    }

    @Test("BookStore 1 → 5 (a policy in Swift, SQL mappings, an in-place step): workers 1, 2, 4 × batch sizes 7, 250, 10,000 give identical stores")
    func bookStore() throws {
        let source = directory.appendingPathComponent("Books.sqlite").path
        #expect(
            try TernProcess.run(["generate", "--model", CheckAndGenerateCommandTests.bookStore, "--version", "BookStore 1", "--rows", "2000", source]).status
                == 0)
        var reference: [String]?
        for workers in [1, 2, 4] {
            for batchSize in [7, 250, 10_000] {
                let output = directory.appendingPathComponent("Out-\(workers)-\(batchSize).sqlite").path
                let outcome = try TernProcess.run([
                    "migrate", source, "--model", CheckAndGenerateCommandTests.bookStore, "--out", output,
                    "--workers", "\(workers)", "--batch-size", "\(batchSize)", "--progress", "none",
                ])
                #expect(outcome.status == 0, "\(outcome.standardError)")
                let lines = try StoreDump.lines(output)
                if let reference {
                    #expect(lines == reference, "--workers \(workers) --batch-size \(batchSize) differs from --workers 1 --batch-size 7")
                } else {
                    #expect(lines.count > 3 * 2000)
                    reference = lines
                }
            }
        }
    }
}
