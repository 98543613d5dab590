import Foundation
import Tern
import TernGenerate
import Testing

/// The real-world artefacts in `../shared/fixtures/coredata`, beside the repository (CI puts them
/// there; `TERN_FIXTURES` overrides the location).
enum Fixtures {
    static let root: URL = {
        if let override = ProcessInfo.processInfo.environment["TERN_FIXTURES"] {
            return URL(fileURLWithPath: override)
        }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return repository.deletingLastPathComponent().appendingPathComponent("shared/fixtures/coredata")
    }()

    static func path(_ relative: String) -> String {
        root.appendingPathComponent(relative).path
    }

    /// Copies fixture files into `directory` (keeping their names) and returns the first copy's path.
    static func copy(_ relatives: [String], into directory: URL) throws -> String {
        var first: String?
        for relative in relatives {
            let source = root.appendingPathComponent(relative)
            let target = directory.appendingPathComponent(source.lastPathComponent)
            try FileManager.default.copyItem(at: source, to: target)
            first = first ?? target.path
        }
        return try #require(first)
    }
}

/// A fresh directory per test, removed when released.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("tern-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes a Tern model's files (name → YAML text) here and loads the model.
    func model(_ files: [String: String]) throws -> VersionedModel {
        for (name, text) in files { try text.write(toFile: path(name), atomically: true, encoding: .utf8) }
        return try ModelLoader.load(url.path)
    }

    /// Every file in the directory with its SHA-free fingerprint: name, size and bytes.
    func snapshot() throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: url.path) {
            files[name] = try Data(contentsOf: url.appendingPathComponent(name))
        }
        return files
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// A generated Bench 1 store (`configs/bench`) in a fresh folder: what the library's suites
/// migrate.
struct BenchSource {
    let directory: TemporaryDirectory
    let model: VersionedModel
    /// The store, `bench-1.sqlite` in `directory`.
    let path: String

    /// `books` books with three pages each, and `categories` categories.
    init(books: Int, categories: Int = 20, seed: UInt64) throws {
        directory = try TemporaryDirectory()
        model = try ModelLoader.load(Configs.path("bench"))
        path = directory.path("bench-1.sqlite")
        _ = try DataGenerator.generate(model: model.versions[0], at: path, rows: books, counts: ["Page": 3 * books, "Category": categories], seed: seed)
    }
}
