import Foundation
import Tern

/// configs/<name> in the working directory or in the checkout the binary was built in.
package enum ConfigsDirectory {
    package static func find(_ name: String) throws -> String {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let candidates = [
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
            executable.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent(),  // .build/<config>/tern
            // .build/<triple>/<config>/tern
            executable.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent(),
        ].map { $0.appendingPathComponent("configs/\(name)").path }
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0 + "/model.yaml") }) else {
            throw TernError(.missingInput, "configs/\(name) was not found in \(candidates.joined(separator: " or ")); pass --model DIR")
        }
        return found
    }
}
