import Foundation
import Testing
import TernLoop
import TernSQLite

@Suite("tern migrate, run as a process")
struct MigrateCommandTests {
    static let bookStore = CheckAndGenerateCommandTests.bookStore
    /// Removed with the suite's instance, whatever the test did.
    let scratch: ScratchFolder
    var directory: URL { scratch.url }

    init() throws {
        scratch = try ScratchFolder("tern-migrate")
    }

    private func store(_ name: String = "Books.sqlite") throws -> String {
        let path = directory.appendingPathComponent(name).path
        #expect(try TernProcess.run(["generate", "--model", Self.bookStore, "--version", "BookStore 1", "--rows", "50", path]).status == 0)
        return path
    }

    @Test("--out that cannot name a file (empty, ending in /, an existing directory) is refused before any work (64), nothing written")
    func outThatNamesNoFile() throws {
        let path = try store()
        let folder = directory.appendingPathComponent("existing").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        for out in ["", directory.appendingPathComponent("x.sqlite").path + "/", folder, folder + "/", folder + "/."] {
            let outcome = try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--out", out, "--progress", "none"])
            #expect(outcome.status == 64, "--out '\(out)': \(outcome.standardError)")
            #expect(outcome.standardError.contains(out.isEmpty ? "--out is empty" : "names a directory"), "\(outcome.standardError)")
            #expect(!outcome.standardError.contains("--resume"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }

    @Test("a bare --resume with nothing to resume says so (64), not that --model is missing")
    func bareResumeWithNothingToResume() throws {
        let path = try store()
        let outcome = try TernProcess.run(["migrate", path, "--resume", "--progress", "none"])
        #expect(outcome.status == 64, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("nothing to resume: no unfinished migration into \(path)"), "\(outcome.standardError)")
        #expect(!outcome.standardError.contains("Missing expected argument"))
    }

    @Test("--dry-run prints the chain and writes nothing")
    func dryRun() throws {
        let path = try store()
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let outcome = try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--dry-run"])
        #expect(outcome.status == 0)
        #expect(outcome.standardOutput.contains("1. BookStore 1 → BookStore 3 (inferred mapping)"), "\(outcome.standardOutput)")
        #expect(outcome.standardOutput.contains("2. BookStore 3 → BookStore 4 (v3-to-v4.yaml)"))
        #expect(outcome.standardOutput.contains("route: the app's mapping models that lie on the way from BookStore 1 to BookStore 5"))
        let stepByStep = try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--dry-run", "--step-by-step"])
        #expect(stepByStep.standardOutput.contains("1. BookStore 1 → BookStore 2 (inferred mapping)"))
        #expect(stepByStep.standardOutput.contains("3. BookStore 3 → BookStore 4 (v3-to-v4.yaml)"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)
    }

    @Test("kept keys keep Core Data's high-water mark (Z_MAX): keys of deleted objects are never handed out again")
    func keptKeysKeepTheirHighWaterMark() throws {
        let library = CheckAndGenerateCommandTests.repository.appendingPathComponent("configs/library").path
        let path = directory.appendingPathComponent("Library.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", library, "--version", "Library 1", "--rows", "200", path]).status == 0)
        let editor = try Connection(path: path, configuration: .init(mode: .readWrite))
        try editor.execute("DELETE FROM ZCHAPTER WHERE Z_PK > 150")
        try editor.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 5000 WHERE Z_NAME = 'Chapter'")
        try editor.close()
        let output = directory.appendingPathComponent("Out.sqlite").path
        let outcome = try TernProcess.run(["migrate", path, "--model", library, "--out", output, "--progress", "none"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(try SQLiteShell.run(output, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Chapter';") == "5000\n")
    }

    @Test("a store with a dangling reference: tern check lists it, tern migrate refuses it (exit 65) naming table, count and key, and writes nothing")
    func anomalies() throws {
        let path = try store()
        let editor = try Connection(path: path, configuration: .init(mode: .readWrite))
        try editor.execute("UPDATE ZPAGE SET ZBOOK = 4242 WHERE Z_PK = 9")
        try editor.close()
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let check = try TernProcess.run(["check", path, "--model", Self.bookStore])
        #expect(check.status == 3)
        #expect(check.standardOutput.contains("ZPAGE.ZBOOK: 1 row referring to a Book that does not exist (first: Z_PK 9)"), "\(check.standardOutput)")
        let outcome = try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--progress", "none"])
        #expect(outcome.status == 65)
        #expect(outcome.standardError.contains("ZPAGE.ZBOOK: 1 row referring to a Book that does not exist (first: Z_PK 9)"), "\(outcome.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)
    }

    @Test("--progress json into a pipe whose reader goes away: stopped at a batch boundary, exit 75 with a message, --resume finishes")
    func closedPipe() throws {
        let path = directory.appendingPathComponent("Many.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", Self.bookStore, "--version", "BookStore 1", "--rows", "3000", path]).status == 0)
        let output = directory.appendingPathComponent("out.sqlite").path
        let arguments = ["migrate", path, "--model", Self.bookStore, "--out", output, "--batch-size", "10", "--progress", "json"]
        let standardOutput = Pipe()
        let standardError = Pipe()
        let process = try TernProcess.launch(arguments, standardOutput: standardOutput, standardError: standardError)
        // Read two lines, then go away as `head -2` does.
        var read = Data()
        while read.filter({ $0 == UInt8(ascii: "\n") }).count < 2 {
            let chunk = standardOutput.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            read += chunk
        }
        try standardOutput.fileHandleForReading.close()
        let message = String(decoding: standardError.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 75, "\(message)")
        #expect(message.contains("standard output was closed"), "\(message)")
        let resumed = try TernProcess.run(arguments.dropLast(2) + ["--progress", "none", "--resume"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(try TernProcess.run(["check", output, "--model", Self.bookStore]).status == 0)
    }

    @Test("errors name the file and the fix: a directory, a file that is not SQLite, a truncated store (65), --out into a missing directory (66)")
    func inputErrors() throws {
        let path = try store()
        let garbage = directory.appendingPathComponent("garbage.sqlite").path
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: garbage))
        let truncated = directory.appendingPathComponent("truncated.sqlite").path
        try Data(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(3000)).write(to: URL(fileURLWithPath: truncated))
        for (store, message) in [
            (directory.path, "is a directory, not a store file"), (garbage, "is not an SQLite database"),
            (truncated, "damaged, or not an SQLite database"),
        ] {
            for command in [
                ["check", store, "--model", Self.bookStore], ["plan", store, "--model", Self.bookStore],
                ["migrate", store, "--model", Self.bookStore, "--out", directory.appendingPathComponent("o.sqlite").path],
            ] {
                let outcome = try TernProcess.run(command)
                #expect(outcome.status == 65, "\(command): \(outcome.standardError)")
                #expect(outcome.standardError.contains("\(store): \(message)"), "\(command): \(outcome.standardError)")
            }
        }
        let missing = directory.appendingPathComponent("no/such").path
        let outcome = try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--out", missing + "/o.sqlite", "--progress", "none"])
        #expect(outcome.status == 66)
        #expect(outcome.standardError.contains("\(missing): the directory for --out does not exist"), "\(outcome.standardError)")
    }

    @Test("one tern per store: a second migrate, --resume or --restart while one runs exits 8 naming its pid; after a SIGKILL the lock is taken over")
    func oneTernPerStore() throws {
        let path = directory.appendingPathComponent("Busy.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", Self.bookStore, "--version", "BookStore 1", "--rows", "20000", path]).status == 0)
        let output = directory.appendingPathComponent("busy-out.sqlite").path
        let arguments = ["migrate", path, "--model", Self.bookStore, "--out", output, "--batch-size", "3", "--progress", "none"]
        let first = try TernProcess.launch(arguments, standardOutput: FileHandle.nullDevice, standardError: FileHandle.nullDevice)
        let lock = directory.appendingPathComponent(".busy-out.sqlite.tern-lock").path
        Latch.until(timeout: 20) { ((try? String(contentsOfFile: lock, encoding: .utf8)) ?? "").contains("pid") }
        for extra in [[], ["--resume"], ["--restart"]] {
            let second = try TernProcess.run(arguments + extra)
            #expect(second.status == 8, "\(extra): \(second.standardError)")
            #expect(second.standardError.contains("in use by another tern migration (pid \(first.processIdentifier) on "), "\(second.standardError)")
        }
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let resumed = try TernProcess.run(arguments + ["--resume"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(!FileManager.default.fileExists(atPath: lock))
    }

    @Test("--report FILE.svg draws resident memory and objects/s over the run, each pass and stage marked; a name without .svg is refused (64)")
    func memoryReport() throws {
        let path = try store()
        let chart = directory.appendingPathComponent("run.svg").path
        let outcome = try TernProcess.run([
            "migrate", path, "--model", Self.bookStore, "--out", directory.appendingPathComponent("o.sqlite").path, "--in-swift", "--progress", "none",
            "--report", chart,
        ])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        // Where each mapping in Swift spent its time: the writer's share says whether more workers help.
        #expect(
            outcome.standardOutput.range(
                of: #"in Swift: [0-9.]+ s; the writer busy [0-9.]+ s \([0-9]+%\), the policy on [0-9]+ workers? [0-9.]+ s in all"#, options: .regularExpression)
                != nil,
            "\(outcome.standardOutput)")
        let svg = try SVGFile(chart)
        #expect(svg.count(of: "polyline") == 2)
        for label in ["step 1 pass 1", "step 3 pass 1", "verifying", "indexing", "objects written per second"] {
            #expect(svg.texts.contains(label), "missing \(label): \(svg.texts)")
        }
        #expect(try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--report", directory.appendingPathComponent("run.html").path]).status == 64)
    }

    @Test("migrates in place, keeps NAME~.sqlite, and says which steps ran as schema changes")
    func inPlace() throws {
        let path = try store()
        // Step by step: BookStore 1 → 2 alone runs in place (inferred 1 → 3, it is copied once).
        let outcome = try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--step-by-step"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardOutput.contains("applied in place as schema changes, without reading rows"))
        #expect(outcome.standardOutput.contains("the original is kept as \(directory.appendingPathComponent("Books~.sqlite").path)"))
        #expect(try TernProcess.run(["check", path, "--model", Self.bookStore]).status == 0)
    }

    @Test("exit 73 when --out exists, 4 for a store of another model, 6 for objects that break the model's rules")
    func failures() throws {
        let path = try store()
        let taken = directory.appendingPathComponent("taken.sqlite").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: taken))
        #expect(try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--out", taken]).status == 73)
        let other = "\(CheckAndGenerateCommandTests.fixtures)/hwaxxer__BookMigration/BookMigration/Model.xcdatamodeld"
        #expect(try TernProcess.run(["migrate", path, "--model", other, "--dry-run"]).status == 4)
        let broken = try store("Broken.sqlite")
        // An empty title breaks BookStore's minimum length.
        try Connection(path: broken).execute("UPDATE ZBOOK SET ZTITLE = '' WHERE Z_PK = 2")
        let outcome = try TernProcess.run(["migrate", broken, "--model", Self.bookStore])
        #expect(outcome.status == 6)
        #expect(outcome.standardError.contains("Publication 2: title is shorter than 1"))
        #expect(outcome.standardError.contains("the original store is untouched"))
    }

