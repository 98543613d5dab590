import Foundation
import Testing
import TernLoop
import TernSQLite

/// Kills `tern migrate` with SIGKILL at random instants and resumes it, again and again, then
/// compares the result row for row with an uninterrupted run. Seeded, so a failure reproduces.
@Suite("Crash and resume", .serialized)
struct CrashResumeTests {
    static let library = CheckAndGenerateCommandTests.repository.appendingPathComponent("configs/library").path
    /// At least this many kills per run; `TERN_CRASH_KILLS` asks for more in a longer local run.
    static let kills = Int(ProcessInfo.processInfo.environment["TERN_CRASH_KILLS"] ?? "") ?? 30

    /// Removed with the suite's instance, whatever the test did.
    let scratch: ScratchFolder
    var directory: URL { scratch.url }

    init() throws {
        scratch = try ScratchFolder("tern-crash")
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Starts a migration and kills it after `delay` seconds, unless it finishes first.
    /// Returns the exit status, or nil when it was killed.
    private func run(_ arguments: [String], killAfter delay: Double?, environment: [String: String] = [:]) throws -> Int32? {
        let process = Process()
        process.executableURL = TernProcess.executable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let ended = Latch()
        process.terminationHandler = { _ in ended.open() }
        try process.run()
        if let delay, !ended.wait(seconds: delay) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal ? nil : process.terminationStatus
    }

    @Test("SIGKILL at random instants, then --resume: the result equals an uninterrupted run, and the source is untouched")
    func killAndResume() throws {
        // Two passes, to-one, to-many and many-to-many relationships, over 60,000 objects.
        try killAndResume(model: Self.library, version: "Library 1", rows: 13_000, options: ["--batch-size", "700"], kills: Self.kills, minimumLines: 60_000)
    }

    @Test("the same through a policy that runs in Swift on two workers (BookStore 1 → 5)")
    func killAndResumeSwiftPolicy() throws {
        try killAndResume(
            model: CheckAndGenerateCommandTests.bookStore, version: "BookStore 1", rows: 8_000, options: ["--batch-size", "500", "--workers", "2"],
            kills: max(10, Self.kills / 3), minimumLines: 24_000)
    }

    private func killAndResume(model: String, version: String, rows: Int, options: [String], kills: Int, minimumLines: Int) throws {
        let source = path("Source.sqlite")
        #expect(try TernProcess.run(["generate", "--model", model, "--version", version, "--rows", "\(rows)", "--seed", "5", source]).status == 0)
        // At rest, as a store on a server is (by a clock moved ahead, not by waiting): its start
        // checks read beside the first pass, and a kill before they end leaves no record (the
        // resume starts over).
        let atRest = StoreInUseTests.atRest
        let original = try Data(contentsOf: URL(fileURLWithPath: source))
        let reference = path("reference.sqlite")
        let started = Date()
        #expect(try run(["migrate", source, "--model", model, "--out", reference] + options, killAfter: nil, environment: atRest) == 0)
        let duration = Date().timeIntervalSince(started)
        let expected = try StoreDump.lines(reference)
        #expect(expected.count > minimumLines)

        var seed = UInt64(20_261_121)
        func nextDelay() -> Double {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407  // a seeded LCG: the same instants every run
            return 0.002 + Double(seed >> 11) / Double(1 << 53) * duration
        }
        var killed = 0
        var trial = 0
        while killed < kills {
            trial += 1
            let output = path("out-\(trial).sqlite")
            var attempts = 0
            while true {
                attempts += 1
                let arguments = ["migrate", source, "--model", model, "--out", output] + options + (attempts > 1 ? ["--resume"] : [])
                // Toward the end of a trial, let the run finish.
                let status = try run(arguments, killAfter: attempts > 12 ? nil : nextDelay(), environment: atRest)
                if status == nil { killed += 1; continue }
                // Killed after the record went: the output is complete, and never taken as its own (73).
                let finishedEarlier =
                    status == 73 && attempts > 1
                    && !FileManager.default.fileExists(atPath: directory.appendingPathComponent(".out-\(trial).sqlite.tern-migration.json").path)
                #expect(status == 0 || finishedEarlier, "trial \(trial), attempt \(attempts) exited \(status!)")
                break
            }
            #expect(try StoreDump.lines(output) == expected, "trial \(trial) after \(attempts) attempts differs from the uninterrupted run")
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(".out-\(trial).sqlite.tern-migration.json").path))
        }
        #expect(killed >= kills)
        #expect(try Data(contentsOf: URL(fileURLWithPath: source)) == original)
    }

    @Test(
        "a crash inside the final swap leaves the original or the migrated store in place, never neither; --resume finishes",
        arguments: ["step-committed", "backup-linked", "renamed"])
    func killDuringSwap(point: String) throws {
        let store = path("Swap.sqlite")
        #expect(try TernProcess.run(["generate", "--model", Self.library, "--version", "Library 1", "--rows", "500", "--seed", "6", store]).status == 0)
        let original = try Data(contentsOf: URL(fileURLWithPath: store))
        let reference = path("swap-reference.sqlite")
        #expect(try run(["migrate", store, "--model", Self.library, "--out", reference], killAfter: nil) == 0)

        #expect(try run(["migrate", store, "--model", Self.library], killAfter: nil, environment: ["TERN_CRASH_AT": point]) == nil)
        // Whatever the instant: the store's name holds the original or the whole migrated store.
        let now = try Data(contentsOf: URL(fileURLWithPath: store))
        if now != original {
            #expect(try StoreDump.lines(store) == StoreDump.lines(reference))
        }
        let status = try run(["migrate", store, "--model", Self.library, "--resume"], killAfter: nil)
        #expect(status == 0)
        #expect(try StoreDump.lines(store) == StoreDump.lines(reference))
        let backup = path("Swap~.sqlite")
        #expect(try Data(contentsOf: URL(fileURLWithPath: backup)) == original)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".") }.isEmpty)
    }

    @Test(
        "a model version whose default changed after a kill (the version hashes leave defaults out) is refused by --resume, 65, naming what changed — step by step; by Core Data's route, which never passes through it, the run resumes and finishes",
        arguments: [["--step-by-step"], []])
    func changedDefaultRefusesResume(options: [String]) throws {
        let model = directory.appendingPathComponent("ranks")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        let version2 = { (rank: Int) in
            "version: Ranks 2\nentities:\n  Person:\n    attributes: { name: string, rank: { type: integer32, default: \"\(rank)\" } }\n"
        }
        let files = [
            "model.yaml": "name: Ranks\ncurrent: Ranks 3\nversions: [v1.yaml, v2.yaml, v3.yaml]\n",
            "v1.yaml": "version: Ranks 1\nentities:\n  Person:\n    attributes: { name: string }\n",
            "v2.yaml": version2(1),
            "v3.yaml": "version: Ranks 3\nentities:\n  Person:\n    attributes: { name: string, rank: { type: integer32, default: \"1\" }, title: string }\n",
        ]
        for (name, text) in files { try text.write(to: model.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        let store = path("Ranks.sqlite")
        #expect(try TernProcess.run(["generate", "--model", model.path, "--version", "Ranks 1", "--rows", "50", store]).status == 0)
        // A step is committed (the first of two, or the one composed of both), then the process dies.
        #expect(try run(["migrate", store, "--model", model.path] + options, killAfter: nil, environment: ["TERN_CRASH_AT": "step-committed"]) == nil)
        try version2(2).write(to: model.appendingPathComponent("v2.yaml"), atomically: true, encoding: .utf8)
        let resumed = try TernProcess.run(["migrate", store, "--model", model.path, "--resume", "--progress", "none"] + options)
        guard !options.isEmpty else {
            // Ranks 1 → Ranks 3, one inferred mapping: Ranks 2 plays no part.
            #expect(resumed.status == 0, "\(resumed.standardError)")
            return
        }
        #expect(resumed.status == 65, "\(resumed.standardError)")
        // The default decides, by content, whether Ranks 2 lies on the way: the change is named
        // as the version's, or as the steps'.
        #expect(
            resumed.standardError.contains(
                "model version Ranks 2 changed (in what its version hashes leave out: a default, a validation rule, a renaming identifier or another detail)")
                || resumed.standardError.contains("the steps (then Ranks 1 → Ranks 2, Ranks 2 → Ranks 3)"), "\(resumed.standardError)")
        // Put back as it was, the model resumes and finishes.
        try version2(1).write(to: model.appendingPathComponent("v2.yaml"), atomically: true, encoding: .utf8)
        #expect(try TernProcess.run(["migrate", store, "--model", model.path, "--resume", "--progress", "none"] + options).status == 0)
    }

    @Test("a step store killed inside a transaction (a hot rollback journal): tern status reads its committed checkpoint, --resume finishes")
    func hotJournalInStepStore() throws {
        let store = path("Hot.sqlite")
        #expect(try TernProcess.run(["generate", "--model", Self.library, "--version", "Library 1", "--rows", "300", "--seed", "8", store]).status == 0)
        let reference = path("hot-reference.sqlite")
        #expect(try run(["migrate", store, "--model", Self.library, "--out", reference], killAfter: nil) == 0)
        // Stopped after its first committed batches: its reader (standard output) goes away.
        let migrating = Process()
        migrating.executableURL = TernProcess.executable
        // One worker: the record is written before the first batch, which the stop follows.
        migrating.arguments = ["migrate", store, "--model", Self.library, "--batch-size", "20", "--workers", "1", "--progress", "json"]
        let events = Pipe()
        migrating.standardOutput = events
        migrating.standardError = FileHandle.nullDevice
        try migrating.run()
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains("batchCommitted") {
            let chunk = events.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += chunk
        }
        try events.fileHandleForReading.close()
        migrating.waitUntilExit()
        #expect(migrating.terminationStatus == 75)
        let before = try TernProcess.run(["status", store, "--json"])
        #expect(before.status == 0, "\(before.standardError)")
        #expect(before.standardOutput.contains("\"lastKey\""), "\(before.standardOutput)")

        // Another process dies inside a transaction on the step store, leaving a hot journal
        // that a read-only reader may not roll back (SQLITE_READONLY_ROLLBACK).
        let step = path(".Hot.sqlite.tern-step1.sqlite")
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        shell.arguments = [step]
        let input = Pipe(), output = Pipe()
        shell.standardInput = input
        shell.standardOutput = output
        try shell.run()
        input.fileHandleForWriting.write(
            Data("PRAGMA journal_mode=DELETE;\nPRAGMA cache_size=1;\nBEGIN IMMEDIATE;\nDELETE FROM TERN_PROGRESS;\nSELECT 'in-transaction';\n".utf8))
        var printed = Data()
        while !String(decoding: printed, as: UTF8.self).contains("in-transaction") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            printed += chunk
        }
        kill(shell.processIdentifier, SIGKILL)
        shell.waitUntilExit()
        #expect(FileManager.default.fileExists(atPath: step + "-journal"))

        let after = try TernProcess.run(["status", store, "--json"])
        #expect(after.status == 0, "\(after.standardError)")
        #expect(after.standardOutput == before.standardOutput, "the checkpoint read is the committed one")
        #expect(try run(["migrate", store, "--model", Self.library, "--resume"], killAfter: nil) == 0)
        #expect(try StoreDump.lines(store) == StoreDump.lines(reference))
    }
}
