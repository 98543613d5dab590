import Foundation
import Tern

/// Renders store metadata for people (text) and programs (JSON).
enum MetadataReport {
    static func text(_ metadata: StoreMetadata, path: String) -> String {
        var lines = ["Store \(path)"]
        lines.append("  UUID:                \(metadata.uuid ?? "none")")
        lines.append("  store type:          \(metadata.storeType ?? "none")")
        if let version = metadata.frameworkVersion {
            lines.append("  written by:          Core Data framework \(version)")
        }
        let identifiers = metadata.versionIdentifiers.map { "\"\($0)\"" }.joined(separator: ", ")
        lines.append("  version identifiers: [\(identifiers)]")
        lines.append("  metadata keys:       \(metadata.keys.joined(separator: ", "))")
        lines.append("  entities:")
        let nameWidth = max(6, metadata.entities.map(\.name.count).max() ?? 0)
        for entity in metadata.entities {
            let name = entity.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0)
            let rows = entity.rowCount.map { "\($0) rows" } ?? "no table"
            let parent = entity.parentNumber.flatMap { number in metadata.entities.first { $0.number == number }?.name }
            let hash = metadata.versionHashes[entity.name].map { " hash \($0.prefix(16))…" } ?? ""
            lines.append("    \(String(format: "%5d", entity.number)) \(name) \(rows) in \(entity.table)\(parent.map { ", parent \($0)" } ?? "")\(hash)")
        }
        if let usage = metadata.externalData, !usage.isEmpty {
            lines.append("  external data (\(ExternalBinaryData.folder(forStore: path))):")
            for column in usage {
                let missing = column.missing == 0 ? "" : ", \(column.missing) MISSING (first: \(column.firstMissing ?? ""))"
                lines.append("    \(column.table).\(column.column): \(column.values) values in files, \(Formatting.mebibytes(column.bytes))\(missing)")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ metadata: StoreMetadata) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(metadata), as: UTF8.self)
    }
}
