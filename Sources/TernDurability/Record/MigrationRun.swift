import TernDigest
import TernModel
import TernStore
import TernMapping
import Foundation
import TernPlanning

/// The record of a migration in progress, in a small JSON file beside the store
/// (`.NAME.tern-migration.json`), written atomically. With the checkpoints inside each step's
/// file, it lets a migration that was killed continue exactly where it stopped.
public struct MigrationRun: Codable, Sendable {
    /// Everything the result depends on, recorded when the run began (nil in a record an older
    /// tern wrote, which no run can resume).
    public var inputs: Inputs?
    /// The source store's path as given when the run began; a resume must name the same one.
    public var store: String
    /// Where the migrated store goes (`--out`); nil when it replaces the source in place.
    public var output: String?
    /// The name of the model version the run migrates to.
    public var target: String
    /// Each step, in order.
    public var steps: [StepIdentity]
    /// Each step's output file, in order.
    public var stepFiles: [String]
    /// How many steps are complete.
    public var completed: Int
    /// The plan the run runs: a resume runs it again, never a plan made anew (nil in a record an
    /// older tern wrote).
    public var plan: MigrationPlan?
    /// The source file as its digest was read, when it had been still and had no `-wal` frames:
    /// a resume that finds it so again knows the digest without reading it (nil: read it).
    package var sourceFile: StoreFileState?
    /// True while the start checks — the scan for rows Core Data never writes and the digest,
    /// read beside the first pass (`StartChecks`) — have not ended: `inputs.source` is not read
    /// yet. A resume reads them then, if the source is the file recorded, unchanged; otherwise
    /// it starts over.
    package var sourcePending: Bool?
    /// What the start checks found that Core Data reads all the same (`StoreAnomaly.isTolerated`),
    /// carried or dropped as Core Data does: said in the report, a resume's included.
    package var tolerated: [String]?
    /// The external data files the source referred to that were in no folder when the run began
    /// (read as no value, the references carried as they are); nil: none.
    package var absentExternalFiles: [String]?

    /// A new run's record, before any step completes.
    package init(
        inputs: Inputs?, store: String, output: String?, target: String, steps: [StepIdentity], stepFiles: [String], completed: Int,
        plan: MigrationPlan?
    ) {
        self.inputs = inputs
        self.store = store
        self.output = output
        self.target = target
        self.steps = steps
        self.stepFiles = stepFiles
        self.completed = completed
        self.plan = plan
    }

    /// Where the record of a migration into `finalPath` is kept.
    public static func path(for finalPath: String) -> String {
        let url = URL(fileURLWithPath: finalPath)
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tern-migration.json").path
    }

    /// The hidden file step `index` (from 1) writes, beside `finalPath`; named after the whole
    /// file name, so `x.sqlite` and `x.db` in one directory never share one.
    package static func stepFile(for finalPath: String, index: Int) -> String {
        let url = URL(fileURLWithPath: finalPath)
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tern-step\(index).sqlite").path
    }

