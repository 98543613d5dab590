import ArgumentParser
import Foundation
import Tern
import TernGenerate

struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Create a store of a model version filled with synthetic objects.",
        discussion:
            "The same --seed always gives the same store. Every concrete entity gets --rows objects; relationships get realistic fan-out, many-to-many and ordered ones included."
    )

    @Option(help: "The model (see tern check --help); repeated, the models are merged.")
    var model: [String]

    @Option(help: "The model version to generate (default: the current version).")
    var version: String?

    @Option(help: "Objects per concrete entity.")
    var rows: Int

    @Option(help: ArgumentHelp("Objects of one entity instead of --rows, as ENTITY=N (repeatable): --count Page=3000000.", valueName: "entity=n"))
    var count: [String] = []

    @Option(help: "Seed for the random values.")
    var seed: UInt64 = 1

    @Argument(help: "The store to create; it must not exist.")
    var store: String

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard rows >= 0 else { throw ValidationError("--rows cannot be negative") }
        _ = try counts()
    }

    /// `--count` as entity → objects.
    func counts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for item in count {
            let parts = item.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let number = Int(parts[1]), number >= 0 else {
                throw ValidationError("--count \(item): expected ENTITY=N with N a whole number, such as Page=3000000")
            }
            counts[String(parts[0])] = number
        }
        return counts
    }

    func run() throws {
        let logger = global.makeLogger(label: "tern.generate")
        try reportingErrors {
            let versioned = try loadModel(model)
            let name = version ?? versioned.currentVersionName
            warn(about: versioned, versions: [name])
            guard let objectModel = versioned.version(named: name) else {
                throw TernError(
                    .badInput, "no version \(name); versions: \(versioned.versions.map(\.versionName).joined(separator: ", "))", path: versioned.path)
            }
            logger.info("generating", metadata: ["version": "\(name)", "rows": "\(rows)"])
            let report = try DataGenerator.generate(model: objectModel, at: store, rows: rows, counts: try counts(), seed: seed)
            print("Created \(store) (\(name)): \(report.summary)")
        }
    }
}
