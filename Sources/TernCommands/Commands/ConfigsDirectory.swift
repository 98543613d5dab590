import Foundation
import Tern

/// The checkout Tern runs from: the working directory, or the one the binary was built in. What
/// ships beside the code (configs/, the test app's writer) is found there.
package enum Checkout {
    /// Where a checkout may be, most likely first.
    static var roots: [URL] {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let build = executable.deletingLastPathComponent().deletingLastPathComponent()
        return [
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
            build.deletingLastPathComponent(),  // .build/<config>/tern
            build.deletingLastPathComponent().deletingLastPathComponent(),  // .build/<triple>/<config>/tern
        ]
    }

    /// `relative` in the first checkout that has it; `hint` says how to do without it.
    package static func file(_ relative: String, hint: String) throws -> String {
        let candidates = roots.map { $0.appendingPathComponent(relative).path }
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw TernError(.missingInput, "\(relative) was not found in \(candidates.joined(separator: " or ")); \(hint)")
        }
        return found
    }
}

/// configs/<name> in the working directory or in the checkout the binary was built in.
package enum ConfigsDirectory {
    package static func find(_ name: String) throws -> String {
        let model = try Checkout.file("configs/\(name)/model.yaml", hint: "pass --model DIR")
        return URL(fileURLWithPath: model).deletingLastPathComponent().path
    }
}
