import Foundation
import TernModel
import TernStore
import Yams

/// An explicit plan for one step (documented in the article "Model and mapping files" under "Plan files"): the passes in
/// order, each a mapping model file and optionally a predicate that restricts every entity
/// mapping of that pass (combined with their own filters), so a large step can be cut into
/// passes by entity and by predicate.
///
/// ```yaml
/// source: Events 1
/// destination: Events 2
/// passes:
///   - mapping: mappings/step1.yaml
///   - mapping: mappings/step2.yaml
///     filter: timeStamp >= 0
/// ```
public struct MigrationPlanFile: Sendable, Equatable {
    /// One pass: a mapping model run over the whole store, optionally restricted by `filter`.
    public struct Pass: Sendable, Equatable {
        /// The mapping model, as an absolute path (the file names it relative to itself).
        public var mapping: String
        /// NSPredicate text over each mapping's source entity, combined with the mapping's own filter by AND;
        /// nil migrates every instance the mapping would.
        public var filter: String?
    }

    /// The name of the model version the step starts from.
    public var source: String
    /// The name of the model version the step ends at.
    public var destination: String
    /// The passes, in the order they run; never empty.
    public var passes: [Pass]

    private struct File: Decodable {
        var source: String
        var destination: String
        var passes: [PassFields]

        private enum CodingKeys: String, CodingKey, CaseIterable { case source, destination, passes }

        init(from decoder: Decoder) throws {
            try decoder.rejectUnknownKeys(allowed: Set(CodingKeys.allCases.map(\.rawValue)), in: "a plan")
            let c = try decoder.container(keyedBy: CodingKeys.self)
            source = try c.decode(String.self, forKey: .source)
            destination = try c.decode(String.self, forKey: .destination)
            passes = try c.decode([PassFields].self, forKey: .passes)
        }
    }

    private struct PassFields: Decodable {
        var mapping: String
        var filter: String?

        private enum CodingKeys: String, CodingKey, CaseIterable { case mapping, filter }

        init(from decoder: Decoder) throws {
            try decoder.rejectUnknownKeys(allowed: Set(CodingKeys.allCases.map(\.rawValue)), in: "a pass")
            let c = try decoder.container(keyedBy: CodingKeys.self)
            mapping = try c.decode(String.self, forKey: .mapping)
            filter = try c.decodeIfPresent(String.self, forKey: .filter)
        }
    }

    /// Whether a YAML file is a plan (it has `passes`) rather than a mapping model.
    package static func isPlan(_ path: String) -> Bool {
        guard path.hasSuffix(".yaml") || path.hasSuffix(".yml"),
            let text = try? String(contentsOfFile: path, encoding: .utf8), YAMLComplexKeys.first(in: text) == nil,
            let node = try? Yams.compose(yaml: text), let mapping = node.mapping
        else { return false }
        return mapping["passes"] != nil
    }

    /// Reads a plan file.
    ///
    /// - Throws: `TernError` naming the file: syntax errors with line and column, unknown keys,
    ///   a plan without passes.
    public static func read(at path: String) throws -> MigrationPlanFile {
        let url = URL(fileURLWithPath: path)
        let file: File = try TernModelFile.decode(url)
        guard !file.passes.isEmpty else {
            throw TernError(.badInput, "a plan needs at least one pass", path: path)
        }
        let directory = url.deletingLastPathComponent()
        return MigrationPlanFile(
            source: file.source, destination: file.destination,
            passes: file.passes.map { pass in
                let mapping = pass.mapping.hasPrefix("/") ? pass.mapping : directory.appendingPathComponent(pass.mapping).standardizedFileURL.path
                return Pass(mapping: mapping, filter: pass.filter)
            })
    }
}
