import ArgumentParser
import Foundation
import Tern

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print a store's metadata, version identifiers, entities, row counts and the model it carries.",
        discussion: "Needs no model: everything comes from the store's Z_METADATA, Z_PRIMARYKEY and Z_MODELCACHE tables. The store is opened read-only."
    )

    @Argument(help: "The store (an SQLite file in Core Data's layout).")
    var store: String

    @Flag(help: "Print JSON (stable keys, documented in the article Commands) instead of text.")
    var json = false

    @Option(
        name: .customLong("export-model"), help: ArgumentHelp("Write the model the store carries (Z_MODELCACHE) as a Tern model directory.", valueName: "DIR"))
    var exportModel: String?

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let logger = global.makeLogger(label: "tern.inspect")
        try reportingErrors {
            logger.debug("reading metadata", metadata: ["store": "\(store)"])
            var metadata = try StoreMetadata.read(storeAt: store)
            metadata.externalData = try ExternalDataUsage.read(storeAt: store)
            let name = URL(fileURLWithPath: store).deletingPathExtension().lastPathComponent
            // An unreadable cache does not hide the rest of what the store says.
            let carried = Result { try StoreModelCache.read(storeAt: store, versionName: name) }
            print(json ? try MetadataReport.json(metadata, carried: try? carried.get()) : MetadataReport.text(metadata, path: store, carried: carried))
            if let exportModel {
                guard let carried = try carried.get() else {
                    throw TernError(.badInput, "the store carries no model (no Z_MODELCACHE): nothing to export", path: store)
                }
                if let existing = try? FileManager.default.contentsOfDirectory(atPath: exportModel), !existing.isEmpty {
                    throw TernError(.badInput, "exists and is not empty: Tern never overwrites a model (name a new directory)", path: exportModel)
                }
                // The model is the store's schema: it gets no more access than the store.
                try StorePermissions.restricting(for: store) {
                    try ModelExporter.export(carried, named: name, to: URL(fileURLWithPath: exportModel))
                }
                if !json { print("Wrote the model the store carries to \(exportModel) (model.yaml, v1.yaml: version \(name)).") }
            }
        }
    }
}