    @Test("--out never takes an existing store as its own (73), not even one whose metadata names this run's inputs (then it says so)")
    func resumeNeverAdoptsAnOutput() throws {
        let path = try store()
        let output = directory.appendingPathComponent("Out.sqlite").path
        #expect(try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--out", output]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: output))
        // Someone else's store at the target version (here: another source's output) is not this run's.
        let other = try store("Other.sqlite")
        let refused = try TernProcess.run(["migrate", other, "--model", Self.bookStore, "--out", output, "--resume"])
        #expect(refused.status == 73)
        #expect(refused.standardError.contains("\(output): already exists"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == before)
        // Its own output (as if killed after the record went): said so, still not taken as its own.
        let finished = try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--out", output, "--resume"])
        #expect(finished.status == 73)
        #expect(finished.standardError.contains("its metadata says an earlier run migrated it from these very inputs"), "\(finished.standardError)")
        #expect(try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--out", output]).status == 73)
        // The same source changed since: no longer its output.
        try Connection(path: path).execute("UPDATE ZBOOK SET ZTITLE = 'edited' WHERE Z_PK = 1")
        #expect(try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--out", output, "--resume"]).status == 73)
        let halfway = directory.appendingPathComponent("Halfway.sqlite").path
        #expect(try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--to", "BookStore 2", "--out", halfway]).status == 0)
        #expect(try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--out", halfway, "--resume"]).status == 73)
    }

