import Foundation
import Tern
import TernCommands
import TernLoop
import TernSQLite

/// The live benchmark: `tern migrate --live` on a Bench 1 store while an app writes to it. The
/// app is `Tests/LiveWriter/writer.py` (Python's sqlite3, writing as Core Data does, never
/// Tern's code), committing at a fixed rate with an fdatasync each. One run measures the writer
/// alone, then with Tern's triggers in the store (a killed run's, then `--abort`ed), then during
/// a live migration that it closes `closingAfter` after Tern waits for it, and proves the result
/// equal to an offline migration of what the writer left.
struct LiveBench {
    var model: String
    var work: String
    /// The writer's script, from the checkout.
    var writer: String
    var rate: Int
    var workers: Int
    /// How long the writer runs alone, for its latency without Tern.
    var aloneSeconds: Double

    /// How long the app takes to close the store once Tern says it waits for that.
    static let closingAfter = 2.0
    /// How long the writer writes before Tern starts: the store is in use when it arrives.
    static let writingBefore = 2.0

    /// One run on a copy of `source` (a Bench 1 store with `books` books); `seed` varies the
    /// writer's operations from run to run.
    func measure(source: String, books: Int, seed: Int) throws -> LiveBenchResult {
        let directory = "\(work)/live-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let aloneStore = "\(directory)/Alone.sqlite"
        try FileManager.default.copyItem(atPath: source, toPath: aloneStore)
        let alone = try Writer(script: writer, store: aloneStore, rate: rate, seed: seed)
        Latch.pause(seconds: aloneSeconds)
        let aloneCommits = try alone.close()

        // The writer with Tern's triggers in the store and no Tern running: their own cost.
        let triggered = "\(directory)/Triggers.sqlite"
        try FileManager.default.copyItem(atPath: source, toPath: triggered)
        try leaveTriggers(in: triggered)
        let withTriggers = try Writer(script: writer, store: triggered, rate: rate, seed: seed)
        Latch.pause(seconds: aloneSeconds)
        let triggerCommits = try withTriggers.close()
        try abortLive(triggered)

        let store = "\(directory)/Live.sqlite"
        try FileManager.default.copyItem(atPath: source, toPath: store)
        let objects = try Self.objects(in: store)
        let app = try Writer(script: writer, store: store, rate: rate, seed: seed + 1)
        let run: LiveRun
        do {
            Latch.pause(seconds: Self.writingBefore)
            run = try migrateLive(store, closing: app)
        } catch {
            // The writer must not outlive the run: its folder is removed next.
            app.end()
            throw error
        }
        let commits = try app.close()
        try proveOracle(store, backup: run.finished.backup)

        func window(_ from: Double, _ to: Double) -> CommitLatency {
            CommitLatency(commits.filter { $0.at >= from && $0.at < to }.map(\.milliseconds))
        }
        let finished = run.finished
        return LiveBenchResult(
            books: books, objects: objects, rate: rate, workers: workers, alone: CommitLatency(aloneCommits.map(\.milliseconds)),
            triggers: CommitLatency(triggerCommits.map(\.milliseconds)),
            during: window(run.started, run.closing), copying: window(run.started, run.verified), caughtUp: window(run.verified, run.closing),
            seconds: run.ended - run.started, cutOverSeconds: finished.cutOverSeconds, cutOverEntries: finished.cutOverEntries,
            lockSeconds: finished.cutOverLockSeconds, roundSeconds: finished.cutOverRoundSeconds,
            verificationSeconds: finished.cutOverVerificationSeconds, finishSeconds: finished.cutOverFinishSeconds,
            closedToExitSeconds: run.ended - run.closing)
    }

    /// The objects of a generated store: every entity's keys are dense, so the sum of `Z_MAX`.
    private static func objects(in store: String) throws -> Int {
        let connection = try Connection(path: store, configuration: .init(mode: .readOnly))
        defer { try? connection.close() }
        return Int(try connection.scalar("SELECT coalesce(sum(Z_MAX), 0) FROM Z_PRIMARYKEY")?.int64 ?? 0)
    }

