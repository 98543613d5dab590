import Foundation
import TernModel
import TernSQLite

/// Which version of a model wrote a store, and what that means for opening it.
public struct VersionMatch: Sendable, Equatable {
    /// How the version was recognised.
    public enum Evidence: String, Sendable, Codable {
        /// The store's `NSStoreModelVersionHashes` equal Core Data's hashes of the version: what
        /// Core Data itself compares before it opens a store.
        case appleHashes = "apple-hashes"
        /// The store carries no Core Data hashes (an earlier Tern wrote it, or its metadata lost
        /// them): its tables, columns, declared types and entity numbers equal the version's layout.
        case schema
        /// An earlier Tern wrote the store (`TernVersionHashScheme`, or join tables named by its
        /// rules): its tables are that release's layout of the version. Migrating it, to the
        /// same version too, copies it into Core Data's layout with Core Data's hashes.
        case earlierTern = "earlier-tern"
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
    /// What people should know about how the version was recognised (the metadata naming one
    /// version and the tables being another's).
    public var notes: [String] = []
    /// True when the metadata names another version than the tables: a migration rewrites it,
    /// to the tables' own version too (Core Data would read the tables as the metadata's).
    public var metadataDisagrees = false

    /// Decides which version of `model` wrote the store described by `metadata` and `signature`.
    ///
    /// Core Data's hashes first, as Core Data decides: the store's `NSStoreModelVersionHashes`
    /// against the hashes Tern computes for each version (or a compiled model's
    /// `VersionInfo.plist`, `appleHashes`, believed only where the tables agree too: a plist can
    /// belong to another model). The current version first: two versions with identical hashes are the same
    /// schema, and the current one is preferred. Then the schema, declared types and entity
    /// numbers included: a store without Core Data's hashes (an earlier Tern's), or one whose
    /// model has what Tern may hash otherwise (a derivation other than `.@count`), is recognised
    /// only when every table, column, type and entity number agrees. A store an earlier Tern
    /// wrote (its own hashes, or its own join tables: `StoreLayout.Rules.earlierTern`) is
    /// recognised the same way and always needs migrating, to its own version too: the copy
    /// gives it Core Data's layout and hashes.
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
        // An earlier Tern's store: its own hashes (or Core Data's, written for a short while
        // before the layout followed Core Data's), tables of its own rules or of Core Data's.
        let earlierTern = { (version: ObjectModel) in
            VersionMatch(verdict: .migrationNeeded(from: version.versionName, to: model.currentVersionName, evidence: .earlierTern))
        }
        let laidOutByEarlierTern = { (version: ObjectModel) in
            !Self.differences(of: version, from: metadata, signature: signature).isEmpty
                && Self.differences(of: version, rules: .earlierTern, from: metadata, signature: signature).isEmpty
        }
        if metadata.hasCoreDataHashes {
            for version in model.currentFirst where version.hasVersionHashes(metadata.versionHashes) {
                if laidOutByEarlierTern(version) { return earlierTern(version) }
                // The metadata names one version, the tables are exactly another's (a migration
                // that wrote the metadata and not the tables): the tables are what a migration
                // reads, so they decide.
                let differences = differences(of: version, from: metadata, signature: signature)
                if !differences.isEmpty,
                    let tables = model.currentFirst.first(where: { self.differences(of: $0, from: metadata, signature: signature).isEmpty })
                {
                    var match = VersionMatch(verdict: .migrationNeeded(from: tables.versionName, to: model.currentVersionName, evidence: .schema))
                    match.metadataDisagrees = true
                    match.notes = [
                        "the store's metadata carries \(version.versionName)'s version hashes, but its tables are \(tables.versionName)'s "
                            + "(\(differences.joined(separator: "; "))): it is read as \(tables.versionName)"
                    ]
                    return match
                }
                return verdict(version.versionName, .appleHashes)
            }
            for version in model.currentFirst
            where appleHashes[version.versionName] == metadata.versionHashes
                && differences(of: version, from: metadata, signature: signature).isEmpty
            {
                return verdict(version.versionName, .appleHashes)
            }
        }
        var closest: (name: String, differences: [String])?
        for version in model.currentFirst {
            var differences = differences(of: version, from: metadata, signature: signature)
            if differences.isEmpty {
                return metadata.hashScheme == nil ? verdict(version.versionName, .schema) : earlierTern(version)
            }
            if metadata.hashScheme != nil {
                if laidOutByEarlierTern(version) { return earlierTern(version) }
                // An earlier Tern's store is compared with that release's layout too: the
                // closer of the two says what differs (one extra table, not every join table).
                let earlier = Self.differences(of: version, rules: .earlierTern, from: metadata, signature: signature)
                if earlier.count < differences.count { differences = earlier.map { "by the earlier Tern's rules: " + $0 } }
            }
            if metadata.hasCoreDataHashes {
                let computed = version.versionHashes.mapValues(VersionHash.hex)
                let differing = Set(computed.keys).union(metadata.versionHashes.keys).sorted().filter { computed[$0] != metadata.versionHashes[$0] }
                differences.insert("the store's version hashes differ from the version's for \(differing.joined(separator: ", "))", at: 0)
            }
            if closest == nil || differences.count < closest!.differences.count {
                closest = (version.versionName, differences)
            }
        }
        var differences = closest?.differences ?? []
        if metadata.hashScheme != nil {
            differences.insert(
                "the store was written by an earlier Tern (TernVersionHashScheme \(metadata.hashScheme!)\(metadata.versionName.map { ", version \($0)" } ?? "")), "
                    + "but its tables are no version's layout by that release's rules either", at: 0)
        }
        return VersionMatch(verdict: .noMatch(closest: closest?.name, differences: differences))
    }

