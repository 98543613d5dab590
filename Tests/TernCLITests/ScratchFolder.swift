import Foundation

/// A folder of its own under the temporary directory for one test, removed with it: a suite
/// holds one, and Swift Testing makes a suite instance per test and releases it afterwards.
final class ScratchFolder: Sendable {
    let url: URL

    init(_ prefix: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the folder.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}
