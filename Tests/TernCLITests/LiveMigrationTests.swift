import Foundation
import TernCommands
import TernSQLite
import Testing

/// `tern migrate --live` against a real second process: a Python program writing to the store
/// as Core Data does (keys from `Z_PRIMARYKEY`, `Z_OPT` checked and bumped, cascading deletes,
/// moved links and list places) at a fixed rate while Tern migrates it, closing the store when
/// told. The oracle: the live result equals, row for row, an offline migration of the source as
/// the writer left it (the backup), and every book the writer touched is in that source as the
/// writer last wrote it.
@Suite("Live migration while another process writes", .serialized)
struct LiveMigrationTests {
    static let bench = CheckAndGenerateCommandTests.repository.appendingPathComponent("configs/bench").path
    static let writerScript = CheckAndGenerateCommandTests.repository.appendingPathComponent("Tests/LiveWriter/writer.py").path
    let scratch: ScratchFolder

    init() throws {
        scratch = try ScratchFolder("tern-live")
    }

    private func benchStore(_ name: String = "Live.sqlite", books: Int = 3000) throws -> String {
        let path = scratch.path(name)
        let outcome = try TernProcess.run([
            "generate", "--model", Self.bench, "--version", "Bench 1", "--rows", "\(books)", "--count", "Page=\(3 * books)", "--count", "Category=20", path,
        ])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        return path
    }

    /// The writer, started; `ready` exists once it has the store open.
    private final class Writer {
        let process: Process
        let stop: String
        let final: String
        /// What it printed on standard error (a Python traceback when it failed).
        let errors: String

        init(store: String, scratch: ScratchFolder, rate: Int = 300, seed: Int = 1, model: String = "bench") throws {
            stop = scratch.path("stop-\(seed)")
            final = scratch.path("final-\(seed).json")
            let ready = scratch.path("ready-\(seed)")
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "python3", LiveMigrationTests.writerScript, store, "--rate", "\(rate)", "--stop", stop, "--final", final, "--seed", "\(seed)", "--ready", ready,
                "--model", model,
            ]
            errors = scratch.path("writer-\(seed).err")
            _ = FileManager.default.createFile(atPath: errors, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: errors)!
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(20)
            while !FileManager.default.fileExists(atPath: ready), process.isRunning, Date() < deadline { usleep(10_000) }
        }

