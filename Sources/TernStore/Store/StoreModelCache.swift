import Foundation
import TernModel
import TernInflate
import TernSQLite

/// The model a store was written with, as Core Data keeps it in `Z_MODELCACHE`: one row whose
/// `Z_CONTENT` is raw DEFLATE around the same keyed archive as a compiled `.mom`. A store whose
/// model exists nowhere else (defined in code) can still be checked and migrated from it.
public enum StoreModelCache {
    /// The most bytes a cache may inflate to: real caches are a few kilobytes (the largest
    /// fixture's 11 KB; a model of hundreds of entities a few hundred), so anything near this is
    /// hostile. Decoding holds about a hundred times the archive's size at its peak.
    public static let inflatedLimit = 4 << 20

    /// The name the store's own model goes by as a version: what a mapping file from it names
    /// as its `source`.
    public static let versionName = "Z_MODELCACHE"

    /// The store's own model, named `versionName`, when it carries one whose layout is the
    /// store's schema (a cache that disagrees with the tables is not taken).
    public static func model(ofStoreAt path: String) throws -> ObjectModel? {
        guard let cached = try read(storeAt: path, versionName: versionName), try describes(cached, storeAt: path) else { return nil }
        return cached
    }

    /// Whether `cached` is the store's model: its tables and the entities `Z_PRIMARYKEY` numbers.
    package static func describes(_ cached: ObjectModel, storeAt path: String) throws -> Bool {
        // A model with problems (an inheritance cycle, a dangling inverse) has no layout to compare.
        guard cached.problems().isEmpty else { return false }
        let store = try ReadOnlyStore(path: path)
        let (metadata, schema) = try withExtendedLifetime(store) {
            let connection = try store.connect()
            return (try StoreMetadata.read(from: connection, path: path, countingRows: false), try LayoutSignature(connection: connection))
        }
        return VersionMatch.differences(of: cached, from: metadata, signature: schema).isEmpty
    }

    /// The store's cached model, named `versionName`; nil when the store has no cache (Core Data
    /// before iOS 11, or a store Tern wrote).
    ///
    /// - Throws: `TernError` naming the store when the cache is there but unreadable: not
    ///   DEFLATE, inflating past `inflatedLimit`, or not a model archive.
    public static func read(storeAt path: String, versionName: String) throws -> ObjectModel? {
        let store = try ReadOnlyStore(path: path)
        let connection = try store.connect()
        let table = try connection.scalar("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'Z_MODELCACHE'")
        guard table != nil, case .blob(let compressed)? = try connection.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1") else {
            return withExtendedLifetime(store) { nil }
        }
        do {
            return try withExtendedLifetime(store) { try decode(compressed, versionName: versionName) }
        } catch let error as TernError {
            throw TernError(error.kind, error.message, path: path)
        }
    }

    /// Decodes a cache's `Z_CONTENT`: inflated (at most `inflatedLimit` bytes), then read as a
    /// compiled model named `versionName`. Public so the fuzzer reaches it.
    ///
    /// - Throws: `TernError` (bad input) beginning "Z_MODELCACHE:", saying what is wrong.
    public static func decode(_ compressed: [UInt8], versionName: String) throws -> ObjectModel {
        let archive: [UInt8]
        do {
            archive = try Inflate.raw(compressed, limit: inflatedLimit)
        } catch {
            throw TernError(.badInput, "Z_MODELCACHE: the cached model cannot be inflated: \(error)")
        }
        do {
            return try CompiledModelReader.decode(archive, versionName: versionName)
        } catch let error as TernError {
            throw TernError(error.kind, "Z_MODELCACHE: \(error.message)")
        }
    }
}
