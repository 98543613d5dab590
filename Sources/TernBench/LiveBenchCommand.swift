import ArgumentParser
import Foundation
import Tern
import TernCommands

/// The live benchmark's options, in `tern bench` and `tern bench live`.
struct LiveBenchOptions: ParsableArguments {
    @Option(help: "Books in the live benchmark's store (with 3 pages each and 1,000 categories); 0 leaves it out of `tern bench`.")
    var liveBooks = 250_000

    @Option(help: "The app's commits per second during the live benchmark.")
    var liveRate = 1_000

    @Option(help: "Seconds the app writes alone first, for its latency without Tern.")
    var liveAloneSeconds = 10.0

    @Option(help: "Tern's workers in the live benchmark.")
    var liveWorkers = 2

    func validate() throws {
        guard liveBooks == 0 || liveBooks >= 100 else { throw ValidationError("--live-books must be 0 or at least 100") }
        guard (1...20_000).contains(liveRate) else { throw ValidationError("--live-rate must be from 1 to 20000 commits a second") }
        guard (1...600).contains(liveAloneSeconds) else { throw ValidationError("--live-alone-seconds must be from 1 to 600") }
        guard (1...64).contains(liveWorkers) else { throw ValidationError("--live-workers must be from 1 to 64") }
    }

    /// The benchmark, its writer found in the checkout.
    func bench(model: String, work: String) throws -> LiveBench {
        let writer = try Checkout.file("Tests/LiveWriter/writer.py", hint: "the live benchmark needs the checkout's test app (or pass --live-books 0)")
        return LiveBench(model: model, work: work, writer: writer, rate: liveRate, workers: liveWorkers, aloneSeconds: liveAloneSeconds)
    }
}

/// `tern bench live`: the live benchmark alone, its table printed and written to live.md and
/// live.json (the full `tern bench` also runs it, into latest.md).
struct LiveBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live",
        abstract: "Benchmark `tern migrate --live` while an app writes: its commit latency, Tern's downtime.",
        discussion:
            "Needs python3 and the checkout's Tests/LiveWriter/writer.py (the app). Each run proves its result equal to an offline migration of what the app left, or fails."
    )

    @OptionGroup var live: LiveBenchOptions

    @Option(name: .customLong("repeat"), help: "Runs (odd): the median run is shown, with the spread.")
    var repeats = 1

    @Option(help: "Where to write live.md and live.json.")
    var results = "Benchmarks/Results"

    @Option(help: "The benchmark model (default: configs/bench in this checkout).")
    var model: String?

    func validate() throws {
        guard live.liveBooks >= 100 else { throw ValidationError("--live-books must be at least 100") }
        guard [1, 3, 5, 7, 9].contains(repeats) else { throw ValidationError("--repeat must be odd, from 1 to 9: the median is a run's own") }
    }

    func run() throws {
        try reportingErrors {
            let fileManager = FileManager.default
            let work = fileManager.temporaryDirectory.appendingPathComponent("tern-bench-\(UUID().uuidString)").path
            try fileManager.createDirectory(atPath: work, withIntermediateDirectories: true)
            defer { try? fileManager.removeItem(atPath: work) }
            let modelPath = try model ?? ConfigsDirectory.find("bench")
            var bench = BenchRun(model: modelPath, work: work, repeats: repeats)
            try bench.live(live.bench(model: modelPath, work: work), source: bench.generate(books: live.liveBooks))
            let report = BenchReport(books: live.liveBooks, machine: BenchReport.machine(), results: [], live: bench.liveResults)
            try fileManager.createDirectory(atPath: results, withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try encoder.encode(report).write(to: URL(fileURLWithPath: "\(results)/live.json"))
            let markdown = ([report.machine] + report.liveLines()).joined(separator: "\n") + "\n"
            try Data(markdown.utf8).write(to: URL(fileURLWithPath: "\(results)/live.md"))
            print(markdown)
        }
    }
}
