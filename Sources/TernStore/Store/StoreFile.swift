import Foundation
import TernModel
import TernSQLite

/// Creates empty stores in Core Data's layout for a model version.
public enum StoreFile {
    /// The metadata key holding the model version's name, so `tern check` can say which version
    /// wrote a store without recomputing anything.
    public static let versionNameKey = "TernModelVersionName"
    /// The metadata key of a migrated store holding its migration's inputs' fingerprint (the
    /// source's content digest, the versions, the mappings): how a `--resume` whose record was
    /// already removed knows an existing output is its own, and anyone can tell what it came from.
    public static let migratedFromKey = "TernMigratedFrom"

    /// Makes the store's metadata carry the version hashes of a compiled model's
    /// `VersionInfo.plist` (`apple`: entity → hex) as `NSStoreModelVersionHashes`, with the digest
    /// and checksum Core Data derives from them: what the app's own compiled model says wins over
    /// Tern's computation where the two could differ (a derivation Tern spells otherwise than
    /// `NSExpression.predicateFormat`).
    package static func useAppleHashes(_ apple: [String: String], in connection: Connection, path: String) throws {
        var bytes: [String: [UInt8]] = [:]
        for (entity, hex) in apple {
            bytes[entity] = stride(from: 0, to: hex.count - 1, by: 2).compactMap { offset in
                let start = hex.index(hex.startIndex, offsetBy: offset)
                return UInt8(hex[start...hex.index(after: start)], radix: 16)
            }
        }
        try updateMetadata(in: connection, path: path) { plist in
            plist["NSStoreModelVersionHashes"] = .dictionary(bytes.mapValues(PropertyListValue.data))
            plist["NSStoreModelVersionHashesDigest"] = .string(VersionHash.digest(bytes))
            plist["NSStoreModelVersionChecksumKey"] = .string(VersionHash.checksum(bytes))
        }
    }

    /// Sets one key of the store's metadata plist, keeping every other.
    package static func setMetadata(_ key: String, to value: String, in connection: Connection, path: String) throws {
        try updateMetadata(in: connection, path: path) { $0[key] = .string(value) }
    }

    /// Copies the metadata an app set on the store at `source` (`setMetadata`: every key but
    /// Core Data's own, `NS…` and `_NS…`, and Tern's) into the store open on `connection`, as
    /// Core Data's own migration keeps it: a sync token, an app's schema marker.
    package static func carryAppMetadata(from source: String, into connection: Connection, path: String) throws {
        let apps = try appMetadata(ofStoreAt: source)
        guard !apps.isEmpty else { return }
        try updateMetadata(in: connection, path: path) { $0.merge(apps) { _, app in app } }
    }

    /// The app's own entries of the metadata of the store at `path` (`appMetadata(plist:path:)`):
    /// what a migration carries. A run reads them when it plans and when it starts, so that what
    /// cannot be carried is refused before any work, not found at delivery.
    package static func appMetadata(ofStoreAt path: String) throws -> [String: PropertyListValue] {
        let reader = try ReadOnlyStore(path: path)
        let connection = try reader.connect()
        defer { withExtendedLifetime(reader) {} }
        guard let bytes = try connection.scalar("SELECT Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")?.blob else { return [:] }
        return try appMetadata(plist: bytes, path: path)
    }

    /// The app's own entries of a store's metadata plist (`Z_METADATA.Z_PLIST`): every key but
    /// Core Data's (`NS…`, `_NS…`) and Tern's. Core Data reads the plist in any format; so does
    /// Tern: a binary one with its own decoder, key by key, so that only an app's value can be
    /// refused (Foundation on Linux reads a 128-bit integer as its low 64 bits, silently); an XML
    /// or OpenStep one through Foundation, then as binary.
    ///
    /// - Throws: `TernError(.badInput)` naming the store (and the key) when the plist is not a
    ///   dictionary or an app's value cannot be written back (an integer beyond 64 bits).
    package static func appMetadata(plist bytes: [UInt8], path: String) throws -> [String: PropertyListValue] {
        var entries: [String: Result<PropertyListValue, BinaryPropertyList.Malformed>]
        do {
            var binary = bytes
            if !bytes.starts(with: Array("bplist00".utf8)) {
                let parsed = try PropertyListSerialization.propertyList(from: Data(bytes), format: nil)
                binary = Array(try PropertyListSerialization.data(fromPropertyList: parsed, format: .binary, options: 0))
            }
            entries = try BinaryPropertyList.dictionaryEntries(binary)
        } catch {
            throw TernError(.badInput, "Z_METADATA.Z_PLIST is not a dictionary of metadata: \(error)", path: path)
        }
        var apps: [String: PropertyListValue] = [:]
        for (key, entry) in entries where !key.hasPrefix("NS") && !key.hasPrefix("_NS") && !key.hasPrefix("Tern") {
            do {
                apps[key] = try entry.get()
            } catch {
                throw TernError(.badInput, "Z_METADATA.Z_PLIST: the app's key \(key) cannot be carried to the migrated store: \(error)", path: path)
            }
        }
        return apps
    }

