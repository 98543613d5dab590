import ArgumentParser
import Foundation
import Tern
import TernCommands
import TernLoop

/// `tern bench`: the end-to-end benchmark (Benchmarks/README.md). Generates the benchmark store,
/// then runs, one after the other on this machine, Tern's migration (pushed down to SQL, through
/// a Swift policy, a CPU-heavy policy on 1 and 2 workers), a hand-written SQL script (the
/// ceiling) and a naive row-by-row program (the baseline), each as its own process so each
/// peak memory is that process's own; then the memory of other store sizes.
/// `tern bench`: whole migrations beside the hand-written SQL script and the naive program. Add it
/// to a command line with `TernCommandLine.main(registry:commands:)`.
public struct BenchCommand: ParsableCommand {
    /// `bench run` (the default), `bench report`, and the baselines each run starts as children.
    public static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmark whole migrations against a hand-written SQL ceiling and a naive baseline.",
        subcommands: [
            BenchRunCommand.self, BenchReportCommand.self, SQLCeilingCommand.self, NaiveBaselineCommand.self,
            AttachmentsCeilingCommand.self, AttachmentsNaiveCommand.self, ChainCeilingCommand.self, ChainNaiveCommand.self, VacuumFloorCommand.self,
            LiveBenchCommand.self,
        ],
        defaultSubcommand: BenchRunCommand.self
    )

    /// The command, before its arguments are parsed.
    public init() {}

    /// A child's result, as one JSON line on standard output.
    static func report<Result: Encodable>(_ result: Result) throws {
        print(String(decoding: try JSONEncoder().encode(result), as: UTF8.self))
    }
}

