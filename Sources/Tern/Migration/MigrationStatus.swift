import Foundation
import TernSQLite

/// Where an unfinished migration stands, read from its record and its step store's checkpoint.
public struct MigrationStatus: Sendable, Codable {
    public struct Unit: Sendable, Codable {
        /// "create instances", "recreate relationships" or "apply policy links".
        public var stage: String
        /// The entity mapping (and relationship) it belongs to.
        public var name: String
        public var done: Bool
        /// Objects (or links) done so far.
        public var count: Int
        /// The last source key committed, for instance creation.
        public var lastKey: Int64
    }

    public var store: String
    /// Where the migrated store goes when it is not the store's own place (`--out`).
    public var output: String?
    public var target: String
    public var steps: [String]
    public var completedSteps: Int
    /// The checkpoint of the step in progress, in the order the units ran; empty when that step
    /// had not committed anything.
    public var units: [Unit]

    /// The status of an unfinished migration into `finalPath`, or nil when there is none.
    public static func read(finalPath: String) throws -> MigrationStatus? {
        guard let run = try MigrationRun.load(at: MigrationRun.path(for: finalPath)) else { return nil }
        var units: [Unit] = []
        if run.completed < run.stepFiles.count, FileManager.default.fileExists(atPath: run.stepFiles[run.completed]),
           let connection = try? Connection(path: run.stepFiles[run.completed], configuration: .init(mode: .readOnly)),
           let statement = try? connection.prepare("SELECT unit, last_key, count, done FROM TERN_PROGRESS ORDER BY rowid") {
            var rows = statement.rows()
            while let row = try rows.next() {
                let parts = (row.text(at: 0) ?? "").split(separator: ":", maxSplits: 2).map(String.init)
                let stage = ["create": "create instances", "links": "recreate relationships", "policylinks": "apply policy links", "hook": "policy relationships"][parts[0]] ?? parts[0]
                units.append(Unit(stage: stage, name: parts.count > 2 ? parts[2] : parts.dropFirst().joined(separator: ":"),
                                  done: row.int64(at: 3) != 0, count: Int(row.int64(at: 2)), lastKey: row.int64(at: 1)))
            }
        }
        return MigrationStatus(store: run.store, output: run.output, target: run.target, steps: run.steps, completedSteps: run.completed, units: units)
    }
}
