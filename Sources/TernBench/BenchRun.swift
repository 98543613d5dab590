import Foundation
import Tern
import TernLoop
import TernCommands
import TernGenerate

/// One benchmark run's measurements, and the child processes that take them.
struct BenchRun {
    let model: String
    let work: String
    /// How many times each migration and baseline runs: the median is kept, with every run's time.
    let repeats: Int
    private(set) var results: [BenchResult] = []
    /// The live benchmark's runs, when it ran.
    private(set) var liveResults: [LiveBenchResult] = []
    /// The many-to-many links of the chain benchmark's store, once generated.
    private(set) var chainLinks: Int?

    init(model: String, work: String, repeats: Int = 1) {
        self.model = model
        self.work = work
        self.repeats = max(1, repeats)
    }

    /// Takes `measure` `repeats` times, one after the other, and keeps the run of median time
    /// with every run's time: on a shared machine one run's time can be a fifth off. `measure`
    /// is told which run it takes; nil means that run measured nothing (it is left out).
    private func median(_ measure: (_ run: Int) throws -> BenchResult?) throws -> BenchResult? {
        var runs: [BenchResult] = []
        for run in 0..<repeats {
            if let result = try measure(run) { runs.append(result) }
        }
        guard !runs.isEmpty else { return nil }
        runs.sort { $0.seconds < $1.seconds }
        var kept = runs[runs.count / 2]
        if runs.count > 1 { kept.runSeconds = runs.map(\.seconds) }
        return kept
    }

    /// A generated store, its size (books, or documents), and its model.
    struct Store {
        var path: String
        var books: Int
        var model: String
    }

    /// Creates (once) the Bench 1 store with `books` books, 3 pages each and 1,000 categories.
    mutating func generate(books: Int) throws -> Store {
        let store = Store(path: "\(work)/Bench-\(books).sqlite", books: books, model: model)
        guard !FileManager.default.fileExists(atPath: store.path) else { return store }
        let path = store.path
        let versioned = try ModelLoader.load(model)
        let report = try DataGenerator.generate(model: versioned.versions[0], at: path, rows: books, counts: ["Page": 3 * books, "Category": 1_000], seed: 1)
        Self.settle()
        recordGeneration("generate the benchmark store", size: books, report)
        return store
    }

    /// Creates the Chain 1 store of `model` (configs/chain): half the objects authors, half books,
    /// linked many-to-many.
    mutating func generateChain(objects: Int, model: String) throws -> Store {
        let store = Store(path: "\(work)/Chain-\(objects).sqlite", books: objects, model: model)
        // Made anew each run in a kept --directory: its generation's report gives the links.
        Self.remove(store.path)
        let versioned = try ModelLoader.load(model)
        let report = try DataGenerator.generate(model: versioned.versions[0], at: store.path, rows: objects / 2, seed: 1)
        Self.settle()
        recordGeneration("chain: generate the store", size: objects, report)
        chainLinks = report.links
        return store
    }

    /// Creates the Attachments 1 store of `model` (configs/attachments) with `documents`
    /// documents, a quarter of their attachments in files of 100–160 KiB, and 100 folders.
    mutating func generateAttachments(documents: Int, model: String) throws -> Store {
        let store = Store(path: "\(work)/Attachments-\(documents).sqlite", books: documents, model: model)
        // Made anew each run in a kept --directory, its files beside it with it.
        Self.remove(store.path)
        let versioned = try ModelLoader.load(model)
        let report = try DataGenerator.generate(model: versioned.versions[0], at: store.path, rows: documents, counts: ["Folder": 100], seed: 1)
        Self.settle()
        recordGeneration("attachments: generate the store", size: documents, report)
        return store
    }

    /// Creates a store of 300 people and their pets at the first version of a generated model
    /// with `versions` versions (`HistoryModel`).
    mutating func generateHistory(versions: Int) throws -> Store {
        let model = try HistoryModel.write(versions: versions, into: work)
        let store = Store(path: "\(work)/Long-\(versions).sqlite", books: versions, model: model)
        Self.remove(store.path)
        let report = try DataGenerator.generate(model: try ModelLoader.load(model).versions[0], at: store.path, rows: 300, seed: 1)
        Self.settle()
        recordGeneration("history: generate the store", size: versions, report)
        return store
    }

