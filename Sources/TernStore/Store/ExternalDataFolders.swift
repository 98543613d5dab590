import TernDigest
import TernModel
import Foundation
import TernSQLite

/// Where one step finds the files of externally stored values and where it writes new ones.
///
/// A value whose stored form is copied as it is keeps its reference, and the file is carried at
/// delivery (`ExternalDataCarrier`). Every other value crosses as the app sees it: decoded from
/// its marker or its file (`tern_external_bytes`), and written in the destination's form
/// (`tern_external_store`): inline behind its marker, or, above `ExternalBinaryData.threshold`,
/// as a new file in the step's own folder — before the row that refers to it commits.
public struct ExternalDataFolders: Sendable {
    /// Folders a reference may name a file in: the original store's, and those of earlier
    /// steps' stores (which hold the files of values a step rewrote).
    public var lookup: [String]
    /// The destination store's folder, where new files go; nil: every value is written inline.
    public var newFiles: String?
    /// Files the source referred to that were in no folder when the run began: Core Data reads
    /// such a value as no value, and so does a decoding here (a file gone since is an error).
    public var absent: Set<String> = []

    /// Folders to read files from, in `lookup` order, and the folder new files go to (nil: all inline).
    public init(lookup: [String] = [], newFiles: String? = nil) {
        self.lookup = lookup
        self.newFiles = newFiles
    }

    /// Source `store` → destination `store`, nothing else: a step run on its own.
    public init(source: String, destination: String?) {
        self.init(lookup: [ExternalBinaryData.folder(forStore: source)], newFiles: destination.map(ExternalBinaryData.folder(forStore:)))
    }

    /// SQLite's default limit on one value (`SQLITE_MAX_LENGTH`).
    static let largestValue = 1_000_000_000

    /// Every folder a value of the destination may be found in.
    var readable: [String] { lookup + (newFiles.map { [$0] } ?? []) }

    /// The file `name` in the first folder that has it.
    func path(of name: String) -> String? {
        var info = stat()
        return readable.lazy.map { $0 + "/" + name }.first { lstat($0, &info) == 0 }
    }

