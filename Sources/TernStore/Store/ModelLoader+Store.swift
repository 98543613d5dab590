import Foundation
import TernModel

extension ModelLoader {
    /// Reads one model, or merges several (an app that opens its store with the merge of its
    /// own model and its frameworks'). With a store, the merge starts at the version of each
    /// part whose hashes the store carries, so its migration brings each part to its current
    /// version; see `VersionedModel.merging(_:start:)`.
    public static func load(_ paths: [String], forStoreAt store: String? = nil) throws -> VersionedModel {
        guard paths.count > 1 else {
            guard let path = paths.first else { throw TernError(.badInput, "no model given") }
            return try load(path)
        }
        let parts = try paths.map { try load($0) }
        var start: [String?]?
        if let store, FileManager.default.fileExists(atPath: store),
            let metadata = try? StoreMetadata.read(storeAt: store, countingRows: false), metadata.hasCoreDataHashes
        {
            start = VersionedModel.versionsWriting(metadata.versionHashes, parts: parts)
        }
        return try VersionedModel.merging(parts, start: start)
    }
}
