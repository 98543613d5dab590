import Foundation
import TernCommands
import Testing
import TernLoop
import TernSQLite

/// Stores other processes use or change while (or between) tern runs: a second real process
/// (`sqlite3`) opens the store and commits, tern is paused with SIGSTOP or killed with SIGKILL at
/// a known point of its progress, and what is left on disk is checked.
@Suite("Stores in use, stores that change, stores that are not what they seem")
struct StoreInUseTests {
    static let bookStore = CheckAndGenerateCommandTests.bookStore
    /// Removed with the suite's instance, whatever the test did.
    let scratch: ScratchFolder
    var directory: URL { scratch.url }

    init() throws {
        scratch = try ScratchFolder("tern-in-use")
    }

    private func store(_ name: String = "Books.sqlite", rows: Int = 50) throws -> String {
        let path = directory.appendingPathComponent(name).path
        #expect(try TernProcess.run(["generate", "--model", Self.bookStore, "--version", "BookStore 1", "--rows", "\(rows)", path]).status == 0)
        return path
    }

    private func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    @Test("a writer commits during an in-place migration: exit 9 naming the table, nothing swapped, the committed row kept, nothing left behind")
    func writerDuringInPlaceMigration() throws {
        let path = try store(rows: 3000)
        let before = try files()
        // One worker: the start digest is read before the pass, so the commit lands after it
        // (StartChecksTests put one beside the pass).
        let run = try PausedTern(
            ["migrate", path, "--model", Self.bookStore, "--batch-size", "10", "--workers", "1", "--progress", "json"], pausedAt: "\"stepStarted\"")
        try SQLiteShell.run(path, "INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZPRICE) VALUES (90001, 1, 1, 'committed meanwhile', 1.5);")
        let outcome = run.resume()
        #expect(outcome.status == 9, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("\(path): the store changed while it was being migrated"), "\(outcome.standardError)")
        #expect(outcome.standardError.contains("ZBOOK: 3000 rows then, 3001 now"), "\(outcome.standardError)")
        #expect(try files() == before)
        #expect(try TernProcess.run(["check", path, "--model", Self.bookStore]).standardOutput.contains("BookStore 1"))
        #expect(try SQLiteShell.run(path, "SELECT ZTITLE FROM ZBOOK WHERE Z_PK = 90001;") == "committed meanwhile\n")
    }

    @Test(
        "in place, with --out, and with --out from a WAL store nobody has open: unchanged since the start, the source is proved so (SQLite's commit counter, or its main file and empty -wal), not read again; a commit that changed nothing is read and passes; one that changed a row is refused (9)",
        arguments: ["in place", "rollback journal", "WAL at rest"])
    func commitsCountedThenCompared(kind: String) throws {
        let inPlace = kind == "in place"
        let path = try store(rows: 3000)
        if kind == "rollback journal" { try SQLiteShell.run(path, "PRAGMA journal_mode = DELETE;") }
        // A main file proves nothing until it has been still for a while (a write in the same
        // tick of the file system's clock would leave the same times).
        let environment = kind == "WAL at rest" ? Self.atRest : [:]
        #expect(FileManager.default.fileExists(atPath: path + "-shm") == false, "a generated store is at rest")
        let reference = directory.appendingPathComponent("reference.sqlite").path
        #expect(try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--out", reference, "--progress", "none"]).status == 0)
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        func migrate(_ name: String, committing sql: String?) throws -> (status: Int32, digests: Int, output: String) {
            let output = inPlace ? path : directory.appendingPathComponent(name).path
            // One worker: the start digest is read before the pass, and the commit lands after it,
            // where the run holds no lock (a rollback journal's reader would block the commit).
            let arguments =
                ["migrate", path, "--model", Self.bookStore, "--batch-size", "10", "--workers", "1", "--log-level", "info"]
                + (inPlace ? [] : ["--out", output])
            let run = try PausedTern(arguments + ["--progress", "json"], stoppedAt: "start-checks-ended", environment: environment)
            if let sql { try SQLiteShell.run(path, sql) }
            let outcome = run.resume()
            return (outcome.status, outcome.standardError.components(separatedBy: "read the source's digest").count - 1, output)
        }
        func restore() throws {
            guard inPlace else { return }
            for file in try files() where file != "reference.sqlite" { try FileManager.default.removeItem(atPath: directory.appendingPathComponent(file).path) }
            try original.write(to: URL(fileURLWithPath: path))
        }

        let untouched = try migrate("untouched.sqlite", committing: nil)
        #expect(untouched.status == 0 && untouched.digests == 1, "\(untouched.status) \(untouched.digests)")
        #expect(try StoreDump.lines(untouched.output) == StoreDump.lines(reference))
        try restore()
        // Two commits that undo each other (SQLite skips a write of the same bytes altogether).
        let sameContent = try migrate(
            "same.sqlite",
            committing: "INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES (90001, 1, 1, 'briefly'); DELETE FROM ZBOOK WHERE Z_PK = 90001;")
        #expect(sameContent.status == 0 && sameContent.digests == 2, "\(sameContent.status) \(sameContent.digests)")
        #expect(try StoreDump.lines(sameContent.output) == StoreDump.lines(reference))
        try restore()
        let changed = try migrate("changed.sqlite", committing: "UPDATE ZBOOK SET ZTITLE = 'edited meanwhile' WHERE Z_PK = 1;")
        #expect(changed.status == 9 && changed.digests == 2, "\(changed.status) \(changed.digests)")
        #expect(try TernProcess.run(["check", path, "--model", Self.bookStore]).standardOutput.contains("BookStore 1"))
    }