    /// The bytes of the file a reference names; only a regular file is read (a FIFO would block).
    func bytes(of name: String) throws -> [UInt8] {
        guard let path = path(of: name) else {
            throw TernError(.io, "external data file \(name) does not exist in \(readable.joined(separator: " or "))")
        }
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw TernError(.badInput, "external data file \(name) is not a regular file", path: path)
        }
        guard Int(info.st_size) <= Self.largestValue else {
            throw TernError(
                .badInput,
                "external data file \(name) holds \(info.st_size) bytes, more than SQLite takes in one value (\(Self.largestValue)): it cannot be brought into a store",
                path: path)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TernError(.io, "cannot read external data file \(name)", path: path)
        }
        return [UInt8](data)
    }

    /// A stored value as the app sees it: the bytes behind an inline marker, the contents of the
    /// file a reference names, or the value itself when it has no marker. Text is its bytes, as
    /// Core Data reads a binary attribute's column whatever it holds.
    func decode(_ value: SQLiteValue) throws -> SQLiteValue {
        guard case .blob(let stored) = Self.bytes(value) else { return value }
        if let name = ExternalBinaryData.reference(in: stored) {
            if absent.contains(name), path(of: name) == nil { return .null }
            return .blob(try bytes(of: name))
        }
        if stored.first == ExternalBinaryData.inlineMarker { return .blob(Array(stored.dropFirst())) }
        return .blob(stored)
    }

    /// A binary attribute's value as Core Data reads its column: text is its UTF-8 bytes.
    private static func bytes(_ value: SQLiteValue) -> SQLiteValue {
        if case .text(let text) = value { return .blob(Array(text.utf8)) }
        return value
    }

    /// The bytes a stored value takes once decoded: its file's size (0 when there is none to
    /// read; decoding will say why), or its own length.
    func size(of value: SQLiteValue) -> Int {
        guard case .blob(let stored) = value else { return value.text?.utf8.count ?? 0 }
        guard let name = ExternalBinaryData.reference(in: stored) else { return stored.count }
        var info = stat()
        guard let path = path(of: name), stat(path, &info) == 0 else { return 0 }
        return Int(info.st_size)
    }

    /// A value in the form Core Data stores it for an attribute that allows external storage:
    /// `kept` (the stored form it was read from, when the caller knows it is unchanged), else
    /// inline behind its marker, or a new file above the threshold. NULL and non-binary values
    /// stay as they are.
    package func encode(_ value: SQLiteValue, keeping kept: [UInt8]? = nil) throws -> SQLiteValue {
        guard case .blob(let bytes) = Self.bytes(value) else { return value }
        if let kept { return .blob(kept) }
        guard bytes.count > ExternalBinaryData.threshold, let folder = newFiles else { return .blob(ExternalBinaryData.inlineValue(bytes)) }
        let name = UUID().uuidString
        try Self.write(bytes, to: folder, as: name)
        return .blob(ExternalBinaryData.referenceValue(name))
    }

    /// Writes a new file whole and durable under its name: a kill leaves at most a
    /// `.tern-partial` no reference names.
    private static func write(_ bytes: [UInt8], to folder: String, as name: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw TernError(.io, "cannot create the folder for external data: \(error.localizedDescription)", path: folder)
        }
        try DurableFile.write(bytes, to: folder + "/" + name, what: "external data")
    }

    /// Registers on `connection` the SQL functions compiled SQL uses for externally stored
    /// values: `tern_external_bytes(stored)` (`decode`), `tern_external_store(bytes)` (`encode`),
    /// `tern_as_bytes(value)` (text as its bytes, as both read it) and `tern_external_size(stored)`
    /// (`size(of:)`); with a `recorder`, also
    /// `tern_external_own_bytes(stored, attribute)`, which decodes an attribute of the object being
    /// read and tells the recorder the form it was stored in.
    package func register(on connection: Connection, recorder: StoredForms? = nil) throws {
        try connection.createFunction("tern_external_bytes", argumentCount: 1, deterministic: false) { arguments in
            try decode(arguments[0])
        }
        try connection.createFunction("tern_external_store", argumentCount: 1, deterministic: false) { arguments in
            try encode(arguments[0])
        }
        try connection.createFunction("tern_as_bytes", argumentCount: 1) { arguments in
            Self.bytes(arguments[0])
        }
        try connection.createFunction("tern_external_size", argumentCount: 1, deterministic: false) { arguments in
            .integer(Int64(size(of: arguments[0])))
        }
        if let recorder {
            try connection.createFunction("tern_external_own_bytes", argumentCount: 2, deterministic: false) { arguments in
                let decoded = try decode(arguments[0])
                if case .blob(let stored) = Self.bytes(arguments[0]), case .blob(let bytes) = decoded, let attribute = arguments[1].text {
                    recorder.record(attribute, bytes: bytes, storedAs: stored)
                }
                return decoded
            }
        }
    }
}

/// The stored forms of the attributes of the source object being transformed, so a value a
/// policy leaves unchanged is written back exactly as it was stored, as a copy in SQL would —
/// but a reference to a file only into the destination attribute that copies that very source
/// attribute (`StepInputs.storedFormSource`): no file is ever named by two values.
package final class StoredForms {
    private var forms: [String: (hash: SHA256.Digest, stored: [UInt8])] = [:]

    package init() {}

    func record(_ attribute: String, bytes: [UInt8], storedAs stored: [UInt8]) {
        // The form, not a second copy of a large inline value.
        let form = ExternalBinaryData.reference(in: stored) != nil ? stored : Array(stored.prefix(1))
        forms[attribute] = (SHA256.hash(data: bytes), form)
    }

    /// The stored form to write `bytes` in, when they are the source attribute `source`'s,
    /// unchanged; nil: write them anew.
    package func storedForm(of bytes: [UInt8], copying source: String?) -> [UInt8]? {
        guard let source, let (hash, form) = forms[source], SHA256.hash(data: bytes) == hash else { return nil }
        if ExternalBinaryData.reference(in: form) != nil { return form }
        return form.first == ExternalBinaryData.inlineMarker ? ExternalBinaryData.inlineValue(bytes) : bytes
    }

    /// Forgets the previous object's values.
    package func reset() { forms.removeAll(keepingCapacity: true) }
}