    /// Rewrites the store's metadata plist through `change`.
    private static func updateMetadata(
        in connection: Connection, path: String, _ change: (inout [String: PropertyListValue]) -> Void
    ) throws {
        guard let bytes = try connection.scalar("SELECT Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")?.blob,
            case .dictionary(var plist) = try? BinaryPropertyList.decode(bytes)
        else {
            throw TernError(.badInput, "Z_METADATA.Z_PLIST is missing or not a dictionary", path: path)
        }
        change(&plist)
        try connection.execute("UPDATE Z_METADATA SET Z_PLIST = ?", BinaryPropertyList.encode(.dictionary(plist)))
    }

    /// Creates the store at `path` (which must not exist) with every table and system row for
    /// `model`; indexes are created by `ObjectWriter.finish()` after rows are loaded, which is
    /// several times faster than maintaining them row by row.
    ///
    /// The store uses WAL journaling and incremental auto-vacuum, as Core Data's do.
    public static func create(at path: String, model: ObjectModel, uuid: UUID = UUID()) throws -> Connection {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw TernError(.badInput, "refusing to overwrite an existing file", path: path)
        }
        let layout = StoreLayout(model: model)
        try layout.refuseNameClashes()
        do {
            let connection = try Connection(path: path)
            try connection.execute("PRAGMA page_size = 4096; PRAGMA auto_vacuum = 2")
            try connection.setJournalMode(.wal)
            try connection.syncNormally()
            try connection.transaction(.immediate) {
                for statement in layout.createTableStatements {
                    try connection.execute(statement)
                }
                let insert = try connection.prepare("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, 0)")
                let numbers = model.entityNumbers
                for entity in model.entitiesInStoreOrder {
                    try insert.bind([numbers[entity.name]!, entity.name, entity.parent.flatMap { numbers[$0] } ?? 0])
                    try insert.run()
                }
                try connection.execute(
                    "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)",
                    uuid.uuidString, metadataPlist(for: model))
            }
            return connection
        } catch let error as SQLiteError {
            throw TernError(.io, "cannot create the store: \(error)", path: path)
        }
    }

    /// The binary plist Core Data keeps in `Z_METADATA.Z_PLIST`, with Core Data's version hashes
    /// of `model`, so the app's Core Data opens the store as written by that version.
    package static func metadataPlist(for model: ObjectModel) -> [UInt8] {
        let hashes = model.versionHashes
        let plist: [String: PropertyListValue] = [
            "NSStoreType": .string("SQLite"),
            "NSStoreModelVersionHashes": .dictionary(hashes.mapValues(PropertyListValue.data)),
            "NSStoreModelVersionHashesVersion": .integer(3),
            "NSStoreModelVersionIdentifiers": .array(model.versionIdentifiers.map(PropertyListValue.string)),
            "NSStoreModelVersionHashesDigest": .string(VersionHash.digest(hashes)),
            "NSStoreModelVersionChecksumKey": .string(VersionHash.checksum(hashes)),
            "_NSAutoVacuumLevel": .string("2"),
            versionNameKey: .string(model.versionName),
        ]
        return BinaryPropertyList.encode(.dictionary(plist))
    }
}

extension StoreFile {
    /// The real path of `path`, symbolic links followed (`path` itself when it does not exist):
    /// a store's backup, its support folder and its record go beside the file, not the link.
    package static func resolvingLinks(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