    /// `tern check` as a child process: the time to load the model and recognise the store.
    mutating func check(_ name: String, source: Store) throws {
        let kept = try median { _ in
            let started = Date()
            let child = try ChildProcess.run(
                URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(), ["check", source.path, "--model", source.model])
            let seconds = Date().timeIntervalSince(started)
            guard child.status == 0 || child.status == TernExitCode.migrationNeeded else {
                throw TernError(.io, "\(name): tern check exited \(child.status): \(String(decoding: child.standardError, as: UTF8.self))")
            }
            return BenchResult(name: name, books: source.books, seconds: seconds, objects: 0, peakResidentMemory: nil, passes: [])
        }
        if let kept { results.append(kept) }
    }

    /// A generated store's row: how long it took, and its objects.
    private mutating func recordGeneration(_ name: String, size: Int, _ report: DataGenerator.Report) {
        results.append(
            BenchResult(
                name: name, books: size, seconds: report.duration.seconds, objects: report.objects.values.reduce(0, +), peakResidentMemory: nil,
                passes: []))
    }

    /// Leaves a store just generated still for a while before it is migrated, as a store at rest
    /// on a server is: a migration proves a source that was still unchanged at its end without
    /// reading it again (`StoreFileState`), and one written a moment ago it reads twice.
    static func settle() {
        Latch.pause(seconds: 3.5)
    }

    /// `tern migrate` as a child process; its per-pass peaks come from `--progress json`.
    /// With `chart`, tern also draws its memory over time into that SVG file (`--report`), on
    /// the first run.
    mutating func migrate(_ name: String, source: Store, options: [String], chart: String? = nil) throws {
        let kept = try median { run in try migrateOnce(name, source: source, options: options, chart: run == 0 ? chart : nil) }
        if let kept { results.append(kept) }
    }

    private func migrateOnce(_ name: String, source: Store, options: [String], chart: String?) throws -> BenchResult {
        let output = "\(work)/out-\(UUID().uuidString).sqlite"
        defer { Self.remove(output) }
        let started = Date()
        let lines = try Self.child(
            ["migrate", source.path, "--model", source.model, "--out", output, "--progress", "json"] + options + (chart.map { ["--report", $0] } ?? []))
        let seconds = Date().timeIntervalSince(started)
        guard let last = lines.last, let finished = try? JSONDecoder().decode(Finished.self, from: Data(last.utf8)) else {
            throw TernError(.io, "\(name): tern migrate did not finish (its last line: \(lines.last ?? "none"))")
        }
        let passes = finished.passes.map(\.report)
        return BenchResult(
            name: name, books: source.books, seconds: seconds, objects: passes.map(\.objects).max() ?? 0,
            peakResidentMemory: passes.map(\.peakResidentMemory).max(), passes: passes,
            verifyingSeconds: finished.steps.map(\.verifyingSeconds).reduce(0, +),
            indexingSeconds: finished.steps.map(\.indexingSeconds).reduce(0, +), checkingSourceSeconds: finished.checkingSourceSeconds,
            recreatedLinks: finished.steps.flatMap { step in
                step.linkSeconds.compactMap { name, seconds in
                    step.links[name].map { BenchResult.LinkRate(relationship: name, links: $0, seconds: seconds) }
                }
            }.sorted { $0.relationship < $1.relationship })
    }

    /// `tern migrate` killed with SIGKILL once its progress passes `fraction`, then run again
    /// with `--resume`: the time of both, to compare with an uninterrupted run.
    mutating func migrateKilledAndResumed(_ name: String, source: Store, options: [String], at fraction: Double) throws {
        let kept = try median { _ in try migrateKilledAndResumedOnce(name, source: source, options: options, at: fraction) }
        if let kept { results.append(kept) }
    }

    private func migrateKilledAndResumedOnce(_ name: String, source: Store, options: [String], at fraction: Double) throws -> BenchResult? {
        let output = "\(work)/out-\(UUID().uuidString).sqlite"
        defer { Self.remove(output) }
        let arguments = ["migrate", source.path, "--model", source.model, "--out", output, "--progress", "json"] + options
        let started = Date()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        let lines = Pipe()
        process.standardOutput = lines
        process.standardError = FileHandle.nullDevice
        try process.run()
        PipeLines.read(lines.fileHandleForReading) { line in
            guard let event = try? JSONDecoder().decode(Event.self, from: Data(line.utf8)), (event.fraction ?? 0) >= fraction else { return true }
            kill(process.processIdentifier, SIGKILL)
            return false
        }
        process.waitUntilExit()
        guard process.terminationReason == .uncaughtSignal else {
            // A store this small migrates faster than its progress is read: nothing to compare.
            guard process.terminationStatus == 0 else { throw TernError(.io, "\(name): tern migrate exited \(process.terminationStatus)") }
            try? CommandEnvironment.current.errors.write("tern bench: \(name): finished before it could be killed; left out\n")
            return nil
        }
        let resumed = try Self.child(arguments + ["--resume"])
        let seconds = Date().timeIntervalSince(started)
        guard let last = resumed.last, let finished = try? JSONDecoder().decode(Finished.self, from: Data(last.utf8)) else {
            throw TernError(.io, "\(name): tern migrate --resume did not finish (its last line: \(resumed.last ?? "none"))")
        }
        let passes = finished.passes.map(\.report)
        return BenchResult(
            name: name, books: source.books, seconds: seconds, objects: passes.map(\.objects).max() ?? 0,
            peakResidentMemory: passes.map(\.peakResidentMemory).max(), passes: passes)
    }

