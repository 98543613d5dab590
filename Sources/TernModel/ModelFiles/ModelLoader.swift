import Foundation

/// Finds and reads a model in any of the forms Tern understands, and validates it.
public enum ModelLoader {
    /// Reads the versioned model at `path`:
    /// - an Xcode `.xcdatamodeld` bundle, or a single `.xcdatamodel`;
    /// - a compiled `.momd` bundle, or a single `.mom` (`CompiledModelReader`);
    /// - a directory of Tern model files with a `model.yaml`, or a single version `.yaml` file;
    /// - a folder holding one of these bundles: a project folder with its `.xcdatamodeld`, or an
    ///   app bundle (`MyApp.app/`, its `Contents/Resources/` on macOS) with its one `.momd`,
    ///   whose `.cdm` mapping models beside it are then found too (`MigrationPlanner.mappingFiles`).
    ///
    /// - Throws: `TernError` naming the file, and for an invalid model every problem with the
    ///   entity and property at fault.
    public static func load(_ path: String) throws -> VersionedModel {
        let url = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw TernError(.missingInput, "no such model", path: path)
        }
        var model: VersionedModel
        switch url.pathExtension {
        case "xcdatamodeld":
            model = try XcodeModelReader.readBundle(at: url)
        case "momd":
            model = try CompiledModelReader.readBundle(at: url)
        case "mom":
            let version = try CompiledModelReader.readVersion(at: url)
            model = VersionedModel(name: version.versionName, versions: [version], currentVersionName: version.versionName, path: path)
        case "xcdatamodel":
            var warnings: [ModelWarning] = []
            let version = try XcodeModelReader.readVersion(at: url, warnings: &warnings)
            model = VersionedModel(name: version.versionName, versions: [version], currentVersionName: version.versionName, path: path, warnings: warnings)
        case "yaml", "yml":
            let version = try TernModelFile.readVersion(at: url)
            model = VersionedModel(name: version.versionName, versions: [version], currentVersionName: version.versionName, path: path)
        default:
            guard isDirectory.boolValue else {
                throw TernError(
                    .badInput,
                    "not a model: expected an .xcdatamodeld or .xcdatamodel bundle, a compiled .momd or .mom, a directory with model.yaml, or a .yaml model file",
                    path: path)
            }
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("model.yaml").path) {
                model = try TernModelFile.readDirectory(at: url)
            } else if let bundle = try FileManager.default.contentsOfDirectory(atPath: path).first(where: { $0.hasSuffix(".xcdatamodeld") }) {
                model = try XcodeModelReader.readBundle(at: url.appendingPathComponent(bundle))
            } else if let compiled = try compiledModel(inAppBundle: url) {
                return try load(compiled)
            } else {
                throw TernError(.badInput, "no model.yaml, no .xcdatamodeld bundle and no compiled .momd (an app bundle's) in this directory", path: path)
            }
        }
        model = separatingUnreciprocatedInverses(model)
        try validate(model)
        return model
    }

    /// The one `.momd` an app bundle holds: at its top (iOS) or in `Contents/Resources` (macOS).
    /// Several are refused, naming them: which one the store belongs to is the user's to say.
    private static func compiledModel(inAppBundle folder: URL) throws -> String? {
        let found = [folder, folder.appendingPathComponent("Contents/Resources")].flatMap { place in
            ((try? FileManager.default.contentsOfDirectory(atPath: place.path)) ?? []).filter { $0.hasSuffix(".momd") }.sorted().map {
                place.appendingPathComponent($0)
            }
        }
        if found.count > 1 {
            let names = found.map { String($0.path.dropFirst(folder.path.count + 1)) }
            throw TernError(
                .badInput,
                "the folder holds several compiled models (\(names.joined(separator: ", "))): name the one that wrote the store with --model \(found[0].path)",
                path: folder.path)
        }
        guard let model = found.first else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: model.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw TernError(.badInput, "not a compiled model: a .momd is a folder of .mom files (and a VersionInfo.plist)", path: model.path)
        }
        return model.path
    }

    /// Each version with its unreciprocated to-one inverses kept apart, said as warnings.
    static func separatingUnreciprocatedInverses(_ model: VersionedModel) -> VersionedModel {
        var model = model
        for (index, version) in model.versions.enumerated() {
            let (separated, warnings) = version.separatingUnreciprocatedInverses()
            model.versions[index] = separated
            model.warnings += warnings.map { ModelWarning(version: version.versionName, file: model.path, message: $0) }
        }
        return model
    }

    static func validate(_ model: VersionedModel) throws {
        var seen: Set<String> = []
        for version in model.versions {
            guard seen.insert(version.versionName).inserted else {
                throw TernError(.badInput, "two versions are named \(version.versionName)", path: model.path)
            }
            let problems = version.problems()
            guard problems.isEmpty else {
                let list = problems.map { "  - \($0)" }.joined(separator: "\n")
                throw TernError(.badInput, "version \(version.versionName) is invalid:\n\(list)", path: model.path)
            }
        }
    }
}