    /// When each part of a live run happened (seconds since 1970, the writer's clock), and its
    /// last line.
    private struct LiveRun {
        var started: Double
        var verified: Double
        var closing: Double
        var ended: Double
        var finished: LiveProgressLines.Finished
    }

    /// `tern migrate --live` as a child, its JSON lines read as they come: when Tern waits for
    /// the app, the app closes the store `closingAfter` later.
    private func migrateLive(_ store: String, closing app: Writer) throws -> LiveRun {
        let errors = "\(store).tern-errors"
        guard FileManager.default.createFile(atPath: errors, contents: nil) else { throw TernError(.io, "live: cannot create", path: errors) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["migrate", store, "--model", model, "--live", "--workers", "\(workers)", "--progress", "json"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        let started = Date().timeIntervalSince1970
        try process.run()
        var verified: Double?
        var closing: Double?
        var last = ""
        do {
            // Tern's lines while it waits are a round's at most every 20 ms: the pipe holds the
            // 2 s the app takes to close.
            try PipeLines.read(output.fileHandleForReading) { line in
                last = line
                guard let event = try? JSONDecoder().decode(Event.self, from: Data(line.utf8)), event.event == "live" else { return true }
                if event.phase == "verified" { verified = Date().timeIntervalSince1970 }
                if event.phase == "waitingForClose", closing == nil {
                    Latch.pause(seconds: Self.closingAfter)
                    closing = Date().timeIntervalSince1970
                    try app.stop()
                }
                return true
            }
        } catch {
            process.terminate()
            process.waitUntilExit()
            throw error
        }
        process.waitUntilExit()
        let ended = Date().timeIntervalSince1970
        let complaint = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw TernError(.io, "live: tern migrate --live exited \(process.terminationStatus): \(complaint)", path: store)
        }
        guard let closing else { throw TernError(.io, "live: tern migrate --live never waited for the app to close the store", path: store) }
        guard let finished = try? JSONDecoder().decode(LiveProgressLines.Finished.self, from: Data(last.utf8)) else {
            throw TernError(.io, "live: tern migrate --live did not end with its liveFinished line (its last: \(last))", path: store)
        }
        return LiveRun(started: started, verified: verified ?? closing, closing: closing, ended: ended, finished: finished)
    }

    /// Starts `tern migrate --live` on `store` and kills it (SIGKILL) once it says it logs changes:
    /// its triggers and change log stay in the store, as after a crash, with no Tern running.
    private func leaveTriggers(in store: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["migrate", store, "--model", model, "--live", "--progress", "json"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        PipeLines.read(output.fileHandleForReading) { line in
            guard let event = try? JSONDecoder().decode(Event.self, from: Data(line.utf8)), event.phase == "capturing" else { return true }
            kill(process.processIdentifier, SIGKILL)
            return false
        }
        process.waitUntilExit()
        let connection = try Connection(path: store, configuration: .init(mode: .readOnly))
        defer { try? connection.close() }
        guard process.terminationReason == .uncaughtSignal,
            try connection.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'TERN%'")?.int64 ?? 0 > 0
        else {
            throw TernError(.io, "live: tern migrate --live ended (\(process.terminationStatus)) before it logged changes", path: store)
        }
    }

    /// `tern migrate STORE --abort`: the triggers and log a killed run left are removed.
    private func abortLive(_ store: String) throws {
        let aborted = try ChildProcess.run(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(), ["migrate", store, "--abort"])
        guard aborted.status == 0 else {
            throw TernError(.io, "live: tern migrate --abort failed: \(String(decoding: aborted.standardError, as: UTF8.self))", path: store)
        }
    }

    /// The oracle: the live result equals, row for row, an offline migration of the backup (the
    /// store as the writer left it). A benchmark of a wrong result measures nothing: it fails.
    private func proveOracle(_ store: String, backup: String) throws {
        let oracle = "\(store).oracle.sqlite"
        let offline = try ChildProcess.run(
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(), ["migrate", backup, "--model", model, "--out", oracle])
        guard offline.status == 0 else {
            throw TernError(.io, "live: the offline migration of the backup failed: \(String(decoding: offline.standardError, as: UTF8.self))", path: backup)
        }
        if let difference = try StoreComparison.firstDifference(store, oracle) {
            throw TernError(.io, "live: the result differs from an offline migration of what the writer left: \(difference)", path: store)
        }
    }

    private struct Event: Decodable {
        var event: String?
        var phase: String?
    }
}

/// The test app's writer as a child process: it writes until told to stop, then closes the store.
private struct Writer {
    let process: Process
    let stopFile: String
    let log: String
    let final: String

    /// One commit the writer logged: how long it took, and when it ended (seconds since 1970).
    struct Commit {
        var milliseconds: Double
        var at: Double
    }

    init(script: String, store: String, rate: Int, seed: Int) throws {
        stopFile = store + ".stop"
        log = store + ".commits"
        final = store + ".final.json"
        let ready = store + ".ready"
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", script, store, "--rate", "\(rate)", "--stop", stopFile, "--final", final, "--log", log, "--seed", "\(seed)", "--ready", ready,
        ]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let process = process
        guard Latch.until(timeout: 30, { FileManager.default.fileExists(atPath: ready) || !process.isRunning }), process.isRunning else {
            end()
            throw TernError(.io, "live: the writer (python3 \(script)) did not start", path: store)
        }
    }

    /// Ends the writer whatever its state: asked to close the store, then terminated if it has
    /// not within 10 s; waits for it.
    func end() {
        try? stop()
        let process = process
        if !Latch.until(timeout: 10, { !process.isRunning }) { process.terminate() }
        process.waitUntilExit()
    }

    /// Tells the writer to close the store.
    func stop() throws {
        guard FileManager.default.createFile(atPath: stopFile, contents: nil) else {
            throw TernError(.io, "live: cannot tell the writer to stop", path: stopFile)
        }
    }

    /// Stops the writer, waits for it, and reads its commits.
    func close() throws -> [Commit] {
        try stop()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw TernError(.io, "live: the writer exited \(process.terminationStatus)", path: log)
        }
        // "operation key latency-ms time", one line per commit.
        return try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 4, let milliseconds = Double(fields[2]), let at = Double(fields[3]) else { return nil }
            return Commit(milliseconds: milliseconds, at: at)
        }
    }
}