    /// The record at `path`, or nil when there is none. Throws `TernError(.badInput)` when it is unreadable.
    public static func load(at path: String) throws -> MigrationRun? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let run: MigrationRun
        do {
            run = try JSONDecoder().decode(MigrationRun.self, from: data)
        } catch {
            throw TernError(
                .badInput, "the record of an unfinished migration is unreadable (\(error.localizedDescription)); remove it to start over", path: path)
        }
        return run
    }

    /// The record at `path` whose plan a resume runs again: the plan must be the one tern sealed
    /// when it made it (a record edited since, or one an earlier tern wrote without a seal, is
    /// refused; `--restart` discards it, which reads the record without this check).
    public static func loadForResume(at path: String) throws -> MigrationRun? {
        guard let run = try load(at: path) else { return nil }
        if let plan = run.plan, !plan.steps.isEmpty {
            do {
                try plan.checkSeal(path: path)
            } catch let error as TernError {
                throw TernError(.badInput, "the unfinished migration's record: \(error.message); start over with --restart", path: path)
            }
        }
        return run
    }

    /// Writes the record to a temporary file and renames it into place, so it is whole or absent.
    package func save(at path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // Durable before a step's input is removed on its word: a power cut keeps it whole.
        try DurableFile.write([UInt8](try encoder.encode(self)), to: path, what: "the migration's record")
    }

    /// What a migration's result depends on, each part named so a refused resume can say which
    /// input changed.
    public struct Inputs: Codable, Sendable, Equatable {
        /// The source store's content when the run began.
        public var source: StoreDigest
        /// "VERSION" → checksum of that model version, for every version of the chain.
        public var versions: [String: String]
        /// "VERSION" → a digest of its whole definition: defaults, validation rules and renaming
        /// identifiers too, which version hashes leave out, yet which decide what is written.
        /// Nil in a record written before Tern recorded it.
        public var definitions: [String: String]?
        /// Each mapping's origin (its file, or "inferred") → a digest of the mapping model that runs.
        public var mappings: [String: String]
        /// The entity mappings that run in Swift: they decide destination keys, so a resume must
        /// take the same paths.
        public var inSwift: [EntityMappingIdentity]
        /// A digest of everything the plan decides (`MigrationPlan.contentDigest()`): its every
        /// field, not only those named above. Nil in a record written before Tern recorded it.
        public var plan: String?

        /// The inputs of migrating `source` as `plan` says, read from the plan's own values
        /// (its versions, mappings and decisions): nothing is decided again here.
        package static func of(source: StoreDigest, plan: MigrationPlan) -> Inputs {
            var inputs = Inputs(source: source, versions: [:], definitions: [:], mappings: [:], inSwift: [])
            for step in plan.steps {
                for version in [step.source, step.destination] {
                    inputs.versions[version.versionName] = version.versionChecksum
                    let definition = (try? ModelExporter.yaml(version)) ?? ""
                    inputs.definitions?[version.versionName] = Data(SHA256.hash(data: Data(definition.utf8))).base64EncodedString()
                }
                inputs.inSwift += (step.decisions ?? []).filter(\.runsInSwift).map {
                    EntityMappingIdentity(step: step.identity, pass: $0.pass + 1, name: step.passes[$0.pass].entities[$0.entity].mapping.name)
                }
                // The mapping as it runs (not its file's bytes): a plan saved or recorded runs
                // the model it holds, whatever its file says since.
                let encoder = JSONEncoder()
                encoder.outputFormatting = .sortedKeys
                for (origin, pass) in zip(step.origins, step.passes) {
                    let encoded = (try? encoder.encode(pass.model)) ?? Data()
                    inputs.mappings[origin] = Data(SHA256.hash(data: encoded)).base64EncodedString()
                }
            }
            inputs.plan = try? plan.contentDigest()
            return inputs
        }

        /// A digest of all of them, recorded in the migrated store (`StoreFile.migratedFromKey`).
        package var fingerprint: String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let encoded = (try? encoder.encode(self)) ?? Data()
            return Data(SHA256.hash(data: encoded)).map { String(format: "%02x", $0) }.joined()
        }

        /// What differs from `recorded`, in words naming each input.
        package func differences(from recorded: Inputs) -> [String] {
            var lines =
                source.incomparability(with: recorded.source).map { [$0] }
                ?? source.changes(since: recorded.source).map { "the source store changed: \($0)" }
            for name in Set(versions.keys).union(recorded.versions.keys).sorted() where versions[name] != recorded.versions[name] {
                lines.append(
                    recorded.versions[name] == nil
                        ? "the chain now goes through version \(name)"
                        : versions[name] == nil ? "the chain no longer goes through version \(name)" : "model version \(name) changed")
            }
            let (now, then) = (definitions ?? [:], recorded.definitions ?? [:])
            for name in Set(now.keys).intersection(then.keys).sorted() where versions[name] == recorded.versions[name] && now[name] != then[name] {
                lines.append(
                    "model version \(name) changed (in what its version hashes leave out: a default, a validation rule, a renaming identifier or another detail)"
                )
            }
            for origin in Set(mappings.keys).union(recorded.mappings.keys).sorted() where mappings[origin] != recorded.mappings[origin] {
                lines.append(
                    recorded.mappings[origin] == nil
                        ? "the chain now uses mapping \(origin)"
                        : mappings[origin] == nil ? "the chain no longer uses mapping \(origin)" : "mapping \(origin) changed")
            }
            if Set(inSwift) != Set(recorded.inSwift) {
                lines.append("other entity mappings run in Swift (then: \(Self.list(recorded.inSwift)); now: \(Self.list(inSwift)))")
            }
            return lines
        }

        private static func list(_ mappings: [EntityMappingIdentity]) -> String {
            mappings.isEmpty ? "none" : mappings.map(\.description).sorted().joined(separator: ", ")
        }
    }
}