    /// A `tern` whose wall clock runs 10 s ahead (`TERN_CLOCK_SHIFT`, debug builds): a store
    /// written a moment ago is as still to it as one at rest, more than the 2 whole seconds of
    /// its clock a file state needs to prove anything — without the test waiting them out.
    static let atRest = ["TERN_CLOCK_SHIFT": "10"]

    @Test(
        "a resumed run whose source is still the file it began with (unwritten for a while, no -wal frames) takes the recorded digest without reading it; a source written since is read, and refused when it changed"
    )
    func resumeTrustsAStillSource() throws {
        let path = try store(rows: 3000)
        let reference = directory.appendingPathComponent("reference.sqlite").path
        #expect(try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--out", reference, "--progress", "none"]).status == 0)
        let output = directory.appendingPathComponent("out.sqlite").path
        // One worker: the record, digest and all, is written before the first batch.
        let arguments = ["migrate", path, "--model", Self.bookStore, "--out", output, "--batch-size", "10", "--workers", "1", "--log-level", "info"]
        func killedThenResumed(committing sql: String?) throws -> (outcome: TernProcess.Outcome, digests: Int) {
            try PausedTern(arguments + ["--progress", "json"], pausedAt: "\"batchCommitted\"", environment: Self.atRest).kill()
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(".out.sqlite.tern-migration.json").path))
            if let sql { try SQLiteShell.run(path, sql) }
            let outcome = try TernProcess.run(arguments + ["--resume", "--progress", "none"], environment: Self.atRest)
            return (outcome, outcome.standardError.components(separatedBy: "read the source's digest").count - 1)
        }

        let still = try killedThenResumed(committing: nil)
        #expect(still.outcome.status == 0 && still.digests == 0, "\(still.outcome.standardError)")
        #expect(still.outcome.standardError.contains("the source is the file the run began with, unchanged"))
        #expect(try StoreDump.lines(output) == StoreDump.lines(reference))
        try FileManager.default.removeItem(atPath: output)

        let changed = try killedThenResumed(committing: "UPDATE ZBOOK SET ZTITLE = 'edited meanwhile' WHERE Z_PK = 1;")
        #expect(changed.outcome.status != 0 && changed.digests == 1, "\(changed.outcome.standardError)")
        #expect(changed.outcome.standardError.contains("the source store changed"), "\(changed.outcome.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test("an app holds the store open: in place is refused (8, naming its pid) before any work and again before the swap; --resume finishes once it quits")
    func appHoldsTheStoreOpen() throws {
        let path = try store(rows: 3000)
        let before = try files()
        var app = try SQLiteShell(holdingOpen: path)
        let refused = try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--progress", "none"])
        #expect(refused.status == 8, "\(refused.standardError)")
        #expect(refused.standardError.contains("open in another process (pid \(app.processIdentifier) (sqlite3))"), "\(refused.standardError)")
        #expect(try files().filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") } == before)
        app.quit()

        // The app opens the store while tern works, and only reads: the migrated store waits.
        let arguments = ["migrate", path, "--model", Self.bookStore, "--batch-size", "10"]
        let run = try PausedTern(arguments + ["--progress", "json"], pausedAt: "\"stepStarted\"")
        app = try SQLiteShell(holdingOpen: path)
        let waiting = run.resume()
        #expect(waiting.status == 8, "\(waiting.standardError)")
        #expect(waiting.standardError.contains("with --resume"), "\(waiting.standardError)")
        #expect(try TernProcess.run(["check", path, "--model", Self.bookStore]).standardOutput.contains("BookStore 1"))
        app.quit()
        let resumed = try TernProcess.run(arguments + ["--resume", "--progress", "none"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(try TernProcess.run(["check", path, "--model", Self.bookStore]).status == 0)
    }

    /// A rollback-journal store's writer locks readers out while it commits; SQLite makes tern
    /// wait for it (5 s). Held briefly, the run waits and finishes; held longer, it is an I/O
    /// failure (74) naming the file and the lock, never a result, and running again finishes.
    @Test(
        "another program locks a rollback-journal source at the start or at delivery: briefly, tern waits and finishes; for longer than it waits, 74 naming the file and the lock, and running again finishes",
        arguments: [("start", 1.5), ("start", 8), ("delivery", 1.5), ("delivery", 8)])
    func sourceLockedByAnotherProgram(at point: String, seconds: Double) throws {
        let path = try store(rows: 3000)
        try SQLiteShell.run(path, "PRAGMA journal_mode = DELETE;")
        let reference = directory.appendingPathComponent("reference.sqlite").path
        #expect(try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--out", reference, "--progress", "none"]).status == 0)
        let output = directory.appendingPathComponent("out.sqlite").path
        let arguments = ["migrate", path, "--model", Self.bookStore, "--out", output, "--batch-size", "10", "--in-swift"]
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        // At the start the lock is taken before tern runs; at delivery, while it is paused before its last step.
        let run = point == "delivery" ? try PausedTern(arguments + ["--progress", "json"], pausedAt: "\"step\":3,") : nil
        let writer = try SQLiteShell(holdingOpen: path)
        writer.send("BEGIN EXCLUSIVE; SELECT 'locked';", waitingFor: "locked")
        let errors = Pipe()
        let tern = try run?.process ?? TernProcess.launch(arguments + ["--progress", "none"], standardOutput: FileHandle.nullDevice, standardError: errors)
        kill(tern.processIdentifier, SIGCONT)
        Latch.pause(seconds: seconds)  // the app's transaction, held that long
        writer.send("ROLLBACK; SELECT 'free';", waitingFor: "free")
        writer.quit()
        let status: Int32
        var said = ""
        if let run {
            let outcome = run.resume()
            status = outcome.status
            said = outcome.standardError
        } else {
            tern.waitUntilExit()
            status = tern.terminationStatus
            said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the source changed")
        if seconds < 5 {
            #expect(status == 0, "\(said)")
        } else {
            #expect(status == 74, "\(said)")
            #expect(!FileManager.default.fileExists(atPath: output), "delivered while the source was locked")
            let named = run != nil ? "database is locked in \(path)" : "another program holds a lock on it"
            #expect(said.contains(path) && said.contains(named) && said.contains(run != nil ? "--resume" : "run again"), "\(said)")
            let again = try TernProcess.run(arguments + ["--progress", "none"] + (run != nil ? ["--resume"] : []))
            #expect(again.status == 0, "\(again.standardError)")
        }
        #expect(try StoreDump.lines(output) == StoreDump.lines(reference))
    }

    @Test(
        "a source changed between a kill and --resume is refused (65) naming what changed, for every kind of change, with --out and in place; --restart migrates it as it is",
        arguments: [
            ("UPDATE ZBOOK SET ZTITLE = 'edited' WHERE Z_PK = 1;", "ZBOOK: values changed (3000 rows)"),
            ("DELETE FROM ZPAGE WHERE Z_PK <= 1000;", "ZPAGE: 3000 rows then, 2000 now"),
            // A row added without raising Z_PRIMARYKEY.Z_MAX.
            ("INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZPRICE) VALUES (90001, 1, 1, 'appended', 1.5);", "ZBOOK: 3000 rows then, 3001 now"),
        ])
    func changedBeforeResume(edit: String, named: String) throws {
        for inPlace in [false, true] {
            let path = try store("Books-\(inPlace).sqlite", rows: 3000)
            let output = directory.appendingPathComponent("Out-\(inPlace).sqlite").path
            let arguments = ["migrate", path, "--model", Self.bookStore, "--batch-size", "10"] + (inPlace ? [] : ["--out", output])
            let run = try PausedTern(arguments + ["--progress", "json"], pausedAt: "\"passFinished\"")
            run.kill()
            try SQLiteShell.run(path, edit)
            let refused = try TernProcess.run(arguments + ["--resume", "--progress", "none"])
            #expect(refused.status == 65, "\(refused.standardError)")
            #expect(refused.standardError.contains("the source store changed: \(named)"), "\(refused.standardError)")
            #expect(refused.standardError.contains("--restart"), "\(refused.standardError)")
            let restarted = try TernProcess.run(arguments + ["--restart", "--progress", "none"])
            #expect(restarted.status == 0, "\(restarted.standardError)")
            let migrated = inPlace ? path : output
            let books = try SQLiteShell.run(migrated, "SELECT count(*) FROM ZPUBLICATION;")
            let expected = try SQLiteShell.run(inPlace ? StoreMigrationPaths.backup(path) : path, "SELECT count(*) FROM ZBOOK;")
            #expect(books == expected)
        }
    }

    @Test(
        "a hot journal left by a writer that crashed: check, plan and migrate refuse it (65) naming the journal and the fix; once rolled back, the migration runs"
    )
    func hotJournal() throws {
        let path = try store(rows: 2000)
        try SQLiteShell.run(path, "PRAGMA journal_mode = delete;")
        let writer = try SQLiteShell(holdingOpen: path)
        // A cache of one page spills the half-done update into the store: the journal is hot.
        writer.send("PRAGMA cache_size = 1; BEGIN; UPDATE ZPAGE SET ZTEXT = ZTEXT || 'half-written'; SELECT 'spilled';", waitingFor: "spilled")
        writer.crash()
        #expect(FileManager.default.fileExists(atPath: path + "-journal"))
        for command in [
            ["check", path, "--model", Self.bookStore], ["plan", path, "--model", Self.bookStore],
            ["migrate", path, "--model", Self.bookStore, "--progress", "none"],
        ] {
            let outcome = try TernProcess.run(command)
            #expect(outcome.status == 65, "\(command): \(outcome.standardError)")
            #expect(outcome.standardError.contains("\(path): has a hot journal (Books.sqlite-journal)"), "\(command): \(outcome.standardError)")
        }
        #expect(FileManager.default.fileExists(atPath: path + "-journal"))
        try SQLiteShell.run(path, "PRAGMA quick_check;")
        #expect(try SQLiteShell.run(path, "SELECT count(*) FROM ZPAGE WHERE ZTEXT LIKE '%half-written';") == "0\n")
        #expect(try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--progress", "none"]).status == 0)
    }

    @Test("tern status after a kill: where each step stands, and a hint that keeps --out")
    func statusAfterKill() throws {
        let path = try store(rows: 3000)
        let output = directory.appendingPathComponent("Out.sqlite").path
        try PausedTern(
            ["migrate", path, "--model", Self.bookStore, "--out", output, "--batch-size", "10", "--progress", "json"], pausedAt: "\"batchCommitted\""
        ).kill()
        let status = try TernProcess.run(["status", path, "--out", output])
        #expect(status.status == 0, "\(status.standardError)")
        #expect(status.standardOutput.contains("An unfinished migration of \(path) to BookStore 5"), "\(status.standardOutput)")
        #expect(status.standardOutput.contains("Continue with: tern migrate \(path) --out \(output) --resume"), "\(status.standardOutput)")

        // A damaged checkpoint is an error that says so, not a crash.
        try SQLiteShell.run(
            directory.appendingPathComponent(".Out.sqlite.tern-step1.sqlite").path,
            """
            CREATE TABLE IF NOT EXISTS TERN_PROGRESS (unit TEXT PRIMARY KEY, last_key INTEGER NOT NULL, count INTEGER NOT NULL, done INTEGER NOT NULL);
            INSERT INTO TERN_PROGRESS VALUES ('create:one', 0, 0, 0);
            """)
        let damaged = try TernProcess.run(["status", path, "--out", output])
        #expect(damaged.status == 65, "\(damaged.standardError)")
        #expect(damaged.standardError.contains("the migration's checkpoint is damaged: 'create:one' is not a unit of work"), "\(damaged.standardError)")
    }

    @Test(
        "SIGINT while a step verifies or builds its indexes stops within a second (75), before the step finishes; --resume completes it",
        arguments: ["verifying", "indexing"])
    func interruptLongStatement(stage: String) throws {
        let path = try store(rows: 20000)
        let output = directory.appendingPathComponent("Out.sqlite").path
        // With a second worker the indexes are built beside verification (the verifying case
        // stops both) and little is left for the indexing stage; on one worker it builds them.
        let arguments = ["migrate", path, "--model", Self.bookStore, "--out", output] + (stage == "indexing" ? ["--workers", "1"] : [])
        let run = try PausedTern(arguments + ["--progress", "json"], pausedAt: "\"stage\":\"\(stage)\"")
        let (seconds, outcome) = run.resume(after: SIGINT)
        #expect(outcome.status == 75, "\(outcome.standardError)")
        #expect(seconds < 1, "took \(seconds) s to stop")
        // Stopped inside the stage: the step never got to its next stage or its end.
        #expect(!outcome.standardOutput.contains("stepFinished"), "\(outcome.standardOutput)")
        let resumed = try TernProcess.run(arguments + ["--resume", "--progress", "none"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(try TernProcess.run(["check", output, "--model", Self.bookStore]).status == 0)
    }

    @Test(
        "a full disk: exit 74 naming the directory, the hidden files that hold the work and --resume; with space again, --resume finishes",
        .enabled(if: getuid() == 0, "mounting a small filesystem needs root"))
    func fullDisk() throws {
        let path = try store(rows: 20000)
        let small = directory.appendingPathComponent("small")
        try FileManager.default.createDirectory(at: small, withIntermediateDirectories: true)
        #expect(Self.succeeds("/bin/mount", ["-t", "tmpfs", "-o", "size=400k", "tmpfs", small.path]))
        defer { _ = Self.succeeds("/bin/umount", [small.path]) }
        let output = small.appendingPathComponent("Out.sqlite").path
        let arguments = ["migrate", path, "--model", Self.bookStore, "--out", output, "--progress", "none"]
        let full = try TernProcess.run(arguments)
        #expect(full.status == 74, "\(full.standardError)")
        #expect(
            full.standardError.contains("\(small.path): the disk is full. The work so far is kept there in hidden files (.Out.sqlite.tern-migration.json"),
            "\(full.standardError)")
        #expect(full.standardError.contains(".Out.sqlite.tern-step1.sqlite"), "\(full.standardError)")
        #expect(full.standardError.contains("--resume"), "\(full.standardError)")
        #expect(Self.succeeds("/bin/mount", ["-o", "remount,size=64m", small.path]))
        let resumed = try TernProcess.run(arguments + ["--resume"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(try TernProcess.run(["check", output, "--model", Self.bookStore]).status == 0)
    }

    @Test(
        "a full disk when external data is decoded into the store: the space a step needs counts the external files, not only the small store",
        .enabled(if: getuid() == 0, "mounting a small filesystem needs root"))
    func fullDiskCountsExternalData() throws {
        let attachments = Self.bookStore.replacingOccurrences(of: "configs/bookstore", with: "configs/attachments")
        let path = directory.appendingPathComponent("Docs.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", attachments, "--version", "Attachments 1", "--rows", "300", path]).status == 0)
        let small = directory.appendingPathComponent("tiny")
        try FileManager.default.createDirectory(at: small, withIntermediateDirectories: true)
        #expect(Self.succeeds("/bin/mount", ["-t", "tmpfs", "-o", "size=300k", "tmpfs", small.path]))
        defer { _ = Self.succeeds("/bin/umount", [small.path]) }
        let full = try TernProcess.run([
            "migrate", path, "--model", attachments, "--out", small.appendingPathComponent("Out.sqlite").path, "--progress", "none",
        ])
        #expect(full.status == 74, "\(full.standardError)")
        #expect(full.standardError.contains("the disk is full") && full.standardError.contains("MiB of external data files"), "\(full.standardError)")
    }

    private static func succeeds(_ program: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    @Test("x.sqlite and x.db in one directory keep their own step files: a fresh run of one never takes over the other's unfinished work")
    func storesWithOneBaseName() throws {
        let first = try store("x.sqlite", rows: 3000)
        let second = try store("x.db", rows: 3000)
        try SQLiteShell.run(second, "UPDATE ZBOOK SET ZTITLE = 'from x.db';")
        let arguments = ["--model", Self.bookStore, "--batch-size", "10"]
        try PausedTern(["migrate", first] + arguments + ["--progress", "json"], pausedAt: "\"passFinished\"").kill()
        #expect(try TernProcess.run(["migrate", second] + arguments + ["--progress", "none"]).status == 0)
        let resumed = try TernProcess.run(["migrate", first] + arguments + ["--resume", "--progress", "none"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(try SQLiteShell.run(first, "SELECT count(*) FROM ZPUBLICATION WHERE ZTITLE = 'from x.db';") == "0\n")
    }

    @Test("a file put at --out while the migration runs is never replaced (73); moved away, --resume delivers")
    func outputAppearsMidRun() throws {
        let path = try store(rows: 3000)
        let output = directory.appendingPathComponent("Out.sqlite").path
        let arguments = ["migrate", path, "--model", Self.bookStore, "--out", output, "--batch-size", "10"]
        let run = try PausedTern(arguments + ["--progress", "json"], pausedAt: "\"stepStarted\"")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: output))
        let blocked = run.resume()
        #expect(blocked.status == 73, "\(blocked.standardError)")
        #expect(blocked.standardError.contains("\(output): appeared while the migration ran"), "\(blocked.standardError)")
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "precious")
        try FileManager.default.removeItem(atPath: output)
        let resumed = try TernProcess.run(arguments + ["--resume", "--progress", "none"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(try TernProcess.run(["check", output, "--model", Self.bookStore]).status == 0)
    }

    @Test("in place, the migrated store keeps the original's permissions and owner")
    func permissionsAndOwner() throws {
        let path = try store()
        chmod(path, 0o600)
        let nobody: uid_t = 65534
        let asRoot = getuid() == 0
        if asRoot { chown(path, nobody, gid_t(nobody)) }
        #expect(try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--progress", "none"]).status == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        if asRoot { #expect((attributes[.ownerAccountID] as? Int) == Int(nobody)) }
    }

    @Test("a symbolic link planted where the lock file goes is refused (74), its target untouched")
    func plantedLockLink() throws {
        let path = try store()
        let victim = directory.appendingPathComponent("victim.txt")
        try Data("important".utf8).write(to: victim)
        try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent(".Books.sqlite.tern-lock").path, withDestinationPath: victim.path)
        let outcome = try TernProcess.run(["migrate", path, "--model", Self.bookStore, "--progress", "none"])
        #expect(outcome.status == 74, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("it is a symbolic link"), "\(outcome.standardError)")
        #expect(try String(contentsOf: victim, encoding: .utf8) == "important")
    }

    @Test("a symbolic link to a store: the real store is migrated beside itself and the link leads to the migrated store; --out onto a link is refused")
    func symbolicLink() throws {
        let real = directory.appendingPathComponent("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let path = try store("real/data.sqlite")
        let link = directory.appendingPathComponent("link.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        let outcome = try TernProcess.run(["migrate", link, "--model", Self.bookStore, "--progress", "none"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == path)
        #expect(try TernProcess.run(["check", link, "--model", Self.bookStore]).status == 0)
        #expect(FileManager.default.fileExists(atPath: real.appendingPathComponent("data~.sqlite").path))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("link~.sqlite").path))

        let source = try store("Other.sqlite")
        let dangling = directory.appendingPathComponent("out-link.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: directory.appendingPathComponent("nowhere.sqlite").path)
        let refused = try TernProcess.run(["migrate", source, "--model", Self.bookStore, "--out", dangling, "--progress", "none"])
        #expect(refused.status == 65, "\(refused.standardError)")
        #expect(refused.standardError.contains("\(dangling): --out is a symbolic link"), "\(refused.standardError)")
    }
}

/// Where the default process keeps the original (the same rule as `StoreMigration.backupPath`).
enum StoreMigrationPaths {
    static func backup(_ path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().appendingPathComponent(url.deletingPathExtension().lastPathComponent + "~.sqlite").path
    }
}

/// A `tern` run stopped with SIGSTOP as soon as its progress prints a line containing a marker,
/// so a test can act at a known point and then let it go on (or kill it).
struct PausedTern {
    let process: Process
    private let standardOutput: Pipe
    private let standardError: Pipe
    /// What it printed after the pause, once it has ended.
    private let rest = DispatchGroup()
    private let restOfOutput = Collected()

    /// Bytes a background reader fills; read only after `rest` was waited for.
    private final class Collected: @unchecked Sendable {
        var data = Data()
    }

    init(_ arguments: [String], pausedAt marker: String, environment: [String: String] = [:]) throws {
        standardOutput = Pipe()
        standardError = Pipe()
        process = try TernProcess.launch(arguments, standardOutput: standardOutput, standardError: standardError, environment: environment)
        var read = Data()
        while !String(decoding: read, as: UTF8.self).contains(marker) {
            let chunk = standardOutput.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            read += chunk
        }
        Foundation.kill(process.processIdentifier, SIGSTOP)
        drainOutput()
    }

    /// Stopped by itself at the milestone named (`TERN_STOP_AT`, debug builds): exactly there, not
    /// wherever it got to after printing a line, so it holds no read lock a batch would.
    init(_ arguments: [String], stoppedAt milestone: String, environment: [String: String] = [:]) throws {
        standardOutput = Pipe()
        standardError = Pipe()
        process = try TernProcess.launch(
            arguments, standardOutput: standardOutput, standardError: standardError,
            environment: environment.merging(["TERN_STOP_AT": milestone]) { $1 })
        drainOutput()
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning, !Self.isStopped(process.processIdentifier), Date() < deadline { usleep(2000) }
    }

    /// The state letter of `/proc/PID/stat`, after the command name in parentheses: `T` when stopped.
    private static func isStopped(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
        return stat[close...].dropFirst().trimmingCharacters(in: .whitespaces).first == "T"
    }

    /// Drains what it prints from now on, so it never blocks on a full pipe.
    private func drainOutput() {
        let handle = standardOutput.fileHandleForReading
        let output = restOfOutput
        DispatchQueue.global().async(group: rest) {
            let data = handle.readDataToEndOfFile()
            output.data = data
        }
    }

    /// Sends `signal` and lets it go on; returns how long it took to end, and its outcome.
    func resume(after signal: Int32) -> (seconds: Double, outcome: TernProcess.Outcome) {
        Foundation.kill(process.processIdentifier, signal)
        let started = Date()
        let outcome = resume()
        return (Date().timeIntervalSince(started), outcome)
    }

    /// Lets it go on, and waits for it to end.
    func resume() -> TernProcess.Outcome {
        Foundation.kill(process.processIdentifier, SIGCONT)
        let errors = standardError.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        rest.wait()
        return TernProcess.Outcome(
            status: process.terminationStatus, standardOutput: String(decoding: restOfOutput.data, as: UTF8.self),
            standardError: String(decoding: errors, as: UTF8.self))
    }

    /// Ends it with SIGKILL where it stands.
    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// The `sqlite3` shell as another program using the store: one statement and out, or a session
/// that keeps its connection open until `quit()`.
struct SQLiteShell {
    private let process: Process
    private let input: Pipe
    private let output: Pipe
    var processIdentifier: Int32 { process.processIdentifier }

    /// Runs SQL in its own `sqlite3` process and returns what it printed.
    @discardableResult
    static func run(_ store: String, _ sql: String) throws -> String {
        let child = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [store, sql])
        #expect(child.status == 0, "sqlite3 \(sql): \(String(decoding: child.standardError, as: UTF8.self))")
        return String(decoding: child.standardOutput, as: UTF8.self)
    }

    /// Starts `sqlite3` on `store` and returns once its connection has read the store.
    init(holdingOpen store: String) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [store]
        input = Pipe()
        output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        send("SELECT 'open', count(*) FROM ZBOOK;", waitingFor: "open|")
    }

    /// Runs SQL in the session and returns once it printed `marker`.
    func send(_ sql: String, waitingFor marker: String) {
        input.fileHandleForWriting.write(Data((sql + "\n").utf8))
        var read = Data()
        while !String(decoding: read, as: UTF8.self).contains(marker) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            read += chunk
        }
    }

    /// Ends it with SIGKILL, as a crash would, in the middle of whatever it was doing.
    func crash() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Ends the session (its connection closes as a program's does when it quits).
    func quit() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
