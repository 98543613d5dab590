import Foundation
import TernSQLite

/// Which version of a model wrote a store, and what that means for opening it.
public struct VersionMatch: Sendable, Equatable {
    /// How the version was recognised.
    public enum Evidence: String, Sendable, Codable {
        /// The store's version hashes equal Tern's hashes of the version.
        case ternHashes = "tern-hashes"
        /// The store's hashes equal Apple's, from a compiled model's `VersionInfo.plist`.
        case appleHashes = "apple-hashes"
        /// The store's tables and columns equal the version's layout.
        case schema
    }

    /// What the match means for opening the store.
    public enum Verdict: Sendable, Equatable {
        /// The store was written by the current version: it opens as it is.
        case compatible(version: String, evidence: Evidence)
        /// The store was written by an older (or other) version: migrate it to the current one.
        case migrationNeeded(from: String, to: String, evidence: Evidence)
        /// No version of the model wrote this store.
        case noMatch(closest: String?, differences: [String])
    }

    /// Which version wrote the store, and whether it must be migrated.
    public let verdict: Verdict

    /// Decides which version of `model` wrote the store described by `metadata` and `signature`.
    ///
    /// Tern's own stores carry Tern's hashes and are matched by them. Stores Core Data wrote carry
    /// Apple's hashes, which Tern cannot recompute: they are matched against `appleHashes` (from a
    /// compiled model's `VersionInfo.plist`) when given, and otherwise by comparing the store's
    /// schema with each version's layout.
    public static func find(
        in model: VersionedModel,
        metadata: StoreMetadata,
        signature: LayoutSignature,
        appleHashes: [String: [String: String]] = [:]
    ) -> VersionMatch {
        func verdict(_ version: String, _ evidence: Evidence) -> VersionMatch {
            version == model.currentVersionName
                ? VersionMatch(verdict: .compatible(version: version, evidence: evidence))
                : VersionMatch(verdict: .migrationNeeded(from: version, to: model.currentVersionName, evidence: evidence))
        }
        // Apple's hashes when the store carries them (Core Data wrote it, or Tern wrote them for
        // Core Data), then Tern's own; newest first: two versions with identical hashes are the
        // same schema, and the current one is preferred. Hashes are only believed when the tables
        // and the entities agree too: a plist or a bundle can be wrong.
        if metadata.ternVersionHashes != metadata.versionHashes, !metadata.versionHashes.isEmpty {
            for version in model.versions.reversed() where appleHashes[version.versionName] == metadata.versionHashes
                && differences(of: version, from: metadata, signature: signature).isEmpty {
                return verdict(version.versionName, .appleHashes)
            }
        }
        if let tern = metadata.ternVersionHashes {
            for version in model.versions.reversed() where version.versionHashes.mapValues(VersionHash.hex) == tern
                && differences(of: version, from: metadata, signature: signature).isEmpty {
                return verdict(version.versionName, .ternHashes)
            }
        }
        var closest: (name: String, differences: [String])?
        for version in model.versions.reversed() {
            let differences = differences(of: version, from: metadata, signature: signature)
            if differences.isEmpty {
                return verdict(version.versionName, .schema)
            }
            if closest == nil || differences.count < closest!.differences.count {
                closest = (version.versionName, differences)
            }
        }
        return VersionMatch(verdict: .noMatch(closest: closest?.name, differences: closest?.differences ?? []))
    }

    /// How a store differs from what `version` would have written: its tables and columns, and
    /// the entities `Z_PRIMARYKEY` numbers — number, parent, and name (or the renaming
    /// identifier: Core Data keeps an entity's old name there after a rename) — since two
    /// versions can share every table and still differ in which entity a row's `Z_ENT` means (a
    /// subentity moved). Persistent-history entities (numbered from 16000) are not the model's.
    public static func differences(of version: ObjectModel, from metadata: StoreMetadata, signature: LayoutSignature) -> [String] {
        var found = LayoutSignature(layout: StoreLayout(model: version)).differences(from: signature)
        guard !metadata.entities.isEmpty else { return found }
        let numbers = version.entityNumbers
        let byNumber = Dictionary(version.entities.map { (numbers[$0.name] ?? 0, $0) }, uniquingKeysWith: { first, _ in first })
        let stored = metadata.entities.filter { $0.number < 16000 }
        var mismatched: [String] = []
        for entity in stored {
            guard let expected = byNumber[entity.number], [expected.name, expected.renamingKey].contains(entity.name),
                  expected.parent.flatMap({ numbers[$0] }) == entity.parentNumber else {
                mismatched.append("\(entity.number) \(entity.name)")
                continue
            }
        }
        if !mismatched.isEmpty || stored.count != version.entities.count {
            let expected = version.entities.map { "\(numbers[$0.name] ?? 0) \($0.name)\($0.parent.map { " (parent \($0))" } ?? "")" }.sorted()
            found.append("Z_PRIMARYKEY numbers its entities otherwise (\(mismatched.isEmpty ? "\(stored.count) entities" : mismatched.joined(separator: ", "))); this version has " + expected.joined(separator: ", "))
        }
        return found
    }

    /// Reads the store at `path` (without leaving files beside it) and decides which version of
    /// `model` wrote it; see `find(in:metadata:signature:appleHashes:)`.
    public static func find(in model: VersionedModel, storeAt path: String, appleHashes: [String: [String: String]] = [:]) throws -> VersionMatch {
        try StoreMetadata.reading(path) {
            let reader = try ReadOnlyStore(path: path)
            let connection = try reader.connect()
            return find(in: model, metadata: try StoreMetadata.read(from: connection, path: path),
                        signature: try LayoutSignature(connection: connection), appleHashes: appleHashes)
        }
    }

    /// Reads `NSManagedObjectModel_VersionHashes` from a compiled model's `VersionInfo.plist`:
    /// version name → entity name → hash in hex.
    public static func appleHashes(versionInfoAt path: String) throws -> [String: [String: String]] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TernError(.missingInput, "no such file", path: path)
        }
        guard let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
              let versions = plist["NSManagedObjectModel_VersionHashes"] as? [String: Any] else {
            throw TernError(.badInput, "not a VersionInfo.plist: no NSManagedObjectModel_VersionHashes", path: path)
        }
        var result: [String: [String: String]] = [:]
        for (version, entities) in versions {
            guard let entities = entities as? [String: Any] else { continue }
            result[version] = entities.compactMapValues { ($0 as? Data).map { VersionHash.hex([UInt8]($0)) } }
        }
        return result
    }
}