    private struct Event: Decodable { var fraction: Double? }

    /// The live benchmark on `source`, `repeats` times with a new writer seed each: every run is
    /// kept (the report shows the median and the spread).
    mutating func live(_ bench: LiveBench, source: Store) throws {
        for run in 0..<repeats {
            liveResults.append(try bench.measure(source: source.path, books: source.books, seed: 1 + 2 * run))
        }
    }

    /// A baseline (`tern bench sql-ceiling`, `naive`, …) as a child process.
    mutating func baseline(_ name: String, command: String, source: Store, options: [String] = []) throws {
        let kept = try median { _ in try baselineOnce(name, command: command, source: source, options: options) }
        if let kept { results.append(kept) }
    }

    private func baselineOnce(_ name: String, command: String, source: Store, options: [String]) throws -> BenchResult {
        let output = "\(work)/out-\(UUID().uuidString).sqlite"
        defer { Self.remove(output) }
        let started = Date()
        let lines = try Self.child(["bench", command, source.path, output, "--model", source.model] + options)
        let seconds = Date().timeIntervalSince(started)
        guard let last = lines.last, let result = try? JSONDecoder().decode(BaselineResult.self, from: Data(last.utf8)) else {
            throw TernError(.io, "\(name) did not finish (its last line: \(lines.last ?? "none"))")
        }
        return BenchResult(
            name: name, books: source.books, seconds: seconds, objects: result.objects,
            peakResidentMemory: result.peakResidentMemory, passes: [])
    }

    /// Removes an output store and the support folder of its external data.
    private static func remove(_ output: String) {
        StoreMigration.remove(output)
        try? FileManager.default.removeItem(atPath: ExternalBinaryData.supportFolder(forStore: output))
    }

    private struct Finished: Decodable {
        struct Pass: Decodable { var report: PassReport }
        struct Step: Decodable {
            var verifyingSeconds: Double
            var indexingSeconds: Double
            var links: [String: Int]
            var linkSeconds: [String: Double]
        }
        var passes: [Pass]
        var steps: [Step]
        var checkingSourceSeconds: Double
    }

    /// Runs this `tern` with `arguments`; returns its standard output's lines, or throws with its
    /// standard error when it fails.
    private static func child(_ arguments: [String]) throws -> [String] {
        let child = try ChildProcess.run(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(), arguments)
        guard child.status == 0 else {
            throw TernError(
                .io, "tern \(arguments.prefix(2).joined(separator: " ")) exited \(child.status): \(String(decoding: child.standardError, as: UTF8.self))")
        }
        return String(decoding: child.standardOutput, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}

/// One row of the results.
struct BenchResult: Codable {
    var name: String
    var books: Int
    var seconds: Double
    /// Objects written (for a migration: its pass's objects).
    var objects: Int
    var peakResidentMemory: Int?
    var passes: [PassReport]
    /// For a migration: the time its verification took, inside `seconds`.
    var verifyingSeconds: Double? = nil
    /// For a migration: the time after verification until the store was finished — the rest of
    /// the index build, which starts beside verification when there is a second worker.
    var indexingSeconds: Double? = nil
    /// Reading the source's content digest at the start and at delivery (tern runs only).
    var checkingSourceSeconds: Double? = nil
    /// Relationships whose links were recreated after the objects, with how fast.
    var recreatedLinks: [LinkRate]? = nil
    /// Every run's wall time, shortest first, when the measurement was repeated (`--repeat`):
    /// the result is the median run's.
    var runSeconds: [Double]? = nil

    /// One relationship's links recreated apart from the objects, and the time they took.
    struct LinkRate: Codable {
        var relationship: String
        var links: Int
        var seconds: Double
        var perSecond: Double { seconds > 0 ? Double(links) / seconds : 0 }
    }

    var objectsPerSecond: Double { seconds > 0 ? Double(objects) / seconds : 0 }
}
