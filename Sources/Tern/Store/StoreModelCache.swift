import Foundation
import TernInflate
import TernSQLite

/// The model a store was written with, as Core Data keeps it in `Z_MODELCACHE`: one row whose
/// `Z_CONTENT` is raw DEFLATE around the same keyed archive as a compiled `.mom`. A store whose
/// model exists nowhere else (defined in code) can still be checked and migrated from it.
public enum StoreModelCache {
    /// The most bytes a cache may inflate to: real caches are a few kilobytes (the largest
    /// fixture's 11 KB), so anything near this is hostile.
    public static let inflatedLimit = 16 << 20

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
        let archive: [UInt8]
        do {
            archive = try Inflate.raw(compressed, limit: inflatedLimit)
        } catch {
            throw TernError(.badInput, "Z_MODELCACHE: the cached model cannot be inflated: \(error)", path: path)
        }
        do {
            return try withExtendedLifetime(store) { try CompiledModelReader.decode(archive, versionName: versionName) }
        } catch let error as TernError {
            throw TernError(error.kind, "Z_MODELCACHE: \(error.message)", path: path)
        }
    }
}
