import Foundation
import Testing
import TernCommands

/// The disk misbehaving under the real `tern`: `Tests/FaultInjection/fault_vfs.c`, built here and
/// loaded with LD_PRELOAD, fails the Nth read, write, fsync, truncate or open of the stores' files,
/// once or from then on, fills the disk, or cuts the power at a sync (the writes since each file's
/// last sync lost, or torn). After each fault: tern exits non-zero naming the operation and the
/// files, the source is byte for byte what it was, every SQLite file left passes
/// `integrity_check`, and a run with `--resume` gives the store an uninterrupted run gives, row
/// for row — or, where SQLite itself got past the failed call, tern exits 0 with that very store.
@Suite("Injected I/O errors and power cuts, swept over every kind of call", .serialized)
struct FaultInjectionTests {
    /// The fault VFS as a shared object, built once per test run into one file that every run
    /// replaces (built under a name of its own, then renamed over it, so a run beside this one
    /// never loads half a file), rather than one more file per run.
    static let library: Result<String, any Error> = Result {
        let source = CheckAndGenerateCommandTests.repository.appendingPathComponent("Tests/FaultInjection/fault_vfs.c").path
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("tern-fault-vfs.so").path
        let building = output + ".\(UUID().uuidString)"
        let built = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/cc"), ["-shared", "-fPIC", "-O1", "-o", building, source, "-lsqlite3", "-ldl"])
        guard built.status == 0 else { throw TernTestFailure("cc fault_vfs.c: \(String(decoding: built.standardError, as: UTF8.self))") }
        guard rename(building, output) == 0 else { throw TernTestFailure("cannot rename \(building) to \(output)") }
        return output
    }

    /// A migration to sweep: the source, how tern runs it, and where its result lands.
    struct Scenario: CustomTestStringConvertible, Sendable {
        var model: String
        var version: String
        var rows: Int
        var options: [String]
        var inPlace: Bool
        var testDescription: String { "\(URL(fileURLWithPath: model).lastPathComponent) \(inPlace ? "in place" : "--out") \(options.joined(separator: " "))" }

        /// A copied step whose mappings run in Swift, into a new file.
        static let swiftCopy = Scenario(model: "configs/library", version: "Library 1", rows: 30, options: ["--in-swift"], inPlace: false)
        /// BookStore 1 → 5 in place: steps applied as schema changes, copied steps with a policy,
        /// and the final swap.
        static let chainInPlace = Scenario(model: "configs/bookstore", version: "BookStore 1", rows: 20, options: [], inPlace: true)
        /// Attachments 1 → 3 in place through Swift: files carried, values decoded into the
        /// store, the backup's folder of links, the unreferenced files cleaned up.
        static let attachmentsInPlace = Scenario(model: "configs/attachments", version: "Attachments 1", rows: 40, options: ["--in-swift"], inPlace: true)
    }

    /// Removed with the suite's instance, whatever the test did.
    let scratch: ScratchFolder
    var directory: URL { scratch.url }

    init() throws {
        scratch = try ScratchFolder("tern-faults")
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// `.NAME_SUPPORT` beside a store.
    private static func support(_ store: String) -> String {
        let url = URL(fileURLWithPath: store)
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent)_SUPPORT").path
    }

    /// What each failed call's error must name.
    private static let named = [
        "read": "read failed", "write": "write failed", "sync": "fsync failed", "truncate": "truncate failed", "open": "unable to open",
    ]

    @Test(
        "I/O errors, once and from then on, at a spread of the reads, writes, fsyncs, truncates and opens a run makes; a full disk",
        arguments: [Scenario.swiftCopy, Scenario.chainInPlace])
    func ioErrors(scenario: Scenario) throws {
        let points = scenario.inPlace ? 4 : 7
        var covered = 0
        for op in ["write", "read", "sync", "truncate", "open"] {
            for mode in ["once", "persistent"] { covered += try sweep(scenario, op: op, mode: mode, points: points) }
        }
        covered += try sweep(scenario, op: "write", mode: "full", points: 3)
        print("fault points covered (\(scenario.testDescription)): \(covered)")
        #expect(covered >= 30)
    }

