import Foundation
import TernModel
import TernSQLite

/// Core Data's encoding of a Binary Data attribute that allows external storage: every value
/// starts with a marker byte, `0x01` followed by the bytes themselves (stored inline), or `0x02`
/// followed by a file's UUID in 36 ASCII characters and a NUL (38 bytes: stored in
/// `.NAME_SUPPORT/_EXTERNAL_DATA/UUID` beside the store, `NAME` the store's file name without its
/// extension). Core Data decides per value, by size (about 100 KB–1 MB depending on the OS).
/// Rows written before the attribute allowed external storage carry no marker. Attributes that do
/// not allow it never have one.
///
/// Sources: parsers of stores Core Data wrote (forensic and import tools), which agree on this;
/// the case of the UUID is kept exactly as stored, since it is also the file's name.
public enum ExternalBinaryData {
    /// The first byte of a value whose bytes follow inline.
    public static let inlineMarker: UInt8 = 0x01
    /// The first byte of a value whose bytes are in a file, named by the UUID that follows.
    public static let externalMarker: UInt8 = 0x02
    /// Values longer than this are written as files when Tern writes a value in Core Data's
    /// form. Core Data's own choice is undocumented (observed from about 100 KB to 1 MB); a
    /// reader takes either form, so only the placement differs.
    public static let threshold = 100 * 1024

    /// The file name a value refers to, when it is stored outside the store.
    public static func reference(in value: [UInt8]) -> String? {
        guard value.count >= 37, value.count <= 38, value[0] == externalMarker else { return nil }
        let name = value[1..<37]
        guard value.count == 37 || value[37] == 0,
            name.allSatisfy({ $0 == UInt8(ascii: "-") || ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x46) || ($0 >= 0x61 && $0 <= 0x66) })
        else { return nil }
        return String(decoding: name, as: UTF8.self)
    }

    /// The column value that refers to the external file `name` (a UUID string).
    public static func referenceValue(_ name: String) -> [UInt8] {
        [externalMarker] + Array(name.utf8) + [0]
    }

    /// The column value holding `bytes` inline.
    public static func inlineValue(_ bytes: [UInt8]) -> [UInt8] {
        [inlineMarker] + bytes
    }

    /// The folder holding the external files of the store at `store`.
    public static func folder(forStore store: String) -> String {
        supportFolder(forStore: store) + "/_EXTERNAL_DATA"
    }

    /// Every column of a store's entity tables, as (table, column): without a model, any of
    /// them may hold references (Core Data's own tables are `Z_…`).
    package static func entityColumns(in connection: Connection) throws -> [(table: String, column: String)] {
        try connection.tableColumns().filter { $0.table.hasPrefix("Z") && !$0.table.hasPrefix("Z_") }
            .flatMap { table in table.columns.map { (table.table, $0) } }
    }

    /// An SQL condition true for the values of `column` that start like a reference
    /// (`reference(in:)` has the last word).
    package static func mayBeReference(_ column: String) -> String {
        "typeof(\(quoteIdentifier(column))) = 'blob' AND substr(\(quoteIdentifier(column)), 1, 1) = X'02'"
    }

    /// `.NAME_SUPPORT` beside the store: Core Data's folder for the store's files.
    public static func supportFolder(forStore store: String) -> String {
        let url = URL(fileURLWithPath: store)
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent)_SUPPORT").path
    }
}

/// How much of one column is stored outside the store, for `tern inspect`.
public struct ExternalDataUsage: Sendable, Equatable, Codable {
    /// The entity table holding the references.
    public var table: String
    /// The column holding the references.
    public var column: String
    /// Values that refer to a file.
    public var values: Int
    /// The size of the files that exist.
    public var bytes: Int
    /// References whose file does not exist, and the first of them.
    public var missing: Int
    /// The file name (a UUID) of the first reference found without its file; nil when none is missing.
    public var firstMissing: String?

    /// Every column of the store's entity tables holding external references, found by their
    /// marker (no model needed), with the files looked up in the store's folder.
    public static func read(storeAt path: String) throws -> [ExternalDataUsage] {
        let store = try ReadOnlyStore(path: path)
        let connection = try store.connect()
        defer { try? connection.close() }
        let folder = ExternalBinaryData.folder(forStore: StoreFile.resolvingLinks(path))
        var usage: [ExternalDataUsage] = []
        for (table, column) in try ExternalBinaryData.entityColumns(in: connection) {
            let references = try connection.prepare(
                "SELECT \(quoteIdentifier(column)) FROM \(quoteIdentifier(table)) WHERE \(ExternalBinaryData.mayBeReference(column))")
            var found = ExternalDataUsage(table: table, column: column, values: 0, bytes: 0, missing: 0, firstMissing: nil)
            var values = references.rows()
            while let row = try values.next() {
                guard let name = row.blob(at: 0).flatMap(ExternalBinaryData.reference) else { continue }
                found.values += 1
                if let size = try? FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.size] as? Int {
                    found.bytes += size
                } else {
                    found.missing += 1
                    found.firstMissing = found.firstMissing ?? name
                }
            }
            if found.values > 0 { usage.append(found) }
        }
        return usage
    }
}
