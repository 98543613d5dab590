import Foundation
import TernModel
import TernStore

/// Reads a mapping model in any form Tern understands and checks it against its model versions.
public enum MappingLoader {
    /// Reads Tern's YAML mapping file, Xcode's `.xcmappingmodel` (expressions Xcode generates are
    /// filled from the two versions) or a compiled `.cdm`, then validates it.
    ///
    /// `now` is what `now()` in its expressions gives (seconds since 2001-01-01): a migration
    /// passes its `MigrationOptions.now`, so every object of a run gets the same value.
    ///
    /// - Throws: `TernError` naming the file, and for an invalid mapping every problem with the
    ///   entity mapping and property at fault.
    public static func load(
        _ path: String, source: ObjectModel, destination: ObjectModel, earlierMappings: Set<String> = [],
        now: Double = Date().timeIntervalSinceReferenceDate
    ) throws -> ValidatedMapping {
        try read(path, source: source, destination: destination).validate(
            source: source, destination: destination, now: now, file: path, earlierMappings: earlierMappings)
    }

    /// Reads the mapping model at `path` (YAML, `.xcmappingmodel` or compiled `.cdm`) as it is,
    /// with the versions of `model` it maps between (a compiled one's by its entities' hashes):
    /// for tools that read what a mapping says, such as `tern policy scaffold`.
    ///
    /// - Throws: `TernError` naming the file, when it is no mapping model or names no version of `model`.
    public static func read(_ path: String, in model: VersionedModel) throws -> MappingModel {
        let (from, to) = try versions(of: path, in: model)
        guard let from, let to, let source = model.version(named: from), let destination = model.version(named: to) else {
            throw TernError(
                .badInput,
                "the mapping model maps \(from ?? "?") → \(to ?? "?"), which are not versions of \(model.name) (its versions: \(model.versions.map(\.versionName).joined(separator: ", ")))",
                path: path)
        }
        var mapping = try read(path, source: source, destination: destination)
        mapping.sourceVersion = from
        mapping.destinationVersion = to
        return mapping
    }

    /// Reads a mapping model without validating it (a plan may still add filters).
    static func read(_ path: String, source: ObjectModel, destination: ObjectModel) throws -> MappingModel {
        let url = URL(fileURLWithPath: path)
        guard FileManager.default.fileExists(atPath: path) else {
            throw TernError(.missingInput, "no such mapping model", path: path)
        }
        switch url.pathExtension {
        case "xcmappingmodel", "xml":
            return try XcodeMappingReader.read(at: url).resolvingDefaults(source: source, destination: destination)
        case "yaml", "yml":
            return try TernMappingFile.read(at: url)
        case "cdm":
            return try CompiledMappingReader.read(at: url).model
        default:
            throw TernError(.badInput, "not a mapping model: expected a .yaml mapping file, an .xcmappingmodel or a compiled .cdm", path: path)
        }
    }

    /// The passes of a step given as a plan file: each pass's mapping model with the pass's
    /// filter added to every entity mapping that reads a source, validated in order.
    package static func loadPasses(ofPlan path: String, source: ObjectModel, destination: ObjectModel, now: Double) throws -> [(
        file: String, mapping: ValidatedMapping
    )] {
        let plan = try MigrationPlanFile.read(at: path)
        var earlier: Set<String> = []
        var passes: [(file: String, mapping: ValidatedMapping)] = []
        for (index, pass) in plan.passes.enumerated() {
            var model = try read(pass.mapping, source: source, destination: destination)
            if let filter = pass.filter {
                for position in model.entityMappings.indices where model.entityMappings[position].sourceEntity != nil {
                    let own = model.entityMappings[position].filterPredicate
                    model.entityMappings[position].filterPredicate = own.map { "(\($0)) AND (\(filter))" } ?? filter
                }
            }
            let validated = try model.validate(
                source: source, destination: destination, now: now, file: "\(pass.mapping) (pass \(index + 1) of \(path))", earlierMappings: earlier)
            earlier.formUnion(model.entityMappings.map(\.name))
            passes.append((pass.mapping, validated))
        }
        return passes
    }

    /// The YAML text of a mapping model in Tern's format.
    public static func yaml(_ model: MappingModel) throws -> String {
        try TernMappingFile.text(model)
    }
}

extension MappingLoader {
    /// The source and destination version names a mapping file declares.
    package static func versions(of file: String, in model: VersionedModel) throws -> (String?, String?) {
        if MigrationPlanFile.isPlan(file) {
            let plan = try MigrationPlanFile.read(at: file)
            return (plan.source, plan.destination)
        }
        let url = URL(fileURLWithPath: file)
        if url.pathExtension == "cdm" {
            // A compiled mapping names no versions: its entities' hashes say which they are.
            return try CompiledMappingReader.read(at: url).versions(in: model)
        }
        if url.pathExtension == "xcmappingmodel" || url.lastPathComponent == "xcmapping.xml" {
            let imported = try XcodeMappingReader.read(at: url)
            return (imported.sourceModelName, imported.destinationModelName)
        }
        let model = try TernMappingFile.read(at: url)
        return (model.sourceVersion, model.destinationVersion)
    }
}
