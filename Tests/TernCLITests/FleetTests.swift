import Foundation
import Synchronization
import Testing
import TernLoop
import TernSQLite
@testable import TernCommands
@testable import TernFleet

/// `tern fleet`: a fleet of generated stores of mixed versions, two of them broken, migrated by
/// four shard processes started as the job engines start them (their index variables), killed at
/// random and retried as the engines retry, one shard run twice at once. Every good store must end
/// at the target, equal by content to a reference migration of the store it was copied from,
/// migrated exactly once; the broken ones reported with their reasons and the permanent code.
@Suite("Fleets", .serialized)
final class FleetTests: Sendable {
    static let model = CheckAndGenerateCommandTests.bookStore
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-fleet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("stores"), withIntermediateDirectories: true)
    }

    /// A fleet is hundreds of stores: never left behind.
    deinit { try? FileManager.default.removeItem(at: directory) }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Templates of every version, each with its reference migration's content.
    private func templates() throws -> [(version: String, path: String, expected: [String])] {
        var made: [(String, String, [String])] = []
        for (index, version) in (1...5).map({ "BookStore \($0)" }).enumerated() {
            for seed in 1...2 {
                let template = path("template-\(index + 1)-\(seed).sqlite")
                let generated = TernCommandLine.run([
                    "generate", "--model", Self.model, "--version", version, "--rows", "\(20 + 15 * seed + 5 * index)", "--seed", "\(seed)", template,
                ])
                try #require(generated.status == 0, "\(generated.errors)")
                let reference = path("reference-\(index + 1)-\(seed).sqlite")
                let migrated = TernCommandLine.run(["migrate", template, "--model", Self.model, "--out", reference])
                try #require(migrated.status == 0, "\(migrated.errors)")
                made.append((version, template, try StoreDump.lines(index == 4 ? template : reference)))
            }
        }
        return made
    }

    /// Starts one task as an engine would and returns its exit status, or nil when it was killed.
    private func task(_ arguments: [String], environment: [String: String], killAfter delay: Double?, log: String) throws -> Int32? {
        let process = Process()
        process.executableURL = TernProcess.executable
        process.arguments = ["fleet", "run"] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        output.seekToEndOfFile()
        process.standardOutput = output
        process.standardError = output
        let ended = Latch()
        process.terminationHandler = { _ in ended.open() }
        try process.run()
        // A task that never ends is a failure too, not a test that hangs.
        if !ended.wait(seconds: delay ?? 120) {
            kill(process.processIdentifier, SIGKILL)
            if delay == nil { Issue.record("fleet run \(arguments) ran for more than 120 s") }
        }
        process.waitUntilExit()
        try output.close()
        return process.terminationReason == .uncaughtSignal ? nil : process.terminationStatus
    }

    @Test("200 stores over 4 shards with random kills and retries, one shard twice at once: every good store migrated once, verified by content")
    func fleetWithKills() throws {
        let templates = try templates()
        // 200 stores: copies of the templates in turn (a fifth at the target already), and two
        // broken ones — not a database at all, and one whose rows Core Data never writes.
        var expected: [String: (template: Int, pending: Bool)] = [:]
        for number in 0..<198 {
            let template = number % templates.count
            let store = "stores/user-\(String(format: "%03d", number)).sqlite"
            try FileManager.default.copyItem(atPath: templates[template].path, toPath: path(store))
            expected[store] = (template, templates[template].version != "BookStore 5")
        }
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path("stores/broken-not-a-store.sqlite")))
        try FileManager.default.copyItem(atPath: templates[0].path, toPath: path("stores/broken-anomalies.sqlite"))
        let connection = try Connection(path: path("stores/broken-anomalies.sqlite"))
        try connection.execute("UPDATE ZBOOK SET Z_ENT = 99 WHERE Z_PK = 1")
        try connection.close()

        let manifest = path("fleet.jsonl")
        let planned = TernCommandLine.run(
            ["fleet", "plan", "--model", Self.model, "--stores", path("stores/*.sqlite"), "--manifest", manifest], commands: [FleetCommand.self])
        #expect(planned.status == 0, "\(planned.errors)")
        #expect(planned.output.contains("200 stores to BookStore 5"), "\(planned.output)")
        #expect(planned.output.contains("unreadable: stores/broken-not-a-store.sqlite"), "\(planned.output)")
        let lines = try String(contentsOfFile: manifest, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 201)

        // The four shards, each as its engine names it, and shard 1 run twice at once.
        let shards: [(arguments: [String], environment: [String: String])] = [
            (["--shard-count", "4"], ["JOB_COMPLETION_INDEX": "0"]),
            (["--shard-count", "4", "--parallel", "2"], ["AWS_BATCH_JOB_ARRAY_INDEX": "1"]),
            ([], ["SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4"]),
            (["--shard-index", "3", "--shard-count", "4", "--parallel", "2"], [:]),
            (["--shard-count", "4"], ["AWS_BATCH_JOB_ARRAY_INDEX": "1"]),
        ]
        let finals = ShardFinals(count: shards.count)
        var seed = UInt64(20_261_124)
        var delays: [[Double?]] = []
        for _ in shards {
            // Up to four kills per task, at seeded instants in its first 1.5 s; then it runs out.
            delays.append(
                (0..<4).map { _ in
                    seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    let fraction = Double(seed >> 11) / Double(1 << 53)
                    return fraction < 0.75 ? 0.05 + fraction * 2 : nil
                } + [nil, nil, nil])  // then up to three plain retries, as an engine's backoff allows
        }
        let kills = KillCount()
        let schedule = delays
        DispatchQueue.concurrentPerform(iterations: shards.count) { number in
            let (arguments, environment) = shards[number]
            for delay in schedule[number] {
                let status = try? task(
                    ["--manifest", manifest, "--lease-seconds", "10"] + arguments, environment: environment, killAfter: delay,
                    log: path("task-\(number).log"))
                guard let status else { kills.add(); continue }  // killed: the engine retries
                if status == 75 { continue }  // retryable: the engine retries
                finals.set(number, status)
                return
            }
        }
        let logs = (0..<shards.count).map { (try? String(contentsOfFile: path("task-\($0).log"), encoding: .utf8)) ?? "" }
        // Shards holding a broken store end with the permanent code, the others with 0.
        let manifestRead = try FleetManifest.read(manifest)
        for number in 0..<shards.count {
            let index = number == 4 ? 1 : (number == 2 ? 2 : number)
            let shard = Shard(index: index, count: 4, source: "")
            let holdsBroken = shard.stores(of: manifestRead).contains { $0.path.contains("broken") }
            #expect(finals.status(number) == (holdsBroken ? 12 : 0), "task \(number): \(logs[number])")
        }
        print("fleet test: \(kills.count) tasks killed")

        // Every good store at the target, equal to its template's reference, migrated once.
        let results = ResultsFolder(reading: manifestRead.defaultResultsFolder)
        for (store, (template, pending)) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(try StoreDump.lines(path(store)) == templates[template].expected, "\(store)")
            let outcomes = results.outcomes(of: FleetManifest.id(forPath: store))
            #expect(outcomes.filter { $0.status == .migrated }.count == (pending ? 1 : 0), "\(store): \(outcomes.map(\.status))")
            #expect(FileManager.default.fileExists(atPath: path(store.replacingOccurrences(of: ".sqlite", with: "~.sqlite"))) == pending, "\(store)")
            // Two attempts at once would have met at the store's lock: the lease kept them apart.
            #expect(!outcomes.contains { $0.error?.kind == "inUse" }, "\(store): \(outcomes)")
            #expect(!FileManager.default.fileExists(atPath: StoreLease.path(for: path(store))), "\(store): a lease left behind")
        }

        // The kills landed inside migrations, and their retries finished them.
        let retried = expected.keys.filter { store in
            results.outcomes(of: FleetManifest.id(forPath: store)).contains { $0.status == .migrated && $0.attempt > 1 }
        }
        #expect(kills.count >= 5 && !retried.isEmpty, "\(kills.count) kills, \(retried.count) stores migrated by a retry")

        // The status agrees with the files.
        let status = TernCommandLine.run(["fleet", "status", "--manifest", manifest, "--json"], commands: [FleetCommand.self])
        #expect(status.status == 12, "\(status.output)\(status.errors)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any])
        let counts = try #require(report["counts"] as? [String: Int])
        #expect(
            counts == [
                "migrated": expected.values.filter(\.pending).count, "skipped": expected.values.filter { !$0.pending }.count,
                "failed": 2, "interrupted": 0, "running": 0, "pending": 0,
            ], "\(status.output)")
        let failures = try #require(report["failures"] as? [[String: Any]])
        let reasons = failures.map { ($0["path"] as? String ?? "") + " " + (($0["error"] as? [String: Any])?["message"] as? String ?? "") }
        #expect(reasons.contains { $0.hasPrefix("stores/broken-not-a-store.sqlite") && $0.contains("not an SQLite database") }, "\(reasons)")
        #expect(reasons.contains { $0.hasPrefix("stores/broken-anomalies.sqlite") && $0.contains("Z_ENT") }, "\(reasons)")
    }

    @Test("SIGTERM stops the running migration at a batch boundary with the retryable code; the retry resumes it")
    func sigtermThenRetry() throws {
        let store = path("stores/big.sqlite")
        #expect(TernCommandLine.run(["generate", "--model", Self.model, "--version", "BookStore 1", "--rows", "30000", store]).status == 0)
        let manifest = path("fleet.jsonl")
        #expect(
            TernCommandLine.run(["fleet", "plan", "--model", Self.model, "--stores", store, "--manifest", manifest], commands: [FleetCommand.self]).status == 0)
        let process = try TernProcess.launch(
            ["fleet", "run", "--manifest", manifest, "--batch-size", "50"], standardOutput: FileHandle.nullDevice, standardError: FileHandle.nullDevice)
        // Once the lease is taken and a migration under way, as an engine evicting the pod would:
        // its record complete, with the source's digest (a run stopped before its start checks
        // end on a store written a moment ago keeps nothing, and says so).
        let record = URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent(".big.sqlite.tern-migration.json").path
        Latch.until(timeout: 60) {
            guard FileManager.default.fileExists(atPath: StoreLease.path(for: store)), let text = try? String(contentsOfFile: record, encoding: .utf8) else {
                return false
            }
            return !text.contains("sourcePending")
        }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 75)
        let results = ResultsFolder(reading: path("fleet.results"))
        let outcomes = results.outcomes(of: FleetManifest.id(forPath: "stores/big.sqlite"))
        #expect(outcomes.map(\.status) == [.started, .interrupted], "\(outcomes)")
        #expect(outcomes.last?.error?.message.contains("the shard's next attempt (tern fleet run) resumes it") == true, "\(outcomes)")

        let retry = try TernProcess.run(["fleet", "run", "--manifest", manifest])
        #expect(retry.status == 0, "\(retry.standardOutput)\(retry.standardError)")
        let after = results.outcomes(of: FleetManifest.id(forPath: "stores/big.sqlite"))
        #expect(after.map(\.status) == [.started, .interrupted, .started, .migrated], "\(after)")
        #expect(after.last?.attempt == 2)
        #expect(TernCommandLine.run(["check", store, "--model", Self.model]).status == 0)
    }

    @Test("a model or mapping file changed after planning: every task refuses with the permanent code, naming the file")
    func manifestDrift() throws {
        let model = path("model")
        try FileManager.default.copyItem(atPath: Self.model, toPath: model)
        let store = path("stores/one.sqlite")
        #expect(TernCommandLine.run(["generate", "--model", model, "--version", "BookStore 3", "--rows", "10", store]).status == 0)
        let manifest = path("fleet.jsonl")
        #expect(
            TernCommandLine.run(["fleet", "plan", "--model", model, "--list", try listFile([store]), "--manifest", manifest], commands: [FleetCommand.self])
                .status == 0)
        let mapping = model + "/mappings/v4-to-v5.yaml"
        try (try String(contentsOfFile: mapping, encoding: .utf8) + "\n# edited\n").write(toFile: mapping, atomically: true, encoding: .utf8)
        let run = TernCommandLine.run(["fleet", "run", "--manifest", manifest], commands: [FleetCommand.self])
        #expect(run.status == 12)
        #expect(run.errors.contains("changed since the fleet was planned"), "\(run.errors)")
        #expect(TernCommandLine.run(["check", store, "--model", model]).status == 3, "the store was left alone")
        // A manifest cut short is refused too, by line.
        let text = try String(contentsOfFile: manifest, encoding: .utf8)
        try String(text.prefix(text.count - 20)).write(toFile: manifest, atomically: true, encoding: .utf8)
        let cut = TernCommandLine.run(["fleet", "run", "--manifest", manifest], commands: [FleetCommand.self])
        #expect(cut.status == 12)
        #expect(cut.errors.contains("line 2"), "\(cut.errors)")
    }

    @Test(
        "plan leaves out tern's backups and working files, and a store named twice or through a link; a FIFO, a store whose folder is gone and a backup in a hand-made manifest fail permanently, recorded with their reasons"
    )
    func awkwardFleet() throws {
        let stores = path("stores")
        for (name, version) in [("a", "BookStore 1"), ("b", "BookStore 2")] {
            #expect(TernCommandLine.run(["generate", "--model", Self.model, "--version", version, "--rows", "10", "\(stores)/\(name).sqlite"]).status == 0)
        }
        // A fleet migrated before: a backup, a step store left by a killed run, a journal, links.
        try FileManager.default.copyItem(atPath: "\(stores)/a.sqlite", toPath: "\(stores)/a~.sqlite")
        try FileManager.default.copyItem(atPath: "\(stores)/a.sqlite", toPath: "\(stores)/.a.sqlite.tern-step1.sqlite")
        try Data().write(to: URL(fileURLWithPath: "\(stores)/b.sqlite-journal"))
        try FileManager.default.createSymbolicLink(atPath: "\(stores)/link.sqlite", withDestinationPath: "\(stores)/b.sqlite")
        try FileManager.default.linkItem(atPath: "\(stores)/a.sqlite", toPath: "\(stores)/hard.sqlite")
        #expect(mkfifo("\(stores)/fifo.sqlite", 0o644) == 0)
        try FileManager.default.createDirectory(atPath: path("gone"), withIntermediateDirectories: true)
        #expect(TernCommandLine.run(["generate", "--model", Self.model, "--version", "BookStore 1", "--rows", "10", path("gone/c.sqlite")]).status == 0)
        let names = ["stores/a.sqlite", "./stores/a.sqlite", path("stores/../stores/b.sqlite"), "stores/*"].map { $0.hasPrefix("/") ? $0 : path($0) }
        let list = try listFile(
            names.dropLast() + (try FileManager.default.contentsOfDirectory(atPath: stores).map { "\(stores)/\($0)" }) + [path("gone/c.sqlite")])
        let manifest = path("fleet.jsonl")
        let planned = TernCommandLine.run(["fleet", "plan", "--model", Self.model, "--list", list, "--manifest", manifest], commands: [FleetCommand.self])
        #expect(planned.status == 0, "\(planned.errors)")
        let read = try FleetManifest.read(manifest)
        #expect(read.entries.map(\.path).sorted() == ["gone/c.sqlite", "stores/a.sqlite", "stores/b.sqlite", "stores/fifo.sqlite"], "\(planned.output)")
        for (left, reason) in [
            ("a~.sqlite", "a backup"), (".a.sqlite.tern-step1.sqlite", "a working file"), ("b.sqlite-journal", "a journal file"),
            ("link.sqlite", "the same file as"), ("hard.sqlite", "the same file as"),
        ] {
            #expect(planned.output.contains("left out: \(stores)/\(left): \(reason)"), "\(left): \(planned.output)")
        }
        #expect(read.entries.first { $0.path == "stores/fifo.sqlite" }?.error?.message.contains("not a regular file") == true)

        // A hand-made manifest naming a backup, and a store whose folder went after planning.
        var edited = read
        let backup = FleetManifest.Entry(
            id: FleetManifest.id(forPath: "stores/a~.sqlite"), path: "stores/a~.sqlite", state: .pending, version: "BookStore 1", objects: 30, steps: 4)
        edited.entries.append(backup)
        edited.header.stores += 1
        try edited.text().write(toFile: manifest, atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(atPath: path("gone"))
        let run = TernCommandLine.run(["fleet", "run", "--manifest", manifest], commands: [FleetCommand.self])
        #expect(run.status == 12, "\(run.output)\(run.errors)")
        let status = TernCommandLine.run(["fleet", "status", "--manifest", manifest, "--json"], commands: [FleetCommand.self])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any])
        #expect(
            report["counts"] as? [String: Int] == ["migrated": 1, "skipped": 0, "failed": 4, "interrupted": 0, "running": 0, "pending": 0], "\(status.output)")
        let reasons = (report["failures"] as? [[String: Any]] ?? []).map { "\($0["path"]!): \(($0["error"] as? [String: Any])?["message"] ?? "")" }
        #expect(reasons.contains { $0.hasPrefix("stores/a~.sqlite") && $0.contains("not a store but a backup") }, "\(reasons)")
        // b migrates; a cannot, as its backup's name is taken (by the file planted above).
        #expect(reasons.contains { $0.hasPrefix("stores/a.sqlite") && $0.contains("a~.sqlite") }, "\(reasons)")
        #expect(
            reasons.contains {
                $0.hasPrefix("gone/c.sqlite") && $0.contains("c.sqlite: cannot create the store's lease beside it (its folder does not exist)")
            }, "\(reasons)")
        #expect(reasons.contains { $0.hasPrefix("stores/fifo.sqlite") && $0.contains("not a regular file") }, "\(reasons)")
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: "\(stores)/a~.sqlite"))
                == Data(contentsOf: URL(fileURLWithPath: path("stores/.a.sqlite.tern-step1.sqlite"))), "the backup untouched")

        // A manifest inside the model's folder would change the model's hash: refused.
        let model = path("model")
        try FileManager.default.copyItem(atPath: Self.model, toPath: model)
        let inside = TernCommandLine.run(
            ["fleet", "plan", "--model", model, "--list", list, "--manifest", model + "/fleet.jsonl"], commands: [FleetCommand.self])
        #expect(inside.status == 65 && inside.errors.contains("inside the model's folder"), "\(inside.errors)")
    }

    @Test("results: a line a kill cut short does not swallow the next; a lease from a wrong clock, a day ahead, is stale")
    func tornLinesAndForgedLeases() throws {
        let folder = try ResultsFolder(path: path("results"))
        try Data("{\"id\":\"x\",\"status\":\"sta".utf8).write(to: URL(fileURLWithPath: folder.file(for: "x")))
        let outcome = StoreOutcome(id: "x", path: "x.sqlite", status: .started, attempt: 1, shard: "0/1", task: "t", host: "h", started: 1)
        try folder.append(outcome)
        #expect(folder.outcomes(of: "x") == [outcome])

        let here = LeaseIdentity(task: "here")
        var forged = here.holder(now: Date().timeIntervalSince1970, length: 60)
        forged.host = "elsewhere"
        #expect(!here.isStale(forged, now: Date().timeIntervalSince1970))
        forged.expires += 3 * StoreLease.longest
        #expect(here.isStale(forged, now: Date().timeIntervalSince1970))
    }

    private func listFile(_ stores: [String]) throws -> String {
        let list = path("stores.txt")
        try ("# the fleet\n" + stores.joined(separator: "\n") + "\n").write(toFile: list, atomically: true, encoding: .utf8)
        return list
    }

    @Test("shards: from flags and each engine's variables, and every store in exactly one shard, evenly")
    func shards() throws {
        #expect(try Shard.resolve(index: nil, count: nil, environment: [:]) == Shard(index: 0, count: 1, source: "the whole manifest"))
        #expect(try Shard.resolve(index: nil, count: 8, environment: ["JOB_COMPLETION_INDEX": "5"]).index == 5)
        #expect(try Shard.resolve(index: nil, count: 3, environment: ["AWS_BATCH_JOB_ARRAY_INDEX": "2"]).source == "AWS_BATCH_JOB_ARRAY_INDEX")
        #expect(
            try Shard.resolve(index: nil, count: nil, environment: ["SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "4", "SLURM_ARRAY_TASK_COUNT": "4"])
                == Shard(index: 3, count: 4, source: "SLURM_ARRAY_TASK_ID"))
        #expect(try Shard.resolve(index: 1, count: 2, environment: ["JOB_COMPLETION_INDEX": "0"]).index == 1, "the flag wins")
        // --array=10-16:2 numbers its four tasks 10, 12, 14, 16; --array=1,4,9 cannot name shards.
        #expect(
            try Shard.resolve(
                index: nil, count: nil,
                environment: ["SLURM_ARRAY_TASK_ID": "14", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "4"]
            ).index == 2)
        #expect(throws: (any Error).self) {
            try Shard.resolve(
                index: nil, count: nil,
                environment: ["SLURM_ARRAY_TASK_ID": "9", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_STEP": "1", "SLURM_ARRAY_TASK_COUNT": "3"])
        }
        #expect(throws: (any Error).self) { try Shard.resolve(index: nil, count: nil, environment: ["JOB_COMPLETION_INDEX": "0"]) }
        #expect(throws: (any Error).self) { try Shard.resolve(index: 4, count: 4, environment: [:]) }
        #expect(throws: (any Error).self) { try Shard.resolve(index: nil, count: 4, environment: ["JOB_COMPLETION_INDEX": "x"]) }

        let entries = (0..<1000).map { number in
            FleetManifest.Entry(
                id: FleetManifest.id(forPath: "s\(number)"), path: "s\(number)", state: .pending, version: "v1", objects: (number * 7919) % 5000, steps: 1)
        }
        let manifest = FleetManifest(
            header: FleetManifest.Header(
                created: "", model: .init(path: "m", sha256: ""), target: "v2", mappings: [], mappingOverrides: [], stepByStep: false, stores: 1000, objects: 0),
            entries: entries, path: "/tmp/f.jsonl")
        let split = (0..<7).map { Shard(index: $0, count: 7, source: "").stores(of: manifest) }
        #expect(split.flatMap { $0.map(\.id) }.sorted() == entries.map(\.id).sorted())
        let objects = split.map { $0.reduce(0) { $0 + $1.objects } }
        #expect(Double(objects.max()!) / Double(objects.min()!) < 1.05, "\(objects)")
        #expect(split.map(\.count).max()! - split.map(\.count).min()! <= 1)
    }

    @Test("leases: one winner among racing takers; held while alive, taken over once expired or its process is gone; lost when taken")
    func leases() throws {
        let store = path("stores/leased.sqlite")
        let identities = (0..<8).map { LeaseIdentity(task: "racer \($0)") }
        let winners = KillCount()
        DispatchQueue.concurrentPerform(iterations: 8) { number in
            if case .acquired? = try? StoreLease.acquire(store: store, identity: identities[number], length: 30) { winners.add() }
        }
        #expect(winners.count == 1)
        try FileManager.default.removeItem(atPath: StoreLease.path(for: store))

        // Held by a task on another machine until it expires.
        var elsewhere = LeaseIdentity(task: "elsewhere")
        elsewhere.host = "another-host"
        // Time moves by hand: the leases read this clock, not the wall's.
        let clock = ManualClock()
        guard case .acquired(let remote) = try StoreLease.acquire(store: store, identity: elsewhere, length: 1.5, clock: clock.now) else {
            Issue.record("not acquired"); return
        }
        let here = LeaseIdentity(task: "here")
        guard case .held(let holder) = try StoreLease.acquire(store: store, identity: here, length: 30, clock: clock.now) else {
            Issue.record("taken while live"); return
        }
        #expect(holder.task == "elsewhere")
        #expect(remote.renew())
        clock.advance(by: 1.7)
        guard case .acquired(let mine) = try StoreLease.acquire(store: store, identity: here, length: 30, clock: clock.now) else {
            Issue.record("expired lease not taken over"); return
        }
        #expect(!remote.renew(), "the expired holder finds it lost")
        #expect(remote.isLost)
        remote.release()
        #expect(mine.renew(), "releasing a lost lease leaves the new holder's alone")
        mine.release()
        #expect(!FileManager.default.fileExists(atPath: mine.path))

        // Never renewed (a stalled renewal, a paused process): lost a sixth of its length before
        // it expires, so its holder stops before another task may take the store.
        guard case .acquired(let unrenewed) = try StoreLease.acquire(store: store, identity: here, length: 1.2, clock: clock.now) else {
            Issue.record("not acquired"); return
        }
        #expect(!unrenewed.isLost)
        clock.advance(by: 0.95)
        #expect(!unrenewed.isLost, "a lease is not lost before five sixths of its length")
        clock.advance(by: 0.1)
        #expect(unrenewed.isLost)
        #expect(!unrenewed.renew(), "too late to renew")
        unrenewed.release()

        // Held by a process of this machine that has ended: taken over at once.
        var dead = LeaseIdentity(task: "killed")
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        dead.pid = child.processIdentifier
        guard case .acquired = try StoreLease.acquire(store: store, identity: dead, length: 600) else { Issue.record("not acquired"); return }
        guard case .acquired = try StoreLease.acquire(store: store, identity: here, length: 30) else {
            Issue.record("a dead process's lease was not taken over"); return
        }
    }
}

/// Counts from several threads.
final class KillCount: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add() { lock.lock(); value += 1; lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return value }
}

/// The last exit status of each simulated engine's task.
final class ShardFinals: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int32?]
    init(count: Int) { values = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ status: Int32) { lock.lock(); values[index] = status; lock.unlock() }
    func status(_ index: Int) -> Int32? { lock.lock(); defer { lock.unlock() }; return values[index] }
}

/// A clock for leases that moves only when told: lease expiry tested without sleeping.
final class ManualClock: Sendable {
    private let seconds = Mutex(Date().timeIntervalSince1970)

    var now: @Sendable () -> Double { { [self] in seconds.withLock { $0 } } }

    func advance(by interval: Double) { seconds.withLock { $0 += interval } }
}
