import Foundation
import TernModel
import TernSQLite

/// What a Core Data–layout store says about itself, read without any model.
///
/// Everything here comes from the store's own tables: `Z_METADATA` (UUID and the metadata plist
/// with version hashes and identifiers) and `Z_PRIMARYKEY` (entities, inheritance and key
/// counters), plus row counts per entity from the entity tables.
public struct StoreMetadata: Sendable, Equatable, Codable {
    /// One entity as `Z_PRIMARYKEY` lists it.
    public struct Entity: Sendable, Equatable, Codable {
        /// `Z_ENT`: the entity's number in this store.
        public var number: Int
        /// `Z_NAME`: the entity's name.
        public var name: String
        /// `Z_SUPER`: the parent entity's number, nil for a root.
        public var parentNumber: Int?
        /// `Z_MAX` on a root: the highest `Z_PK` handed out in its inheritance tree.
        public var maxPrimaryKey: Int64
        /// The table holding the entity's rows (`Z` + uppercased root name).
        public var table: String
        /// Rows whose `Z_ENT` is this entity; nil when the table is missing, or when the
        /// metadata was read without counting rows.
        public var rowCount: Int64?
    }

    /// `Z_METADATA.Z_UUID`, Core Data's `NSStoreUUID`.
    public var uuid: String?
    /// `NSStoreType`, "SQLite" for Core Data stores.
    public var storeType: String?
    /// `NSPersistenceFrameworkVersion`, the Core Data build that wrote the store (nil for Tern).
    public var frameworkVersion: Int?
    /// `NSStoreModelVersionHashes`: entity name → 32-byte version hash, hex-encoded.
    public var versionHashes: [String: String]
    /// `NSStoreModelVersionHashesVersion`.
    public var versionHashesVersion: Int?
    /// `NSStoreModelVersionIdentifiers`.
    public var versionIdentifiers: [String]
    /// `NSStoreModelVersionChecksumKey` (Core Data 1333 and later), base64.
    public var checksum: String?
    /// `NSStoreModelVersionHashesDigest` (Core Data 977 and later), base64.
    public var digest: String?
    /// The version that wrote the store, when Tern wrote it.
    public var versionName: String?
    /// The hash scheme an earlier Tern named when it wrote its own hashes (`tern.v1`); nil for
    /// stores with Core Data's hashes.
    public var hashScheme: String?
    /// The fingerprint of the inputs of the migration that wrote this store, if Tern migrated it
    /// (`StoreFile.migratedFromKey`).
    public var migratedFrom: String?
    /// Columns whose values live in files beside the store (`ExternalBinaryData`); read by
    /// `tern inspect`, nil otherwise.
    public var externalData: [ExternalDataUsage]?
    /// Every key of the metadata plist, sorted, including the ones above and app-defined keys.
    public var keys: [String]
    /// Entities in `Z_ENT` order.
    public var entities: [Entity]

    /// Reads the metadata of the store at `path` without leaving any file beside it
    /// (see `ReadOnlyStore`); rows that live only in a `-wal` file are counted. Without
    /// `countingRows`, each entity's `rowCount` is left nil: counting reads every table, which
    /// what only needs the store's version and shape should not pay for.
    ///
    /// - Throws: `TernError` `.missingInput` when there is no file, `.badInput` when it is not an
    ///   SQLite database or not in Core Data's layout (no `Z_METADATA` or `Z_PRIMARYKEY`).
    public static func read(storeAt path: String, countingRows: Bool = true) throws -> StoreMetadata {
        try reading(path) {
            let store = try ReadOnlyStore(path: path)
            return try read(from: store.connect(), path: path, countingRows: countingRows)
        }
    }

    /// Runs `body` on the store at `path`, turning SQLite's errors into ones that name the file
    /// and say what is wrong with it.
    package static func reading<Result>(_ path: String, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as SQLiteError {
            switch error.code {
            case .SQLITE_READONLY_ROLLBACK:
                throw TernError(
                    .badInput,
                    "has a hot journal (\(URL(fileURLWithPath: path).lastPathComponent)-journal): a program stopped in the middle of writing "
                        + "the store, which is whole again only once that write is rolled back. Tern opens sources read-only and does not roll it back; "
                        + "open the store once with its app or with `sqlite3 '\(path)' 'PRAGMA quick_check'` (either rolls it back), then run again", path: path
                )
            case .SQLITE_NOTADB, .SQLITE_CORRUPT:
                throw TernError(.badInput, "damaged, or not an SQLite database (SQLite says: \(error.message))", path: path)
            case .SQLITE_CANTOPEN, .SQLITE_IOERR, .SQLITE_PERM:
                throw TernError(.io, "cannot read the store: \(error)", path: path)
            case .SQLITE_BUSY:
                throw TernError(.io, "cannot read the store now: another program holds a lock on it (\(error)); run again once it is free", path: path)
            default:
                throw TernError(.badInput, "cannot read the store: \(error)", path: path)
            }
        }
    }