struct BenchRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the benchmark (the default).",
        discussion:
            "Writes the results as Markdown and JSON into --results (latest.md, latest.json) with charts (latest.svg: time and memory per run; memory-sql.svg, memory-policy.svg: memory over time, pass by pass) and prints the table."
    )

    @Option(help: "Books in the benchmark store (with 3 pages each and 1,000 categories).")
    var books = 1_000_000

    @Option(parsing: .upToNextOption, help: "Other numbers of books whose peak memory to compare (SQL and Swift policy).")
    var memorySizes: [Int] = [100_000]

    @Flag(inversion: .prefixedNo, help: "Run the naive baseline (slow at large sizes).")
    var naive = true

    @Option(
        help: "Documents in the attachments benchmark (configs/attachments: a quarter of them with a file of 100–160 KiB beside the store); 0 leaves it out.")
    var documents = 20_000

    @Option(help: "Objects in the chain benchmark (configs/chain: as many authors as books, many-to-many, through three inferred steps); 0 leaves it out.")
    var chainObjects = 1_000_000

    @Option(
        help:
            "Versions of the long-history benchmark (a generated Xcode model, each version adding an attribute; a store of a few hundred objects at its first version, checked and migrated to its last); 0 leaves it out."
    )
    var historyVersions = 100

    @OptionGroup var live: LiveBenchOptions

    @Option(help: "Where to put the stores (default: a temporary directory, removed afterwards).")
    var directory: String?

    @Option(help: "Where to write latest.md and latest.json.")
    var results = "Benchmarks/Results"

    @Option(help: "The benchmark model (default: configs/bench in this checkout).")
    var model: String?

    @Option(
        name: .customLong("repeat"),
        help: "Run each migration and baseline this many times (odd), one after the other, and report the median run (with the shortest and longest).")
    var repeats = 1

    func validate() throws {
        guard books >= 100 else { throw ValidationError("--books must be at least 100") }
        guard documents == 0 || documents >= 100 else { throw ValidationError("--documents must be 0 or at least 100") }
        guard chainObjects == 0 || chainObjects >= 100 else { throw ValidationError("--chain-objects must be 0 or at least 100") }
        guard historyVersions == 0 || (2...1_000).contains(historyVersions) else { throw ValidationError("--history-versions must be 0 or from 2 to 1000") }
        guard [1, 3, 5, 7, 9].contains(repeats) else { throw ValidationError("--repeat must be odd, from 1 to 9: the median is a run's own") }
    }

    func run() throws {
        try reportingErrors {
            let fileManager = FileManager.default
            let work = directory ?? fileManager.temporaryDirectory.appendingPathComponent("tern-bench-\(UUID().uuidString)").path
            try fileManager.createDirectory(atPath: work, withIntermediateDirectories: true)
            defer { if directory == nil { try? fileManager.removeItem(atPath: work) } }
            let modelPath = try model ?? ConfigsDirectory.find("bench")
            var bench = BenchRun(model: modelPath, work: work, repeats: repeats)

            let source = try bench.generate(books: books)
            let runs: [(String, [String])] = [
                ("tern: all pushed down to SQL", []),
                ("tern: author split in a Swift policy", ["--mapping", "\(modelPath)/policy/1-to-2.yaml"]),
                ("tern: CPU-heavy Swift policy, --workers 1", ["--mapping", "\(modelPath)/policy/1-to-2-cleaning.yaml", "--workers", "1"]),
                ("tern: CPU-heavy Swift policy, --workers 2", ["--mapping", "\(modelPath)/policy/1-to-2-cleaning.yaml", "--workers", "2"]),
            ]
            try fileManager.createDirectory(atPath: results, withIntermediateDirectories: true)
            // The first two runs also draw their memory over time, pass by pass.
            let charts = ["\(results)/memory-sql.svg", "\(results)/memory-policy.svg"]
            for (index, (name, options)) in runs.enumerated() {
                try bench.migrate(name, source: source, options: options, chart: index < charts.count ? charts[index] : nil)
            }
            try bench.migrateKilledAndResumed("tern: all pushed down to SQL, killed at 50% and resumed", source: source, options: [], at: 0.5)
            try bench.baseline("hand-written SQL script (ceiling)", command: "sql-ceiling", source: source)
            try bench.baseline("VACUUM INTO of the source (floor)", command: "vacuum-floor", source: source)
            if naive { try bench.baseline("naive row by row (baseline)", command: "naive", source: source) }
            if documents > 0 {
                let attachments = try bench.generateAttachments(documents: documents, model: ConfigsDirectory.find("attachments"))
                try bench.migrate("attachments: tern, copied as they are (1 → 2)", source: attachments, options: ["--to", "Attachments 2"])
                try bench.migrate("attachments: tern, decoded into the store (1 → 2 → 3)", source: attachments, options: [])
                try bench.baseline(
                    "attachments: hand-written SQL and hard links (ceiling)", command: "attachments-sql-ceiling", source: attachments,
                    options: ["--version", "Attachments 2"])
                if naive {
                    try bench.baseline(
                        "attachments: naive row by row, files copied (baseline)", command: "attachments-naive", source: attachments,
                        options: ["--version", "Attachments 2"])
                }
            }
            if chainObjects > 0 {
                let chain = try bench.generateChain(objects: chainObjects, model: ConfigsDirectory.find("chain"))
                try bench.migrate("chain: tern, one inferred mapping (renames followed)", source: chain, options: [])
                try bench.migrate("chain: tern, step by step (--step-by-step)", source: chain, options: ["--step-by-step"])
                try bench.baseline("chain: hand-written SQL, one pass (ceiling)", command: "chain-sql-ceiling", source: chain)
                try bench.baseline("chain: VACUUM INTO of the source (floor)", command: "vacuum-floor", source: chain)
                if naive { try bench.baseline("chain: naive row by row (baseline)", command: "chain-naive", source: chain) }
            }
            if historyVersions > 0 {
                let history = try bench.generateHistory(versions: historyVersions)
                try bench.check("history: tern check, \(historyVersions) versions", source: history)
                try bench.migrate("history: tern migrate, \(historyVersions) versions", source: history, options: [])
            }
            if live.liveBooks > 0 {
                try bench.live(live.bench(model: modelPath, work: work), source: bench.generate(books: live.liveBooks))
            }
            for size in memorySizes where size != books {
                let other = try bench.generate(books: size)
                try bench.migrate("tern: all pushed down to SQL", source: other, options: [])
                try bench.migrate("tern: author split in a Swift policy", source: other, options: ["--mapping", "\(modelPath)/policy/1-to-2.yaml"])
            }

            let report = BenchReport(
                books: books, documents: documents > 0 ? documents : nil, chainObjects: chainObjects > 0 ? chainObjects : nil, chainLinks: bench.chainLinks,
                machine: BenchReport.machine(), repeats: repeats > 1 ? repeats : nil, results: bench.results,
                live: bench.liveResults.isEmpty ? nil : bench.liveResults)
            try fileManager.createDirectory(atPath: results, withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try encoder.encode(report).write(to: URL(fileURLWithPath: "\(results)/latest.json"))
            let markdown = report.markdown
            try Data(markdown.utf8).write(to: URL(fileURLWithPath: "\(results)/latest.md"))
            try Data(report.svg.utf8).write(to: URL(fileURLWithPath: "\(results)/latest.svg"))
            print(markdown)
            print(
                "Written to \(results): latest.md, latest.json, latest.svg (time and memory per run), memory-sql.svg and memory-policy.svg (memory over time, pass by pass)"
            )
        }
    }
}

/// `tern bench report`: renders `latest.md` again from `latest.json`, after the report's format
/// changed, without measuring anything again.
struct BenchReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Render latest.md and latest.svg again from latest.json (no measuring)."
    )

    @Option(help: "The directory holding latest.json.")
    var results = "Benchmarks/Results"

    func run() throws {
        try reportingErrors {
            let path = "\(results)/latest.json"
            guard let data = FileManager.default.contents(atPath: path) else { throw TernError(.missingInput, "no benchmark results", path: path) }
            let report: BenchReport
            do {
                report = try JSONDecoder().decode(BenchReport.self, from: data)
            } catch {
                throw TernError(.badInput, "not benchmark results: \(error.localizedDescription)", path: path)
            }
            try Data(report.markdown.utf8).write(to: URL(fileURLWithPath: "\(results)/latest.md"))
            try Data(report.svg.utf8).write(to: URL(fileURLWithPath: "\(results)/latest.svg"))
            print(report.markdown)
        }
    }
}