    /// How a store differs from what `version` would have written: its tables and columns, and
    /// the entities `Z_PRIMARYKEY` numbers — number, parent, and name (or the renaming
    /// identifier: Core Data keeps an entity's old name there after a rename) — since two
    /// versions can share every table and still differ in which entity a row's `Z_ENT` means (a
    /// subentity moved). Persistent-history entities (numbered from 16000) are not the model's.
    public static func differences(
        of version: ObjectModel, rules: StoreLayout.Rules = .coreData, from metadata: StoreMetadata, signature: LayoutSignature
    ) -> [String] {
        // Join tables named from the other side are the store's to say (`namedByInverse`).
        let flipped = StoreLayout.joinTablesNamedByInverse(of: version, rules: rules, in: Set(signature.joinTables.keys))
        var found = LayoutSignature(layout: StoreLayout(model: version, rules: rules, namedByInverse: flipped)).differences(from: signature)
        guard !metadata.entities.isEmpty else { return found }
        let numbers = version.entityNumbers
        let byNumber = Dictionary(version.entities.map { (numbers[$0.name] ?? 0, $0) }, uniquingKeysWith: { first, _ in first })
        let stored = metadata.entities.filter { $0.number < 16000 }
        var mismatched: [String] = []
        for entity in stored {
            guard let expected = byNumber[entity.number], [expected.name, expected.renamingKey].contains(entity.name),
                expected.parent.flatMap({ numbers[$0] }) == entity.parentNumber
            else {
                mismatched.append("\(entity.number) \(entity.name)")
                continue
            }
        }
        if !mismatched.isEmpty || stored.count != version.entities.count {
            let expected = version.entities.map { "\(numbers[$0.name] ?? 0) \($0.name)\($0.parent.map { " (parent \($0))" } ?? "")" }.sorted()
            found.append(
                "Z_PRIMARYKEY numbers its entities otherwise (\(mismatched.isEmpty ? "\(stored.count) entities" : mismatched.joined(separator: ", "))); this version has "
                    + expected.joined(separator: ", "))
        }
        return found
    }

    /// Reads the store at `path` (without leaving files beside it) and decides which version of
    /// `model` wrote it; see `find(in:metadata:signature:appleHashes:)`.
    public static func find(in model: VersionedModel, storeAt path: String, appleHashes: [String: [String: String]] = [:]) throws -> VersionMatch {
        try StoreMetadata.reading(path) {
            let reader = try ReadOnlyStore(path: path)
            let connection = try reader.connect()
            return find(
                in: model, metadata: try StoreMetadata.read(from: connection, path: path, countingRows: false),
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
            let versions = plist["NSManagedObjectModel_VersionHashes"] as? [String: Any]
        else {
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
