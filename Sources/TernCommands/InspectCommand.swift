import ArgumentParser
import Foundation
import Tern

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print a store's metadata, version identifiers, entities and row counts.",
        discussion: "Needs no model: everything comes from the store's Z_METADATA and Z_PRIMARYKEY tables. The store is opened read-only."
    )

    @Argument(help: "The store (an SQLite file in Core Data's layout).")
    var store: String

    @Flag(help: "Print JSON (stable keys, documented in the README) instead of text.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let logger = global.makeLogger(label: "tern.inspect")
        try reportingErrors {
            logger.debug("reading metadata", metadata: ["store": "\(store)"])
            var metadata = try StoreMetadata.read(storeAt: store)
            metadata.externalData = try ExternalDataUsage.read(storeAt: store)
            print(json ? try MetadataReport.json(metadata) : MetadataReport.text(metadata, path: store))
        }
    }
}
