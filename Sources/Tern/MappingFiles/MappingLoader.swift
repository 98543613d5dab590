import Foundation

/// Reads a mapping model in any form Tern understands and checks it against its model versions.
public enum MappingLoader {
    /// Reads Tern's YAML mapping file or Xcode's `.xcmappingmodel` (expressions Xcode generates are
    /// filled from the two versions), then validates it.
    ///
    /// - Throws: `TernError` naming the file, and for an invalid mapping every problem with the
    ///   entity mapping and property at fault.
    public static func load(_ path: String, source: ObjectModel, destination: ObjectModel, earlierMappings: Set<String> = []) throws -> ValidatedMapping {
        let url = URL(fileURLWithPath: path)
        guard FileManager.default.fileExists(atPath: path) else {
            throw TernError(.missingInput, "no such mapping model", path: path)
        }
        let model: MappingModel
        switch url.pathExtension {
        case "xcmappingmodel", "xml":
            model = try XcodeMappingReader.read(at: url).resolvingDefaults(source: source, destination: destination)
        case "yaml", "yml":
            model = try TernMappingFile.read(at: url)
        default:
            throw TernError(.badInput, "not a mapping model: expected a .yaml mapping file or an .xcmappingmodel", path: path)
        }
        return try model.validate(source: source, destination: destination, file: path, earlierMappings: earlierMappings)
    }

    /// The YAML text of a mapping model in Tern's format.
    public static func yaml(_ model: MappingModel) throws -> String {
        try TernMappingFile.text(model)
    }
}
