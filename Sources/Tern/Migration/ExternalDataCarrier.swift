import Crypto
import Foundation
import TernSQLite

/// Carries the files of externally stored values (`ExternalBinaryData`) with a migrated store,
/// and proves them: a migration that moved the rows but not the files would lose every large
/// attachment while its small, inline ones survive.
///
/// Values are copied as they are, so a migrated value names the same file as its source value;
/// the files are hard links of the source's (copies across filesystems), made before the store
/// that refers to them is delivered, and each is checked to hold the source file's bytes.
enum ExternalDataCarrier {
    /// Gives every file `migrated` refers to a name in `destination` (a store's
    /// `_EXTERNAL_DATA` folder) from `source`, and proves each holds the source's bytes. Returns
    /// how many files it proved.
    ///
    /// - Throws: `MigrationFailure.verification` naming the entity, attribute, key and file of a
    ///   reference whose file is missing or differs.
    @discardableResult
    static func carry(into migrated: String, model: ObjectModel, from source: String, to destination: String) throws -> Int {
        let layout = StoreLayout(model: model)
        // Read without leaving a -wal or -shm beside a file about to be renamed.
        let store = try ReadOnlyStore(path: migrated)
        let connection = try store.connect()
        defer { try? connection.close() }
        var proved = 0
        for entity in model.entitiesInStoreOrder where !entity.isAbstract {
            guard let entityLayout = layout.entities[entity.name] else { continue }
            for attribute in model.allAttributes(of: entity.name) where attribute.allowsExternalStorage {
                guard let column = entityLayout.attributeColumns[attribute.name] else { continue }
                let statement = try connection.prepare("""
                    SELECT Z_PK, \(quoteIdentifier(column)) FROM \(quoteIdentifier(entityLayout.table))
                    WHERE Z_ENT = \(entityLayout.number) AND substr(\(quoteIdentifier(column)), 1, 1) = X'02' ORDER BY Z_PK
                    """)
                var rows = statement.rows()
                while let row = try rows.next() {
                    let key = row.int64(at: 0)
                    guard let file = row.blob(at: 1).flatMap(ExternalBinaryData.reference) else {
                        throw MigrationFailure.verification("\(entity.name) \(key), \(attribute.name): a value marked as stored outside the store names no file")
                    }
                    try carry(file, from: source, to: destination, naming: "\(entity.name) \(key), \(attribute.name)")
                    proved += 1
                }
            }
        }
        return proved
    }

    /// Gives every file of `source` a name in `destination` too: the folder of a backup that
    /// must open alone.
    static func mirror(_ source: String, to destination: String) throws {
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: source) else { return }
        for file in files.sorted() {
            try carry(file, from: source, to: destination, naming: "the backup's external data")
        }
    }

    private static func carry(_ file: String, from source: String, to destination: String, naming owner: String) throws {
        let original = source + "/" + file
        let carried = destination + "/" + file
        guard FileManager.default.fileExists(atPath: original) else {
            throw MigrationFailure.verification("\(owner): its external file \(file) does not exist in \(source)")
        }
        if source != destination, !FileManager.default.fileExists(atPath: carried) {
            do {
                if !FileManager.default.fileExists(atPath: destination) {
                    try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
                }
                if link(original, carried) != 0 {
                    try FileManager.default.copyItem(atPath: original, toPath: carried)
                }
            } catch {
                throw MigrationError.io("cannot carry an external data file: \(error.localizedDescription)", path: carried)
            }
        }
        guard FileIdentity(path: original) == FileIdentity(path: carried) || digest(of: original) == digest(of: carried) else {
            throw MigrationFailure.verification("\(owner): its external file \(carried) does not hold the bytes of \(original)")
        }
    }

    /// SHA-256 of a file's bytes, read in chunks; nil when it cannot be read.
    private static func digest(of path: String) -> Data? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var hash = SHA256()
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty { hash.update(data: chunk) }
        return Data(hash.finalize())
    }
}
