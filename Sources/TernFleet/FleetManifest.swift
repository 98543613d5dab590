import TernDigest
import Foundation
import Tern
import TernCommands

/// What `tern fleet plan` writes and every task of `tern fleet run` reads: a header line naming the
/// migration (model, target version and mapping files, each by content hash), then one line per
/// store, sorted by path. JSON Lines, so a fleet of millions is written and read a line at a time.
struct FleetManifest: Equatable {
    /// A file the migration depends on, and its content hash when planned.
    struct Input: Codable, Equatable {
        var path: String
        var sha256: String
    }

    /// The first line: what every task must run.
    struct Header: Codable, Equatable {
        /// Says what the file is, so a wrong file is refused by name.
        var tern = "fleet-manifest"
        var format = 1
        var created: String
        var model: Input
        var target: String
        /// The mapping files the model's steps may use (found beside it, or given), by hash.
        var mappings: [Input]
        /// Files given with `--mapping`, which replace those beside the model for their steps.
        var mappingOverrides: [String]
        var versionInfo: Input?
        var stepByStep: Bool
        var stores: Int
        var objects: Int
    }

    /// Where a store stood when the fleet was planned.
    enum State: String, Codable {
        /// Written by an older version: to migrate.
        case pending
        /// At the target already.
        case current
        /// Cannot be migrated as it is; `error` says why.
        case unreadable
    }

    /// One store.
    struct Entry: Codable, Equatable {
        /// Stable for a path: the results file's name.
        var id: String
        /// As written: relative to the manifest's folder when the store is inside it.
        var path: String
        var state: State
        /// The version recognised at planning.
        var version: String?
        /// Objects in the store at planning (0 when unreadable).
        var objects: Int
        /// Steps of the migration at planning.
        var steps: Int
        var error: FleetError?
    }

    var header: Header
    var entries: [Entry]
    /// The manifest's own path: relative store paths are resolved against its folder.
    var path: String

    /// The results folder beside the manifest: `fleet.jsonl` → `fleet.results`.
    var defaultResultsFolder: String {
        let url = URL(fileURLWithPath: path)
        return url.deletingPathExtension().path + ".results"
    }

    /// The store's path for this machine: relative paths are taken from the manifest's folder, so
    /// a fleet on shared storage can be mounted anywhere as long as the manifest travels with it.
    func storePath(_ entry: Entry) -> String {
        resolve(entry.path)
    }

    func resolve(_ path: String) -> String {
        path.hasPrefix("/") ? path : URL(fileURLWithPath: self.path).deletingLastPathComponent().appendingPathComponent(path).standardizedFileURL.path
    }

    /// A store's id: the first 16 hex digits of the SHA-256 of its path as written.
    static func id(forPath path: String) -> String {
        SHA256.hash(data: Data(path.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// `path` as the manifest at `manifestPath` writes it: relative when inside its folder.
    static func written(_ path: String, manifestAt manifestPath: String) -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        let folder = URL(fileURLWithPath: manifestPath).standardizedFileURL.deletingLastPathComponent().path
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        return absolute.hasPrefix(prefix) ? String(absolute.dropFirst(prefix.count)) : absolute
    }

    // MARK: Reading and writing

    /// The JSON Lines text: the header, then the entries.
    func text() throws -> String {
        let encoder = JSONEncoder.fleetLine()
        var lines = [String(decoding: try encoder.encode(header), as: UTF8.self)]
        for entry in entries { lines.append(String(decoding: try encoder.encode(entry), as: UTF8.self)) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The most a manifest may hold: about four million stores.
    static let maximumSize = 1 << 30

    /// Reads a manifest, naming the line at fault when one is not what `fleet plan` writes.
    static func read(_ path: String) throws -> FleetManifest {
        var info = stat()
        guard stat(path, &info) == 0 else { throw TernError(.missingInput, "no such manifest (make one with tern fleet plan)", path: path) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw TernError(.badInput, "is not a file: name the manifest tern fleet plan wrote", path: path) }
        guard info.st_size <= maximumSize else { throw TernError(.badInput, "the manifest is larger than 1 GiB", path: path) }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let decoder = JSONDecoder()
        var header: Header?
        var entries: [Entry] = []
        var ids: Set<String> = []
        for (index, line) in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() where !line.isEmpty {
            let number = index + 1
            guard header != nil else {
                guard let read = try? decoder.decode(Header.self, from: line), read.tern == "fleet-manifest" else {
                    throw TernError(.badInput, "line \(number): not a fleet manifest's header (make one with tern fleet plan)", path: path)
                }
                guard read.format == 1 else {
                    throw TernError(.badInput, "line \(number): manifest format \(read.format); this tern reads format 1", path: path)
                }
                header = read
                continue
            }
            let entry: Entry
            do { entry = try decoder.decode(Entry.self, from: line) } catch {
                throw TernError(.badInput, "line \(number): not a store entry: \(Self.describe(error))", path: path)
            }
            let shown = entry.path.count > 200 ? entry.path.prefix(200) + "…" : entry.path[...]
            guard entry.id == id(forPath: entry.path) else { throw TernError(.badInput, "line \(number): the id of \(shown) is not its path's", path: path) }
            guard ids.insert(entry.id).inserted else { throw TernError(.badInput, "line \(number): \(shown) is listed twice", path: path) }
            entries.append(entry)
        }
        guard let header else { throw TernError(.badInput, "the manifest is empty", path: path) }
        guard header.stores == entries.count else {
            throw TernError(
                .badInput, "the header counts \(header.stores) stores, but \(entries.count) are listed: the file is cut short or was edited", path: path)
        }
        return FleetManifest(header: header, entries: entries, path: path)
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "no \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context), DecodingError.dataCorrupted(let context), DecodingError.valueNotFound(_, let context):
            "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        default: "not JSON"
        }
    }
}
