import Foundation
import Testing
import TernCommands

/// `TernCommandLine.run`: a command run inside the calling process returns the status `tern`
/// would exit with and what it printed, and never exits or touches the process's streams.
@Suite("tern commands run in-process")
struct InProcessCommandTests {
    /// Removed with the suite's instance, whatever the test did.
    let scratch: ScratchFolder
    var directory: URL { scratch.url }

    init() throws {
        scratch = try ScratchFolder("tern-inprocess")
    }

    private func store(_ version: String) -> String {
        let path = directory.appendingPathComponent("\(version).sqlite").path
        let generated = TernCommandLine.run(["generate", "--model", CheckAndGenerateCommandTests.bookStore, "--version", version, "--rows", "40", path])
        #expect(generated.status == 0, "\(generated.errors)")
        return path
    }

    @Test("check, migrate with JSON progress, check again: the statuses and output the process gives")
    func migrate() throws {
        let path = store("BookStore 1")
        let before = TernCommandLine.run(["check", path, "--model", CheckAndGenerateCommandTests.bookStore])
        #expect(before.status == 3)
        #expect(before.output.hasPrefix("migration needed: the store was written by BookStore 1"), "\(before.output)")

        let output = directory.appendingPathComponent("Out.sqlite").path
        let migrated = TernCommandLine.run(["migrate", path, "--model", CheckAndGenerateCommandTests.bookStore, "--out", output, "--progress", "json"])
        #expect(migrated.status == 0, "\(migrated.errors)")
        let lines = migrated.output.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.allSatisfy { $0 != nil }, "\(migrated.output)")
        #expect(lines.contains { $0?["event"] as? String == "batchCommitted" })

        let after = TernCommandLine.run(["check", output, "--model", CheckAndGenerateCommandTests.bookStore])
        #expect(after.status == 0)
        // The same command as a process prints the same.
        let process = try TernProcess.run(["check", output, "--model", CheckAndGenerateCommandTests.bookStore])
        #expect(process.standardOutput == after.output)
    }

    @Test("errors: the documented status and the message on the error stream; usage errors and --help as ArgumentParser gives them")
    func errors() {
        let missing = TernCommandLine.run(["inspect", "/nonexistent/Store.sqlite"])
        #expect(missing.status == 66)
        #expect(missing.errors == "tern: error: /nonexistent/Store.sqlite: no such store\n")
        #expect(missing.output.isEmpty)

        let usage = TernCommandLine.run(["migrate"])
        #expect(usage.status == 64)
        #expect(usage.errors.contains("Missing expected argument"), "\(usage.errors)")

        let help = TernCommandLine.run(["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("USAGE: tern <subcommand>"), "\(help.output)")
    }

    @Test("two migrations at once on two threads keep their output apart")
    func concurrent() async throws {
        let first = store("BookStore 1"), second = store("BookStore 2")
        let outputs = [first, second].map { _ in directory.appendingPathComponent("\(UUID().uuidString).sqlite").path }
        async let one = Task.detached {
            TernCommandLine.run(["migrate", first, "--model", CheckAndGenerateCommandTests.bookStore, "--out", outputs[0], "--progress", "none"])
        }.value
        async let two = Task.detached {
            TernCommandLine.run(["migrate", second, "--model", CheckAndGenerateCommandTests.bookStore, "--out", outputs[1], "--progress", "none"])
        }.value
        let (a, b) = await (one, two)
        #expect(a.status == 0 && b.status == 0, "\(a.errors) \(b.errors)")
        #expect(
            a.output.contains("BookStore 1 → BookStore 3") && b.output.contains("BookStore 2 → BookStore 3") && !b.output.contains("BookStore 1 →"),
            "\(a.output)\n---\n\(b.output)")
    }
}
