import Foundation
import Testing
import TernSQLite

/// Kills `tern migrate` with SIGKILL at random instants and resumes it, again and again, then
/// compares the result row for row with an uninterrupted run. Seeded, so a failure reproduces.
@Suite("Crash and resume", .serialized)
struct CrashResumeTests {
    static let library = CheckAndGenerateCommandTests.repository.appendingPathComponent("configs/library").path
    /// At least this many kills per run; `TERN_CRASH_KILLS` asks for more in a longer local run.
    static let kills = Int(ProcessInfo.processInfo.environment["TERN_CRASH_KILLS"] ?? "") ?? 30

    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// The schema (tables and indexes), then every row of every table but the metadata (whose
    /// UUID differs per store), in key order.
    private func dump(_ path: String) throws -> [String] {
        let connection = try Connection(path: path, configuration: .init(mode: .readOnly))
        let schema = try connection.prepare("SELECT type, name FROM sqlite_master WHERE name <> 'Z_METADATA' ORDER BY type, name")
        var lines: [String] = []
        var tables: [String] = []
        var rows = schema.rows()
        while let row = try rows.next() {
            lines.append("\(row.text(at: 0)!) \(row.text(at: 1)!)")
            if row.text(at: 0) == "table" { tables.append(row.text(at: 1)!) }
        }
        for name in tables {
            let select = try connection.prepare("SELECT * FROM \(quoteIdentifier(name)) ORDER BY 1, 2")
            var cursor = select.rows()
            while let row = try cursor.next() { lines.append(name + ":" + row.values.map(\.sqlLiteral).joined(separator: "|")) }
        }
        return lines
    }

    /// Starts a migration and kills it after `delay` seconds, unless it finishes first.
    /// Returns the exit status, or nil when it was killed.
    private func run(_ arguments: [String], killAfter delay: Double?, environment: [String: String] = [:]) throws -> Int32? {
        let process = Process()
        process.executableURL = TernProcess.executable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        try process.run()
        if let delay {
            let deadline = Date().addingTimeInterval(delay)
            while process.isRunning && Date() < deadline { usleep(200) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal ? nil : process.terminationStatus
    }

    @Test("SIGKILL at random instants, then --resume: the result equals an uninterrupted run, and the source is untouched")
    func killAndResume() throws {
        let source = path("Library.sqlite")
        #expect(try TernProcess.run(["generate", "--model", Self.library, "--version", "Library 1", "--rows", "13000", "--seed", "5", source]).status == 0)
        let original = try Data(contentsOf: URL(fileURLWithPath: source))
        let reference = path("reference.sqlite")
        let started = Date()
        #expect(try run(["migrate", source, "--model", Self.library, "--out", reference, "--batch-size", "700"], killAfter: nil) == 0)
        let duration = Date().timeIntervalSince(started)
        let expected = try dump(reference)
        #expect(expected.count > 60_000)

        var seed = UInt64(20_261_121)
        func nextDelay() -> Double {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407  // a seeded LCG: the same instants every run
            return 0.002 + Double(seed >> 11) / Double(1 << 53) * duration
        }
        var killed = 0
        var trial = 0
        while killed < Self.kills {
            trial += 1
            let output = path("out-\(trial).sqlite")
            var attempts = 0
            while true {
                attempts += 1
                let arguments = ["migrate", source, "--model", Self.library, "--out", output, "--batch-size", "700"] + (attempts > 1 ? ["--resume"] : [])
                // Toward the end of a trial, let the run finish.
                let status = try run(arguments, killAfter: attempts > 12 ? nil : nextDelay())
                if status == nil { killed += 1; continue }
                #expect(status == 0, "trial \(trial), attempt \(attempts) exited \(status!)")
                break
            }
            #expect(try dump(output) == expected, "trial \(trial) after \(attempts) attempts differs from the uninterrupted run")
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(".out-\(trial).sqlite.tern-migration.json").path))
        }
        #expect(killed >= Self.kills)
        #expect(try Data(contentsOf: URL(fileURLWithPath: source)) == original)
    }

    @Test("a crash inside the final swap leaves the original or the migrated store in place, never neither; --resume finishes",
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
            #expect(try dump(store) == dump(reference))
        }
        let status = try run(["migrate", store, "--model", Self.library, "--resume"], killAfter: nil)
        #expect(status == 0)
        #expect(try dump(store) == dump(reference))
        let backup = path("Swap~.sqlite")
        #expect(try Data(contentsOf: URL(fileURLWithPath: backup)) == original)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".") }.isEmpty)
    }
}