        /// A test that failed before telling it to stop does not leave it writing.
        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }

        /// Tells it to close the store, and waits for it; expects it to end well.
        func finish() {
            _ = FileManager.default.createFile(atPath: stop, contents: nil)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "the writer failed: \((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")")
        }

        /// The SQL reading a book's state (its values `quote`d: the same text whoever reads
        /// them), and every book it touched as it left them (nil: deleted).
        func books() throws -> (query: String, books: [Int64: [String]?]) {
            let data = try Data(contentsOf: URL(fileURLWithPath: final))
            let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            var books: [Int64: [String]?] = [:]
            for (key, value) in try #require(json["books"] as? [String: Any]) {
                books[try #require(Int64(key))] = value as? [String]
            }
            return (try #require(json["query"] as? String), books)
        }
    }

    /// Runs `tern migrate --live` (with `extra` arguments and environment); once it says it waits
    /// for the store to close, the writer is told to close it. Returns tern's outcome.
    /// The scheduling policies (`/proc/PID/task/*/stat`, field 41: 0 normal, 5 `SCHED_IDLE`) of
    /// a run's threads, sampled from the capture until it waits for the app to close the store.
    private final class Policies: @unchecked Sendable {
        var seen: Set<Int32> = []

        func sample(_ pid: Int32) {
            guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return }
            for thread in threads {
                guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/stat", encoding: .utf8),
                    let close = stat.lastIndex(of: ")")
                else { continue }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                if fields.count > 38, let policy = Int32(fields[38]) { seen.insert(policy) }
            }
        }
    }

    private func runLive(
        _ store: String, writer: Writer?, model: String = Self.bench, extra: [String] = [], environment: [String: String] = [:],
        policies: Policies? = nil
    ) throws -> TernProcess.Outcome {
        let errors = scratch.path("tern-\(UUID().uuidString).err")
        let output = scratch.path("tern-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let process = try TernProcess.launch(
            ["migrate", store, "--model", model, "--live", "--close-timeout", "60"] + extra, standardOutput: FileHandle(forWritingAtPath: output)!,
            standardError: FileHandle(forWritingAtPath: errors)!, environment: environment)
        var told = false
        while process.isRunning {
            usleep(20_000)
            let lines = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            // From the capture's line (the run's own priority is set before it) to the wait.
            if !told, lines.contains("live: logging changes") { policies?.sample(process.processIdentifier) }
            if !told, let writer, lines.contains("waiting for") {
                told = true
                writer.finish()
            }
        }
        return TernProcess.Outcome(
            status: process.terminationStatus, standardOutput: (try? String(contentsOfFile: output, encoding: .utf8)) ?? "",
            standardError: (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
    }

    /// The oracle: the migrated store at `store` equals an offline migration of its backup, the
    /// backup holds no trace of the run and every book as the writer left it.
    private func expectOracle(_ store: String, writers: [Writer], model: String = Self.bench, target: [String] = []) throws {
        let backup = scratch.path("Live~.sqlite")
        #expect(try SQLiteShell.run(backup, "PRAGMA integrity_check;") == "ok\n")
        #expect(try SQLiteShell.run(backup, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'TERN%';") == "0\n")
        #expect(!FileManager.default.fileExists(atPath: store + "-tern-live"))
        let source = try Connection(path: backup, configuration: .init(mode: .readOnly))
        for writer in writers {
            let (query, books) = try writer.books()
            for (key, expected) in books {
                let row = try source.prepare(query)
                try row.bind([key])
                let found = try row.step() ? row.row.values.map { $0.text ?? "NULL" } : nil
                #expect(found == expected, "book \(key): the source has \(String(describing: found)), the writer left \(String(describing: expected))")
            }
        }
        try source.close()
        let oracle = scratch.path("oracle.sqlite")
        let offline = try TernProcess.run(["migrate", backup, "--model", model, "--out", oracle] + target)
        #expect(offline.status == 0, "\(offline.standardError)")
        let live = try StoreDump.lines(store)
        let expected = try StoreDump.lines(oracle)
        #expect(live.count == expected.count)
        #expect(live == expected, "first difference: \(zip(live, expected).first { $0 != $1 }.map { "\($0) ≠ \($1)" } ?? "in length")")
        try FileManager.default.removeItem(atPath: oracle)
    }

    @Test("a store written at 300 commits/s migrates live: exit 0, equal to an offline migration of what the writer left, every commit in it")
    func liveMigrationWhileWriting() throws {
        let store = try benchStore(books: 20000)
        let writer = try Writer(store: store, scratch: scratch)
        let policies = Policies()
        let outcome = try runLive(store, writer: writer, policies: policies)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("every object verified"))
        #expect(outcome.standardOutput.contains("Migrated live"))
        // Until the cut-over, every thread takes only cores the app leaves idle.
        #expect(policies.seen == [5], "\(policies.seen)")
        try expectOracle(store, writers: [writer])
    }

    @Test("--live-priority normal leaves Tern's threads at normal priority, and the oracle holds")
    func normalPriority() throws {
        let store = try benchStore(books: 3000)
        let writer = try Writer(store: store, scratch: scratch)
        let policies = Policies()
        let outcome = try runLive(store, writer: writer, extra: ["--live-priority", "normal"], policies: policies)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(policies.seen == [0], "\(policies.seen)")
        try expectOracle(store, writers: [writer])
    }

    @Test(
        "a many-to-many, a to-one and its inverse, an author deleted (nullify): Chain 1 → 2, a step applied in place on the copy, caught up through the join table"
    )
    func joinTableLive() throws {
        let chain = CheckAndGenerateCommandTests.repository.appendingPathComponent("configs/chain").path
        let store = scratch.path("Live.sqlite")
        let generated = try TernProcess.run(["generate", "--model", chain, "--version", "Chain 1", "--rows", "20000", store])
        #expect(generated.status == 0, "\(generated.standardError)")
        let writer = try Writer(store: store, scratch: scratch, rate: 300, model: "chain")
        let outcome = try runLive(store, writer: writer, model: chain, extra: ["--to", "Chain 2", "--progress", "json"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        try expectOracle(store, writers: [writer], model: chain, target: ["--to", "Chain 2"])
        // With --progress json, every phase is a line a job engine can read, the last one too.
        let lines = outcome.standardOutput.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let phases = lines.filter { $0["event"] as? String == "live" }.compactMap { $0["phase"] as? String }
        #expect(["capturing", "mirrored", "copied", "verified", "waitingForClose", "cutOver"].allSatisfy(phases.contains), "\(phases)")
        #expect(lines.last?["event"] as? String == "liveFinished", "\(outcome.standardOutput)")
    }

    @Test(
        "killed at each phase boundary while the app writes: the store intact, the capture all there or gone, and --resume gives the oracle's store",
        arguments: ["live-captured", "live-mirrored", "live-copied", "live-round", "live-held", "backup-linked", "renamed"])
    func killedAtPhaseBoundary(_ milestone: String) throws {
        let store = try benchStore(books: 1500)
        let writer = try Writer(store: store, scratch: scratch)
        let killed = try runLive(store, writer: writer, environment: ["TERN_CRASH_AT": milestone])
        #expect(killed.status == 9 || killed.status == -9 || killed.status == 137, "expected SIGKILL at \(milestone): \(killed.status) \(killed.standardError)")
        // After the rename, the store's path names the migrated store and the original is the backup.
        for file in [store, scratch.path("Live~.sqlite")] where FileManager.default.fileExists(atPath: file) {
            #expect(try SQLiteShell.run(file, "PRAGMA integrity_check;") == "ok\n", "\(milestone): \(file)")
        }
        let triggers = try SQLiteShell.run(store, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'TERN%';")
        #expect(["0\n", "15\n"].contains(triggers), "the capture is all there or gone: \(triggers)")
        if triggers == "15\n" {
            let status = try TernProcess.run(["status", store])
            #expect(status.status == 0 && status.standardOutput.contains("TERN_LIVE_ZBOOK_INSERT"), "\(status.standardOutput)")
        }
        let resumed = try runLive(store, writer: writer.process.isRunning ? writer : nil, extra: ["--resume"])
        #expect(resumed.status == 0, "\(milestone): \(resumed.standardError)")
        if writer.process.isRunning { writer.finish() }
        try expectOracle(store, writers: [writer])
    }

    @Test("after a reboot the unsynced copies are not trusted: the resumed run copies the store again, and the oracle holds")
    func resumedAfterReboot() throws {
        let store = try benchStore(books: 1500)
        let writer = try Writer(store: store, scratch: scratch)
        let killed = try runLive(store, writer: writer, environment: ["TERN_CRASH_AT": "live-round"])
        #expect(killed.status != 0)
        // What a reboot leaves: another boot in the record (the copies' last writes may be gone).
        let record = store + "-tern-live/record.json"
        let text = try String(contentsOfFile: record, encoding: .utf8)
        let boot = try #require(text.range(of: #""boot" : "[^"]*""#, options: .regularExpression))
        try text.replacingCharacters(in: boot, with: #""boot" : "an earlier boot""#).write(toFile: record, atomically: true, encoding: .utf8)
        let resumed = try runLive(store, writer: writer, extra: ["--resume"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(resumed.standardError.contains("live: copied the store"), "the resumed run copies the store again: \(resumed.standardError)")
        try expectOracle(store, writers: [writer])
    }

    @Test("killed at random instants while the app writes: the store intact, and --resume gives the oracle's store", arguments: [1, 2, 3])
    func killedAtRandom(_ seed: Int) throws {
        let store = try benchStore(books: 1500)
        let writer = try Writer(store: store, scratch: scratch, seed: seed)
        let tern = try TernProcess.launch(
            ["migrate", store, "--model", Self.bench, "--live"], standardOutput: FileHandle.nullDevice, standardError: FileHandle.nullDevice)
        // Somewhere in the run: the capture, the copy or the rounds (it waits for the writer).
        // Deterministic per seed: early (the capture or the copy), mid-copy, and among the rounds.
        usleep(UInt32([150_000, 600_000, 1_400_000][seed - 1]))
        kill(tern.processIdentifier, SIGKILL)
        tern.waitUntilExit()
        #expect(try SQLiteShell.run(store, "PRAGMA integrity_check;") == "ok\n")
        let triggers = try SQLiteShell.run(store, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'TERN%';")
        #expect(["0\n", "15\n"].contains(triggers), "the capture is all there or gone: \(triggers)")
        let resumed = try runLive(store, writer: writer, extra: ["--resume"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        try expectOracle(store, writers: [writer])
    }

    @Test(
        "an I/O error or a failed fsync at points across a live run: exit 0 with the oracle's store, or a stop that --resume takes up to it",
        arguments: ["write", "sync"])
    func injectedFaults(_ operation: String) throws {
        let library = try FaultInjectionTests.library.get()
        // How many such calls a run makes, without a writer (with one, about as many).
        let counted = try benchStore("Counted.sqlite", books: 600)
        let counts = scratch.path("counts")
        #expect(try runLive(counted, writer: nil, environment: ["LD_PRELOAD": library, "TERN_FAULT_COUNTS": counts]).status == 0)
        let line = try String(contentsOfFile: counts, encoding: .utf8)
        let total = try #require(
            line.split(separator: " ").first { $0.hasPrefix(operation + "=") }.flatMap {
                Int($0.dropFirst(operation.count + 1).trimmingCharacters(in: .whitespacesAndNewlines))
            })
        var fired = 0
        defer { #expect(fired > 0, "no \(operation) fault fired") }
        for n in [1, total / 4, total / 2, 3 * total / 4, total - 1] where n >= 1 {
            try? FileManager.default.removeItem(atPath: scratch.path("Live~.sqlite"))
            let store = try benchStore("Live.sqlite", books: 600)
            let writer = try Writer(store: store, scratch: scratch, rate: 200, seed: n)
            let faulted = try runLive(store, writer: writer, environment: ["LD_PRELOAD": library, "TERN_FAULT": "\(operation):\(n):error"])
            let context = "\(operation) #\(n) of \(total)"
            if faulted.standardError.contains("tern-fault:") { fired += 1 }
            if faulted.status != 0 {
                #expect(faulted.standardError.contains("tern-fault:"), "\(context): \(faulted.standardError)")
                for file in [store, scratch.path("Live~.sqlite")] where FileManager.default.fileExists(atPath: file) {
                    #expect(try SQLiteShell.run(file, "PRAGMA integrity_check;") == "ok\n", "\(context): \(file)")
                }
                let resumed = try runLive(store, writer: writer.process.isRunning ? writer : nil, extra: ["--resume"])
                #expect(resumed.status == 0, "\(context): \(resumed.standardError)")
            } else {
                #expect(operation != "sync" || !faulted.standardError.contains("tern-fault:"), "\(context): a failed fsync was taken as done (exit 0)")
            }
            if writer.process.isRunning { writer.finish() }
            try expectOracle(store, writers: [writer])
            for file in try FileManager.default.contentsOfDirectory(atPath: scratch.url.path) where file.hasPrefix("Live") {
                try FileManager.default.removeItem(atPath: scratch.path(file))
            }
        }
    }

    @Test("the writer killed mid-transaction and another taking over: nothing half-committed reaches the migrated store")
    func writerKilled() throws {
        let store = try benchStore(books: 1500)
        let first = try Writer(store: store, scratch: scratch, rate: 2000, seed: 1)
        let errors = scratch.path("tern.err")
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        let tern = try TernProcess.launch(
            ["migrate", store, "--model", Self.bench, "--live", "--close-timeout", "60"], standardOutput: FileHandle.nullDevice,
            standardError: FileHandle(forWritingAtPath: errors)!)
        while tern.isRunning, (try? String(contentsOfFile: errors, encoding: .utf8))?.contains("every object verified") != true { usleep(20_000) }
        // The second opens the store first: with none open, Tern would cut over at once.
        let second = try Writer(store: store, scratch: scratch, rate: 300, seed: 2)
        kill(first.process.processIdentifier, SIGKILL)
        first.process.waitUntilExit()
        while tern.isRunning, (try? String(contentsOfFile: errors, encoding: .utf8))?.contains("waiting for") != true { usleep(20_000) }
        second.finish()
        tern.waitUntilExit()
        #expect(tern.terminationStatus == 0, "\((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")")
        try expectOracle(store, writers: [second])
    }

    @Test("what --live cannot catch up is refused before any work, naming why; --abort removes a run's leftovers")
    func refusalsAndAbort() throws {
        let store = try benchStore(books: 200)
        // A Swift policy's objects cannot be made again from a changed row.
        let policy = try TernProcess.run([
            "migrate", store, "--model", Self.bench, "--live", "--mapping", Self.bench + "/policy/1-to-2.yaml",
        ])
        #expect(policy.status == 65 && policy.standardError.contains("runs in Swift"), "\(policy.standardError)")
        let dryRun = try TernProcess.run([
            "migrate", store, "--model", Self.bench, "--live", "--dry-run", "--mapping", Self.bench + "/policy/1-to-2.yaml",
        ])
        #expect(dryRun.status == 0 && dryRun.standardOutput.contains("--live would refuse it: entity mapping BookToPublication runs in Swift"))
        #expect(try SQLiteShell.run(store, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'TERN%';") == "0\n")
        #expect(!FileManager.default.fileExists(atPath: store + "-tern-live"))
        // A store in rollback mode: the app's writes would block every read.
        try SQLiteShell.run(store, "PRAGMA journal_mode = DELETE;")
        let rollback = try TernProcess.run(["migrate", store, "--model", Self.bench, "--live"])
        #expect(rollback.status == 65 && rollback.standardError.contains("WAL"), "\(rollback.standardError)")
        try SQLiteShell.run(store, "PRAGMA journal_mode = WAL;")
        // Killed once the capture committed: the leftovers are listed, then removed.
        let killed = try TernProcess.run(["migrate", store, "--model", Self.bench, "--live"], environment: ["TERN_CRASH_AT": "live-mirrored"])
        #expect(killed.status != 0)
        let again = try TernProcess.run(["migrate", store, "--model", Self.bench, "--live"])
        #expect(again.status == 75 && again.standardError.contains("--resume"), "\(again.status) \(again.standardError)")
        // The record names what the capture put in the store.
        let record = try String(contentsOfFile: store + "-tern-live/record.json", encoding: .utf8)
        #expect(record.contains("TERN_LIVE_ZBOOK_UPDATE") && record.contains("\"log\" : \"TERN_LIVE_CHANGES\""), "\(record)")
        let status = try TernProcess.run(["status", store, "--json"])
        #expect(
            status.status == 0 && status.standardOutput.contains("\"phase\" : \"mirroring\"") && status.standardOutput.contains("TERN_LIVE_ZPAGE_DELETE"),
            "\(status.standardOutput)")
        let aborted = try TernProcess.run(["migrate", store, "--abort"])
        #expect(aborted.status == 0 && aborted.standardOutput.contains("15 triggers"), "\(aborted.standardOutput) \(aborted.standardError)")
        #expect(try SQLiteShell.run(store, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'TERN%';") == "0\n")
        #expect(try SQLiteShell.run(store, "PRAGMA integrity_check;") == "ok\n")
        #expect(!FileManager.default.fileExists(atPath: store + "-tern-live"))
        #expect(try TernProcess.run(["status", store]).status == 1)
    }
}