    /// Every object of the store at `path`: the rows of each entity table, counted along the
    /// table's smallest index rather than by entity. Equal to the entities' `rowCount`s summed
    /// in a store with no row of an entity its table does not hold (a migration has refused
    /// any such store before it counts).
    public static func objectCount(storeAt path: String) throws -> Int {
        try reading(path) {
            let store = try ReadOnlyStore(path: path)
            let connection = try store.connect()
            let tables = try Set(Self.tableNames(connection))
            var count = 0
            for table in Set(try readEntities(connection, countingRowsIn: []).map(\.table)) where tables.contains(table) {
                count += Int(try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(table))")?.int64 ?? 0)
            }
            return count
        }
    }

    /// Reads the metadata through an open connection; `path` names the store in errors.
    public static func read(from connection: Connection, path: String, countingRows: Bool = true) throws -> StoreMetadata {
        let tables = try Set(Self.tableNames(connection))
        for required in ["Z_METADATA", "Z_PRIMARYKEY"] where !tables.contains(required) {
            throw TernError(.badInput, "not a Core Data–layout store: it has no \(required) table", path: path)
        }

        var metadata = StoreMetadata(versionHashes: [:], versionIdentifiers: [], keys: [], entities: [])
        let row = try connection.prepare("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")
        if try row.step() {
            metadata.uuid = row.row.text(at: 0)
            if let bytes = row.row.blob(at: 1) {
                try metadata.apply(plist: Data(bytes), path: path)
            }
        }
        metadata.entities = try readEntities(connection, countingRowsIn: countingRows ? tables : [])
        return metadata
    }

    private mutating func apply(plist data: Data, path: String) throws {
        let decoded: Any
        do {
            decoded = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw TernError(.badInput, "Z_METADATA.Z_PLIST is not a property list: \(error.localizedDescription)", path: path)
        }
        guard let plist = decoded as? [String: Any] else {
            throw TernError(.badInput, "Z_METADATA.Z_PLIST is not a dictionary", path: path)
        }
        keys = plist.keys.sorted()
        storeType = plist["NSStoreType"] as? String
        frameworkVersion = (plist["NSPersistenceFrameworkVersion"] as? NSNumber)?.intValue
        versionHashesVersion = (plist["NSStoreModelVersionHashesVersion"] as? NSNumber)?.intValue
        versionName = plist[StoreFile.versionNameKey] as? String
        hashScheme = plist[Self.earlierTernHashSchemeKey] as? String
        migratedFrom = plist[StoreFile.migratedFromKey] as? String
        checksum = plist["NSStoreModelVersionChecksumKey"] as? String
        digest = plist["NSStoreModelVersionHashesDigest"] as? String
        versionIdentifiers = (plist["NSStoreModelVersionIdentifiers"] as? [Any])?.compactMap { $0 as? String } ?? []
        versionHashes = Self.hexHashes(plist["NSStoreModelVersionHashes"])
    }

    /// Where Tern before Core Data's hashes named its own hash scheme (`tern.v1`): such a store's
    /// `NSStoreModelVersionHashes` are not Core Data's, so it is recognised by its schema.
    static let earlierTernHashSchemeKey = "TernVersionHashScheme"

    /// Whether `versionHashes` are Core Data's (written by Core Data, or by Tern since it computes
    /// them), not an earlier Tern's own.
    public var hasCoreDataHashes: Bool {
        !versionHashes.isEmpty && hashScheme == nil
    }

    /// Entity name → hash bytes, hex-encoded, from a metadata dictionary of `Data` values.
    private static func hexHashes(_ value: Any?) -> [String: String] {
        var hashes: [String: String] = [:]
        for (entity, value) in value as? [String: Any] ?? [:] {
            if let bytes = value as? Data { hashes[entity] = bytes.map { String(format: "%02x", $0) }.joined() }
        }
        return hashes
    }

    /// The entities `Z_PRIMARYKEY` lists, with the rows of those whose table is among `tables` counted.
    private static func readEntities(_ connection: Connection, countingRowsIn tables: Set<String>) throws -> [Entity] {
        let statement = try connection.prepare("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        var rows = statement.rows()
        var entities: [Entity] = []
        while let row = try rows.next() {
            let parent = Int(row.int64(at: 2))
            entities.append(
                Entity(
                    number: Int(row.int64(at: 0)),
                    name: row.text(at: 1) ?? "",
                    parentNumber: parent == 0 ? nil : parent,
                    maxPrimaryKey: row.int64(at: 3),
                    table: "",
                    rowCount: nil
                ))
        }
        let byNumber = Dictionary(entities.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
        for index in entities.indices {
            // Walk up to the root; a broken or cyclic chain stops at the last entity found.
            var root = entities[index]
            var seen: Set<Int> = [root.number]
            while let parent = root.parentNumber.flatMap({ byNumber[$0] }), seen.insert(parent.number).inserted {
                root = parent
            }
            let table = CoreDataNames.table(forRoot: root.name, number: root.number)
            entities[index].table = table
            if tables.contains(table) {
                entities[index].rowCount = try connection.scalar(
                    "SELECT count(*) FROM \(quoteIdentifier(table)) WHERE Z_ENT = ?", entities[index].number)?.int64
            }
        }
        return entities
    }

    private static func tableNames(_ connection: Connection) throws -> [String] {
        let statement = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        var rows = statement.rows()
        var names: [String] = []
        while let row = try rows.next() {
            names.append(row.text(at: 0) ?? "")
        }
        return names
    }
}
