import Foundation
import Tern
import TernCommands

/// What one attempt at one store of a fleet did: a JSON line in the store's results file.
struct StoreOutcome: Codable, Equatable, Sendable {
    enum Status: String, Codable, Sendable, CaseIterable {
        /// The attempt took the lease and began; a later line says how it ended, unless it was
        /// killed.
        case started
        /// Migrated to the target, verified and in place.
        case migrated
        /// At the target already: nothing to do.
        case skipped
        /// A permanent failure: retrying cannot help (`error` says why).
        case failed
        /// Stopped before it finished (a stop request, I/O, the store in use): a retry continues.
        case interrupted
    }

    var id: String
    var path: String
    var status: Status
    var from: String?
    var to: String?
    /// Objects the migration created (0 unless migrated).
    var objects: Int = 0
    var seconds: Double = 0
    /// The task's peak resident memory during this store's passes, in bytes (with `--parallel`,
    /// the process's, shared by the stores migrating at once).
    var peakMemory: Int?
    /// 1 for the first attempt at this store, counting attempts that were killed.
    var attempt: Int
    var error: FleetError?
    /// Anything else a person reading the outcome should know.
    var note: String?
    /// "index/count".
    var shard: String
    var task: String
    var host: String
    /// Unix seconds.
    var started: Double
    var finished: Double?
}

/// The results folder on the shared storage: one file per store (`ID.jsonl`), appended to only
/// by the task holding the store's lease, so tasks on different machines never write one file at
/// once (appends are not atomic across NFS clients).
struct ResultsFolder: Sendable {
    let path: String

    init(path: String) throws {
        self.path = path
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch {
            throw TernError(.io, "cannot create the results folder: \(error.localizedDescription)", path: path)
        }
    }

    /// For reading only: a folder that does not exist yet holds no results.
    init(reading path: String) { self.path = path }

    func file(for id: String) -> String { path + "/" + id + ".jsonl" }

    /// Appends one line and makes it durable.
    func append(_ outcome: StoreOutcome) throws {
        let bytes = Array(try JSONEncoder.fleetLine().encode(outcome)) + [UInt8(ascii: "\n")]
        let file = file(for: outcome.id)
        let descriptor = open(file, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw TernError(.io, "cannot open the results file: \(String(cString: strerror(errno)))", path: file) }
        defer { close(descriptor) }
        // A line a kill cut short is ended first, so it cannot swallow this one.
        var info = stat(), last: UInt8 = 0
        let line =
            fstat(descriptor, &info) == 0 && info.st_size > 0 && pread(descriptor, &last, 1, info.st_size - 1) == 1 && last != UInt8(ascii: "\n")
            ? [UInt8(ascii: "\n")] + bytes : bytes
        let written = line.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
        guard written == line.count, fsync(descriptor) == 0 else {
            throw TernError(.io, "cannot write the results file: \(String(cString: strerror(errno)))", path: file)
        }
    }

    /// The number of the next attempt at a store: one more than the attempts that began.
    func nextAttempt(of id: String) -> Int {
        outcomes(of: id).filter { $0.status == .started }.count + 1
    }

    /// Every attempt recorded for a store, in order; a line cut short by a kill is skipped.
    func outcomes(of id: String) -> [StoreOutcome] {
        guard let handle = FileHandle(forReadingAtPath: file(for: id)) else { return [] }
        defer { try? handle.close() }
        // A store's file grows by two short lines an attempt; 16 MiB is thousands of attempts.
        let data = (try? handle.read(upToCount: 16 << 20)) ?? Data()
        let decoder = JSONDecoder()
        return data.split(separator: UInt8(ascii: "\n")).compactMap { try? decoder.decode(StoreOutcome.self, from: $0) }
    }
}

extension JSONEncoder {
    /// How the fleet's files write a line: one object, keys sorted (files compare and diff well).
    static func fleetLine() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
