import Crypto
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
            throw TernError(.badInput, "external data file \(name) holds \(info.st_size) bytes, more than SQLite takes in one value (\(Self.largestValue)): it cannot be brought into a store", path: path)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TernError(.io, "cannot read external data file \(name)", path: path)
        }
        return [UInt8](data)
    }

    /// A stored value as the app sees it: the bytes behind an inline marker, the contents of the
    /// file a reference names, or the value itself when it has no marker. Tells `recorder` which
    /// stored form gave which bytes, so an unchanged value can be written back in that form.
    func decode(_ value: SQLiteValue, recorder: StoredForms? = nil) throws -> SQLiteValue {
        guard case .blob(let stored) = value else { return value }
        let bytes: [UInt8]
        if let name = ExternalBinaryData.reference(in: stored) {
            bytes = try self.bytes(of: name)
        } else if stored.first == ExternalBinaryData.inlineMarker {
            bytes = Array(stored.dropFirst())
        } else {
            bytes = stored
        }
        recorder?.record(bytes, storedAs: stored)
        return .blob(bytes)
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
    /// the stored form it was read from when it is unchanged (`recorder`), else inline behind
    /// its marker, or a new file above the threshold. NULL and non-binary values stay as they are.
    func encode(_ value: SQLiteValue, recorder: StoredForms? = nil) throws -> SQLiteValue {
        guard case .blob(let bytes) = value else { return value }
        if let stored = recorder?.storedForm(of: bytes) { return .blob(stored) }
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
    /// values: `tern_external_bytes(stored)` (`decode`), `tern_external_store(bytes)` (`encode`)
    /// and `tern_external_size(stored)` (`size(of:)`).
    func register(on connection: Connection, recorder: StoredForms? = nil) throws {
        try connection.createFunction("tern_external_bytes", argumentCount: 1, deterministic: false) { arguments in
            try decode(arguments[0], recorder: recorder)
        }
        try connection.createFunction("tern_external_store", argumentCount: 1, deterministic: false) { arguments in
            try encode(arguments[0])
        }
        try connection.createFunction("tern_external_size", argumentCount: 1, deterministic: false) { arguments in
            .integer(Int64(size(of: arguments[0])))
        }
    }
}

/// The stored forms of the values one source object was read with, by their bytes' SHA-256: a
/// policy that leaves a value unchanged gets it written back exactly as it was stored (the same
/// file, the same inline value), as a copy in SQL would. A reference to a file is handed back
/// once, and only when `reusesFiles`: two values never name one file (see
/// `StepInputs.storedFormCopy`), so a second copy is written anew.
final class StoredForms {
    private let reusesFiles: Bool

    init(reusesFiles: Bool = true) {
        self.reusesFiles = reusesFiles
    }

    private enum Form {
        case reference([UInt8])
        case inline
        case unmarked
    }

    private var forms: [SHA256.Digest: Form] = [:]

    func record(_ bytes: [UInt8], storedAs stored: [UInt8]) {
        // The form, not a second copy of a large inline value.
        let form: Form = ExternalBinaryData.reference(in: stored) != nil ? .reference(stored) : stored.first == ExternalBinaryData.inlineMarker ? .inline : .unmarked
        forms[SHA256.hash(data: bytes)] = form
    }

    func storedForm(of bytes: [UInt8]) -> [UInt8]? {
        guard !forms.isEmpty, case let hash = SHA256.hash(data: bytes), let form = forms[hash] else { return nil }
        switch form {
        case .reference(let stored):
            forms[hash] = nil
            return reusesFiles ? stored : nil
        case .inline: return ExternalBinaryData.inlineValue(bytes)
        case .unmarked: return bytes
        }
    }

    /// Forgets the previous object's values.
    func reset() { forms.removeAll(keepingCapacity: true) }
}
