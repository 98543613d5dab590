import ArgumentParser
import Foundation
import Tern

struct InferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "infer",
        abstract: "Infer the mapping model between two versions, as lightweight migration would.",
        discussion: """
            Writes the mapping in Tern's mapping format, ready to edit (as Xcode starts a mapping \
            model from an inferred one). One mapping from the source to the destination, as Core \
            Data infers it: the versions in between play no part. Exit status 5 when the mapping cannot be inferred, with every reason listed.
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
            let (source, destination) = try Self.versions(in: versioned, from: from, to: to ?? versioned.currentVersionName)
            warn(about: versioned, versions: [source.versionName, destination.versionName])
            do {
                let mapping = try MappingInference.infer(from: source, to: destination)
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

    /// The two versions named.
    static func versions(in model: VersionedModel, from: String, to: String) throws -> (ObjectModel, ObjectModel) {
        guard let source = model.version(named: from), let destination = model.version(named: to) else {
            let missing = model.version(named: from) == nil ? from : to
            throw TernError(
                .badInput, "no version \(missing); versions: \(model.versions.map(\.versionName).joined(separator: ", "))", path: model.path)
        }
        return (source, destination)
    }
}