    @Test("--progress json: one object per line, the fraction never goes back and ends at 1, and the last line lists every pass with its peak memory")
    func jsonProgress() throws {
        let path = try store()
        let outcome = try TernProcess.run([
            "migrate", path, "--model", Self.bookStore, "--out", directory.appendingPathComponent("Out.sqlite").path,
            "--progress", "json", "--batch-size", "7",
        ])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let lines = try outcome.standardOutput.split(separator: "\n").map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        let events = lines.compactMap { $0["event"] as? String }
        #expect(events.count == lines.count)
        #expect(events.first == "started")
        #expect(events.last == "finished")
        #expect(events.filter { $0 == "batchCommitted" }.count >= 3 * 50 / 7)
        let fractions = lines.compactMap { $0["fraction"] as? Double }
        #expect(fractions == fractions.sorted())
        #expect(fractions.last == 1)
        let passes = try #require(lines.last?["passes"] as? [[String: Any]])
        #expect(passes.count == 3)
        for pass in passes {
            let report = try #require(pass["report"] as? [String: Any])
            #expect((report["peakResidentMemory"] as? Int ?? 0) > 1_000_000)
            #expect((report["objects"] as? Int) == 150)
        }
    }

    @Test("tern plan: counted rows and batches per pass, SQL or Swift per property, schema changes for in-place steps; writes nothing")
    func plan() throws {
        let path = try store()
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let direct = try TernProcess.run(["plan", path, "--model", Self.bookStore])
        #expect(direct.standardOutput.contains("Step 1, BookStore 1 → BookStore 3 (inferred mapping: the store is copied once):"), "\(direct.standardOutput)")
        #expect(direct.standardOutput.contains("Route: the app's mapping models that lie on the way"))
        let text = try TernProcess.run(["plan", path, "--model", Self.bookStore, "--batch-size", "20", "--step-by-step"])
        #expect(text.status == 0, "\(text.standardError)")
        // A column added between others: the table is rebuilt in Core Data's column order.
        #expect(
            text.standardOutput.contains(
                "INSERT INTO \"tern_rebuilt_ZBOOK\" SELECT \"Z_PK\", \"Z_ENT\", \"Z_OPT\", \"ZCATEGORY\", \"ZPRICE\", NULL, \"ZTITLE\" FROM \"ZBOOK\""),
            "\(text.standardOutput)")
        #expect(text.standardOutput.contains("PublicationToPublication [custom] Publication → Publication: about 50 rows, 3 batches, in Swift"))
        let json = try TernProcess.run(["plan", path, "--model", Self.bookStore, "--json", "--step-by-step"])
        let estimate = try #require(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let steps = try #require(estimate["steps"] as? [[String: Any]])
        #expect(steps.count == 4)
        #expect(steps[0]["schemaChanges"] != nil)
        let passes = try #require(steps[2]["passes"] as? [[String: Any]])
        let mappings = try #require(passes.first?["entityMappings"] as? [[String: Any]])
        #expect(mappings.map { $0["runsIn"] as? String } == ["SQL", "Swift", "SQL"])
        #expect(mappings.map { $0["rows"] as? Int } == [50, 50, 50])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)
    }
}
