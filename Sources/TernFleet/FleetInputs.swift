import ArgumentParser
import Foundation
import Tern
import TernCommands

/// A fleet command's own failure (its manifest, its shard, its results folder) ends it with the
/// fleet's contract: 75 when a retry may get past it, 12 when it cannot.
func reportingFleetErrors<Result>(_ body: () throws -> Result) throws -> Result {
    do {
        return try body()
    } catch let error where error is ExitCode || error is ValidationError || error is CleanExit {
        throw error
    } catch {
        let failure = FleetError(error)
        printError(failure.message)
        throw ExitCode(failure.isPermanent ? TernExitCode.fleetPermanentFailure : TernExitCode.resumable)
    }
}

/// The model and mapping files, as the manifest was planned with them.
enum FleetInputs {
    /// Refuses a manifest or results folder inside a model folder (whose every file is hashed: the
    /// fleet's own writes would look like a changed model), and one whose folder does not exist.
    static func checkPlace(of path: String, what: String, model: String) throws {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        let modelFolder = URL(fileURLWithPath: model).standardizedFileURL.path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: modelFolder, isDirectory: &isDirectory), isDirectory.boolValue, absolute.hasPrefix(modelFolder + "/") {
            throw TernError(
                .badInput, "the \(what) is inside the model's folder, whose files are hashed to prove every task runs the same migration: put it elsewhere",
                path: path)
        }
        let folder = URL(fileURLWithPath: absolute).deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw TernError(.missingInput, "the folder to write the \(what) in does not exist", path: folder)
        }
    }

    /// The model the manifest was planned with, loaded once. Throws, naming the file, when one
    /// changed, went or came since `tern fleet plan`: every task must run the same migration.
    static func check(_ manifest: FleetManifest) throws -> VersionedModel {
        let header = manifest.header
        for input in [header.model] + header.mappings + (header.versionInfo.map { [$0] } ?? []) {
            let now = try ContentHash.of(manifest.resolve(input.path))
            guard now == input.sha256 else {
                throw TernError(
                    .badInput,
                    "\(input.path) changed since the fleet was planned (sha256 \(input.sha256.prefix(12))… then, \(now.prefix(12))… now): plan the fleet again",
                    path: manifest.path)
            }
        }
        let model = try ModelLoader.load(manifest.resolve(header.model.path))
        let found = Set(
            (MigrationPlanner.mappingFiles(for: model) + header.mappingOverrides.map(manifest.resolve)).map {
                FleetManifest.written($0, manifestAt: manifest.path)
            })
        let planned = Set(header.mappings.map(\.path))
        guard found == planned else {
            let added = found.subtracting(planned).sorted(), removed = planned.subtracting(found).sorted()
            throw TernError(
                .badInput,
                "the mapping files beside the model changed since the fleet was planned (\((added.map { "new: \($0)" } + removed.map { "gone: \($0)" }).joined(separator: ", "))): plan the fleet again",
                path: manifest.path)
        }
        return model
    }
}
