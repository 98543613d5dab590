import Crypto
import Foundation

/// The record of a migration in progress, in a small JSON file beside the store
/// (`.NAME.tern-migration.json`), written atomically. With the checkpoints inside each step's
/// file, it lets a migration that was killed continue exactly where it stopped.
public struct MigrationRun: Codable, Sendable, Equatable {
    /// A digest of everything the result depends on: the source store (its UUID and key
    /// counters), every model version of the chain, every mapping file's contents, the target.
    public var identity: String
    public var store: String
    public var output: String?
    public var target: String
    /// "A → B" for each step.
    public var steps: [String]
    /// Each step's output file, in order.
    public var stepFiles: [String]
    /// How many steps are complete.
    public var completed: Int

    /// Where the record of a migration into `finalPath` is kept.
    public static func path(for finalPath: String) -> String {
        let url = URL(fileURLWithPath: finalPath)
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tern-migration.json").path
    }

    /// The hidden file step `index` (from 1) writes, beside `finalPath`.
    static func stepFile(for finalPath: String, index: Int) -> String {
        let url = URL(fileURLWithPath: finalPath)
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent).tern-step\(index).sqlite").path
    }

    public static func load(at path: String) throws -> MigrationRun? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        do {
            return try JSONDecoder().decode(MigrationRun.self, from: data)
        } catch {
            throw TernError(.badInput, "the record of an unfinished migration is unreadable (\(error.localizedDescription)); remove it to start over", path: path)
        }
    }

    /// Writes the record to a temporary file and renames it into place, so it is whole or absent.
    func save(at path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let temporary = path + ".tmp"
        do {
            try encoder.encode(self).write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, path) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        } catch {
            throw TernError(.io, "cannot record the migration's progress: \(error.localizedDescription)", path: path)
        }
    }

    /// The identity of migrating the store described by `metadata` along `plan`.
    /// `runsInSwift` is part of it: which mappings run in Swift decides destination keys, so a
    /// resume must take the same paths.
    static func identity(metadata: StoreMetadata, plan: StoreMigration.Plan, runsInSwift: (EntityMapping) -> Bool) throws -> String {
        var parts = [metadata.uuid ?? "", plan.storeVersion, plan.targetVersion]
        parts += metadata.entities.map { "\($0.name)=\($0.maxPrimaryKey)" }
        for step in plan.steps {
            parts.append("\(step.source.versionName)=\(step.source.versionChecksum)")
            parts.append("\(step.destination.versionName)=\(step.destination.versionChecksum)")
            for pass in step.passes {
                parts += pass.entities.map(\.mapping).filter(runsInSwift).map { "in Swift: \($0.name)" }
            }
            for origin in step.origins {
                parts.append(origin)
                if let contents = FileManager.default.contents(atPath: origin) ?? FileManager.default.contents(atPath: origin + "/xcmapping.xml") {
                    parts.append(Data(SHA256.hash(data: contents)).base64EncodedString())
                }
            }
        }
        return Data(SHA256.hash(data: Data(parts.joined(separator: "\n").utf8))).map { String(format: "%02x", $0) }.joined()
    }
}
