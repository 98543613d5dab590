import Foundation
import TernCommands
import Testing

/// A store of mode 0600 — a user's private data on a shared server — stays private through its
/// migration: run as an unprivileged user with umask 022, nothing tern writes is readable by
/// anyone else, while it runs or after.
@Suite("Files tern writes get no more access than the store")
struct PermissionsTests {
    static let bookStore = CheckAndGenerateCommandTests.bookStore

    /// Runs `tern` as user `nobody` (when the tests run as root) with umask 022.
    private func runAsNobody(_ arguments: [String], environment: [String: String] = [:]) throws -> TernProcess.Outcome {
        let quoted = ([TernProcess.executable.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        // As root, as `nobody`; otherwise this user is unprivileged already.
        let shell = ["/bin/sh", "-c", "umask 022; exec \(quoted)"]
        let child =
            getuid() == 0
            ? try ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/setpriv"), ["--reuid=65534", "--regid=65534", "--clear-groups"] + shell, environment: environment)
            : try ChildProcess.run(URL(fileURLWithPath: shell[0]), Array(shell.dropFirst()), environment: environment)
        return TernProcess.Outcome(
            status: child.status, standardOutput: String(decoding: child.standardOutput, as: UTF8.self),
            standardError: String(decoding: child.standardError, as: UTF8.self))
    }

    /// Every file and directory under `directory` but `except`, with its mode.
    private func modes(under directory: String, except: Set<String>) throws -> [String: UInt16] {
        var found: [String: UInt16] = [:]
        let walker = FileManager.default.enumerator(atPath: directory)
        while let relative = walker?.nextObject() as? String {
            guard !except.contains(relative) else { continue }
            let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/" + relative)
            found[relative] = (attributes[.posixPermissions] as? NSNumber)?.uint16Value ?? 0
        }
        return found
    }

    @Test("as an unprivileged user, umask 022, a 0600 store: --out, a run killed mid-way and its resume, and in place leave nothing readable by others")
    func privateStoreStaysPrivate() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-perm-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = directory + "/private.sqlite"
        #expect(try TernProcess.run(["generate", "--model", Self.bookStore, "--version", "BookStore 1", "--rows", "50", store]).status == 0)
        if getuid() == 0 { for path in [directory, store] { _ = chown(path, 65534, 65534) } }
        _ = chmod(store, 0o600)
        let original: Set<String> = ["private.sqlite"]

        let out = directory + "/out.sqlite"
        let outcome = try runAsNobody(["migrate", store, "--model", Self.bookStore, "--out", out, "--progress", "none"])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        for (path, mode) in try modes(under: directory, except: original) {
            #expect(mode & 0o077 == 0, "\(path): \(String(mode, radix: 8))")
        }
        try FileManager.default.removeItem(atPath: out)

        // Killed after its first step: the work files left for --resume are private too.
        let killed = try runAsNobody(
            ["migrate", store, "--model", Self.bookStore, "--out", out, "--progress", "none"], environment: ["TERN_CRASH_AT": "step-committed"])
        #expect(killed.status != 0)
        let left = try modes(under: directory, except: original)
        #expect(!left.isEmpty)
        for (path, mode) in left { #expect(mode & 0o077 == 0, "after a kill, \(path): \(String(mode, radix: 8))") }
        #expect(try runAsNobody(["migrate", store, "--model", Self.bookStore, "--out", out, "--progress", "none", "--resume"]).status == 0)
        try FileManager.default.removeItem(atPath: out)

        let inPlace = try runAsNobody(["migrate", store, "--model", Self.bookStore, "--progress", "none"])
        #expect(inPlace.status == 0, "\(inPlace.standardError)")
        for (path, mode) in try modes(under: directory, except: []) {
            #expect(mode & 0o077 == 0, "in place, \(path): \(String(mode, radix: 8))")
        }
    }

    @Test("inspect --export-model of a 0600 store writes the model private too: its directory and files")
    func exportedModelStaysPrivate() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-perm-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = directory + "/carried.sqlite"
        try FileManager.default.copyItem(
            atPath: CheckAndGenerateCommandTests.fixtures + "/alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite",
            toPath: store)
        if getuid() == 0 { for path in [directory, store] { _ = chown(path, 65534, 65534) } }
        _ = chmod(store, 0o600)
        let exported = try runAsNobody(["inspect", store, "--export-model", directory + "/model"])
        #expect(exported.status == 0, "\(exported.standardError)")
        let written = try modes(under: directory, except: ["carried.sqlite"])
        #expect(written.keys.contains("model/model.yaml"), "\(written)")
        for (path, mode) in written { #expect(mode & 0o077 == 0, "\(path): \(String(mode, radix: 8))") }
    }
}
