import Foundation
import Tern

/// Renders store metadata for people (text) and programs (JSON).
enum MetadataReport {
    /// `carried`: the model the store keeps in `Z_MODELCACHE`, listed after the entities.
    static func text(_ metadata: StoreMetadata, path: String, carried: Result<ObjectModel?, any Error> = .success(nil)) -> String {
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
        switch carried {
        case .failure(let error):
            lines.append("  model carried:       unreadable (\(error))")
        case .success(nil):
            lines.append("  model carried:       none (no Z_MODELCACHE)")
        case .success(let carried?):
            lines.append("  model carried (Z_MODELCACHE), \(carried.entities.count) entities:")
            for entity in carried.entities {
                let head = entity.name + (entity.parent.map { " (\($0))" } ?? "") + (entity.isAbstract ? ", abstract" : "")
                let attributes = entity.attributes.map { "\($0.name) \($0.type.rawValue)\($0.isOptional ? "?" : "")\($0.isTransient ? " transient" : "")" }
                let relationships = entity.relationships.map { "\($0.name) → \($0.destination)\($0.isToMany ? ($0.isOrdered ? " [ordered]" : " [many]") : "")" }
                lines.append("    \(head): " + (attributes + relationships).joined(separator: ", "))
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The metadata's JSON, with `carriedModel` (the YAML text of the model the store carries, or null).
    static func json(_ metadata: StoreMetadata, carried: ObjectModel? = nil) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard var object = try JSONSerialization.jsonObject(with: try encoder.encode(metadata)) as? [String: Any] else {
            return String(decoding: try encoder.encode(metadata), as: UTF8.self)
        }
        object["carriedModel"] = try carried.map(ModelExporter.yaml) ?? NSNull()
        return String(
            decoding: try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
    }
}
