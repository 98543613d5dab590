import ArgumentParser
import Foundation
import Tern

struct InferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "infer",
        abstract: "Infer the mapping model between two versions, as lightweight migration would.",
        discussion: """
            Writes the mapping in Tern's mapping format, ready to edit (as Xcode starts a mapping \
            model from an inferred one). Versions in between are consulted to follow renames. \
            Exit status 5 when the mapping cannot be inferred, with every reason listed.
            """
    )

    @Option(help: "The model (see tern check --help).")
    var model: String

    @Option(help: "The source version.")
    var from: String

    @Option(help: "The destination version (default: the current version).")
    var to: String?

    @Option(name: [.customShort("o"), .long], help: "Write the mapping to this file instead of standard output.")
    var output: String?

    @OptionGroup var global: GlobalOptions

    func run() throws {
        var status: Int32 = 0
        try reportingErrors {
            let versioned = try loadModel([model])
            let (source, destination, between) = try Self.step(in: versioned, from: from, to: to ?? versioned.currentVersionName)
            do {
                let mapping = try MappingInference.infer(from: source, to: destination, through: between)
                let text = try MappingLoader.yaml(mapping)
                if let output {
                    guard !FileManager.default.fileExists(atPath: output) else {
                        throw TernError(.badInput, "refusing to overwrite an existing file", path: output)
                    }
                    do {
                        try text.write(toFile: output, atomically: true, encoding: .utf8)
                    } catch {
                        throw TernError(.io, "cannot write the mapping: \(error.localizedDescription)", path: output)
                    }
                    print("Wrote the inferred mapping \(source.versionName) → \(destination.versionName) to \(output)")
                } else {
                    print(text, terminator: "")
                }
            } catch let failure as InferenceFailure {
                printError("\(source.versionName) → \(destination.versionName): \(failure)")
                status = TernExitCode.cannotInfer
            }
        }
        if status != 0 { throw ExitCode(status) }
    }

    /// The two versions and those between them, in model order.
    static func step(in model: VersionedModel, from: String, to: String) throws -> (ObjectModel, ObjectModel, [ObjectModel]) {
        let names = model.versions.map(\.versionName)
        guard let start = names.firstIndex(of: from), let end = names.firstIndex(of: to) else {
            let missing = names.contains(from) ? to : from
            throw TernError(.badInput, "no version \(missing); versions: \(names.joined(separator: ", "))", path: model.path)
        }
        let between = start < end ? Array(model.versions[(start + 1)..<end]) : []
        return (model.versions[start], model.versions[end], between)
    }
}