/// Commit latencies in milliseconds: how many, the median, the 99th percentile and the longest.
struct CommitLatency: Codable {
    var commits: Int
    var p50: Double
    var p99: Double
    var max: Double

    init(_ milliseconds: [Double]) {
        let sorted = milliseconds.sorted()
        // The nearest rank: the smallest value at or above which a fraction p of the commits lie.
        func percentile(_ p: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[Swift.max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1)]
        }
        commits = sorted.count
        p50 = percentile(0.5)
        p99 = percentile(0.99)
        max = sorted.last ?? 0
    }
}

/// One live run's figures.
struct LiveBenchResult: Codable {
    var books: Int
    var objects: Int
    /// The writer's commits per second.
    var rate: Int
    var workers: Int
    /// The writer alone, with no triggers.
    var alone: CommitLatency
    /// The writer with Tern's triggers in the store and no Tern running (absent from results
    /// measured before it was).
    var triggers: CommitLatency?
    /// From Tern's start to the writer's close; then its two parts.
    var during: CommitLatency
    var copying: CommitLatency
    var caughtUp: CommitLatency
    /// Tern's wall time.
    var seconds: Double
    /// Tern's part of the downtime, and its parts.
    var cutOverSeconds: Double
    var cutOverEntries: Int64
    var lockSeconds: Double
    var roundSeconds: Double
    var verificationSeconds: Double
    var finishSeconds: Double
    /// From the writer's close to Tern's exit.
    var closedToExitSeconds: Double

    /// The writer's p99 during the run over its p99 alone (the goal: ≤ 2×).
    var p99Ratio: Double { during.p99 / Swift.max(alone.p99, 0.001) }
}