    @Test(
        "a power cut at every sync point (writes since each file's last sync lost, and renames, links and unlinks since their directory's), torn at every other one, and as tern exits 0",
        arguments: [Scenario.swiftCopy, Scenario.chainInPlace, Scenario.attachmentsInPlace])
    func powerCuts(scenario: Scenario) throws {
        let lost = try sweep(scenario, op: "sync", mode: "powerloss", points: scenario.inPlace ? 20 : .max)
        let torn = try sweep(scenario, op: "sync", mode: "tear", points: scenario.inPlace ? 10 : 12)
        let atExit = try sweep(scenario, op: "exit", mode: "powerloss", points: 1)
        print("power cuts (\(scenario.testDescription)): \(lost) lost, \(torn) torn, \(atExit) at exit")
        #expect(lost >= 10 && torn >= 5 && atExit == 1)
    }

    @Test(
        "the file tern writes itself, the run record, when every rename or every fsync fails (libfiu's fiu-run): exit 74 naming the operation and the file, the source untouched, --resume finishes",
        arguments: ["posix/io/dir/rename", "posix/io/sync/fsync"])
    func ownFiles(failing call: String) throws {
        let model = CheckAndGenerateCommandTests.repository.appendingPathComponent("configs/library").path
        let source = path("Library.sqlite")
        #expect(try TernProcess.run(["generate", "--model", model, "--version", "Library 1", "--rows", "30", source]).status == 0)
        let original = try Data(contentsOf: URL(fileURLWithPath: source))
        let reference = path("Reference.sqlite")
        #expect(try TernProcess.run(["migrate", source, "--model", model, "--out", reference, "--progress", "none"]).status == 0)
        let output = path("Out.sqlite")
        let arguments = ["migrate", source, "--model", model, "--out", output, "--progress", "none"]
        let failed = try ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/fiu-run"), ["-x", "-c", "enable name=\(call)", TernProcess.executable.path] + arguments)
        let said = String(decoding: failed.standardError, as: UTF8.self)
        #expect(failed.status == 74, "\(said)")
        let operation = call.hasSuffix("rename") ? "rename failed" : "fsync failed"
        #expect(said.contains(operation) && said.contains(directory.lastPathComponent), "\(said)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: source)) == original)
        let resumed = try TernProcess.run(arguments + ["--resume"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(try StoreDump.lines(output) == StoreDump.lines(reference))
    }

    /// Runs `scenario` with the fault `op:N:mode` at up to `points` values of N spread over the
    /// calls an unfaulted run makes, each followed by checks and a `--resume`. Returns how many
    /// faults fired.
    private func sweep(_ scenario: Scenario, op: String, mode: String, points: Int) throws -> Int {
        let library = try Self.library.get()
        let model = CheckAndGenerateCommandTests.repository.appendingPathComponent(scenario.model).path
        let source = path("Source-\(op)-\(mode).sqlite")
        #expect(
            try TernProcess.run(["generate", "--model", model, "--version", scenario.version, "--rows", "\(scenario.rows)", "--seed", "3", source]).status == 0)
        let original = try Data(contentsOf: URL(fileURLWithPath: source))

        /// A fresh place for one run: the store to migrate, the tern arguments, where the result lands.
        func run(_ name: String) throws -> (store: String, arguments: [String], result: String) {
            guard scenario.inPlace else {
                return (source, ["migrate", source, "--model", model, "--out", path(name), "--progress", "none"] + scenario.options, path(name))
            }
            try FileManager.default.copyItem(atPath: source, toPath: path(name))
            if FileManager.default.fileExists(atPath: Self.support(source)) {
                try FileManager.default.copyItem(atPath: Self.support(source), toPath: Self.support(path(name)))
            }
            return (path(name), ["migrate", path(name), "--model", model, "--progress", "none"] + scenario.options, path(name))
        }
        let reference = try run("Reference-\(op)-\(mode).sqlite")
        #expect(try TernProcess.run(reference.arguments).status == 0)
        let expected = try StoreDump.lines(reference.result)

        let counted = try run("Counted-\(op)-\(mode).sqlite")
        let counts = path("counts-\(op)-\(mode)")
        #expect(try TernProcess.run(counted.arguments, environment: ["LD_PRELOAD": library, "TERN_FAULT_COUNTS": counts]).status == 0)
        let line = try String(contentsOfFile: counts, encoding: .utf8)
        let total =
            op == "exit"
            ? 1
            : try #require(
                line.split(separator: " ").first { $0.hasPrefix(op + "=") }.flatMap {
                    Int($0.dropFirst(op.count + 1).trimmingCharacters(in: .whitespacesAndNewlines))
                })
        let chosen = total <= points ? Array(1...max(total, 1)) : (0..<points).map { 1 + $0 * (total - 1) / (points - 1) }

        var fired = 0
        var absorbed = 0
        defer {
            if absorbed > 0 { print("\(scenario.testDescription), \(op) \(mode): \(absorbed) of \(fired) faults got past with exit 0 and the same store") }
        }
        for n in chosen where n <= total {
            let attempt = try run("Out-\(op)-\(mode)-\(n).sqlite")
            let faulted = try TernProcess.run(attempt.arguments, environment: ["LD_PRELOAD": library, "TERN_FAULT": "\(op):\(n):\(mode)"])
            let context = "\(scenario.testDescription), \(op) #\(n) of \(total) \(mode)"
            guard faulted.standardError.contains("tern-fault:") else { continue }  // a later run made fewer calls
            fired += 1
            if mode == "powerloss" || mode == "tear" {
                #expect(faulted.status == 137, "\(context): \(faulted.standardError)")
                let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".sqlite") && $0.contains("-\(n)") }
                for file in left {
                    #expect(try SQLiteShell.run(path(file), "PRAGMA integrity_check;") == "ok\n", "\(context): \(file)")
                }
                if op == "exit" {
                    // The power went as tern exited 0: what it reported done must still be there.
                    #expect(try StoreDump.lines(attempt.result) == expected, "\(context): the migrated store did not survive a power cut after exit 0")
                    if scenario.inPlace {
                        #expect(
                            try Data(contentsOf: URL(fileURLWithPath: StoreMigrationPaths.backup(attempt.store))) == original,
                            "\(context): the backup did not survive")
                    }
                }
            } else if faulted.status == 0 {
                // SQLite got past the failed call itself (a journal write it could do without):
                // the store must then be the uninterrupted run's.
                absorbed += 1
                // The fsyncgate lesson: a failed fsync may never be taken as durable.
                #expect(op != "sync", "\(context): a failed fsync was taken as done (exit 0)")
                #expect(try StoreDump.lines(attempt.result) == expected, "\(context): exited 0 with another store")
                // Finished as a delivered store is: user_version cleared, the run named in its metadata.
                #expect(
                    try SQLiteShell.run(attempt.result, "PRAGMA user_version; SELECT instr(Z_PLIST, CAST('TernMigratedFrom' AS BLOB)) > 0 FROM Z_METADATA;")
                        == "0\n1\n",
                    "\(context): exited 0 with a store that lacks its last commit")
                continue
            } else {
                // tern's own words, not the VFS's report of the fault.
                let said = faulted.standardError.split(separator: "\n").filter { !$0.hasPrefix("tern-fault:") }.joined(separator: "\n")
                let reason = mode == "full" ? "disk is full" : Self.named[op]!
                #expect(
                    said.contains(reason) && said.contains(directory.lastPathComponent),
                    "\(context): the error names neither the operation nor the file: \(said)")
                #expect(faulted.status == 74, "\(context): exit \(faulted.status): \(said)")
                // Once the run's record exists, the work is kept: the message says how to go on.
                let result = URL(fileURLWithPath: attempt.result)
                let record = result.deletingLastPathComponent().appendingPathComponent(".\(result.lastPathComponent).tern-migration.json").path
                #expect(
                    !FileManager.default.fileExists(atPath: record) || said.contains("--resume"),
                    "\(context): the work is kept but the message does not say --resume: \(said)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: source)) == original, "\(context): the source changed")
            let resumed = try TernProcess.run(attempt.arguments + ["--resume"])
            #expect(resumed.status == 0, "\(context): --resume exited \(resumed.status): \(resumed.standardError)")
            #expect(try StoreDump.lines(attempt.result) == expected, "\(context): the resumed store differs from an uninterrupted run")
            if scenario.inPlace {
                let backup = StoreMigrationPaths.backup(attempt.store)
                #expect(try Data(contentsOf: URL(fileURLWithPath: backup)) == original, "\(context): the backup is not the original")
                if FileManager.default.fileExists(atPath: Self.support(source)) {
                    let files = { (store: String) in try FileManager.default.contentsOfDirectory(atPath: Self.support(store) + "/_EXTERNAL_DATA").sorted() }
                    #expect(try files(backup) == files(source), "\(context): the backup's external files are not the original's")
                    for file in try files(source) {
                        #expect(
                            FileManager.default.contents(atPath: Self.support(backup) + "/_EXTERNAL_DATA/" + file)
                                == FileManager.default.contents(atPath: Self.support(source) + "/_EXTERNAL_DATA/" + file),
                            "\(context): \(file)")
                    }
                }
            }
        }
        return fired
    }
}

/// A test's own failure, with its message.
struct TernTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
