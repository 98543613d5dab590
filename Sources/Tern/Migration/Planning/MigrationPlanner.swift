import Crypto
import TernModel
import TernStore
import TernMapping
import Foundation

/// Works out the chain of steps from a store's version to a target version: an explicit mapping
/// model where one is found beside the model (several for one step run as passes, in file-name
/// order, unless a plan file lists the passes), an inferred one otherwise; a mapping that jumps
/// several versions is taken when given.
public enum MigrationPlanner {
    /// Mapping files found for a versioned model: Tern's `mappings/*.yaml` inside a Tern model
    /// directory, `.xcmappingmodel` bundles near an Xcode model (its folder and the folder
    /// above, a few levels deep), and the compiled `.cdm` files beside a `.momd` (an app bundle
    /// keeps both at its top).
    public static func mappingFiles(for model: VersionedModel) -> [String] {
        let fileManager = FileManager.default
        let modelURL = URL(fileURLWithPath: model.path)
        var found: [String] = []
        let ternMappings = modelURL.appendingPathComponent("mappings")
        if let names = try? fileManager.contentsOfDirectory(atPath: ternMappings.path) {
            found += names.filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.map { ternMappings.appendingPathComponent($0).path }
        }
        if modelURL.pathExtension == "xcdatamodeld" || modelURL.pathExtension == "xcdatamodel" {
            let searchRoot = modelURL.deletingLastPathComponent().deletingLastPathComponent()
            if let enumerator = fileManager.enumerator(at: searchRoot, includingPropertiesForKeys: nil) {
                for case let url as URL in enumerator {
                    if enumerator.level > 4 { enumerator.skipDescendants(); continue }
                    if url.pathExtension == "xcmappingmodel" { found.append(url.path); enumerator.skipDescendants() }
                }
            }
        }
        if modelURL.pathExtension == "momd" || modelURL.pathExtension == "mom" {
            let folder = modelURL.deletingLastPathComponent()
            found += ((try? fileManager.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".cdm") }.map {
                folder.appendingPathComponent($0).path
            }
        }
        return found.sorted { URL(fileURLWithPath: $0).lastPathComponent < URL(fileURLWithPath: $1).lastPathComponent }
    }

    /// A mapping model the chain may take for a step: a file, or one a program built in memory.
    private enum MappingSource {
        case file(String)
        /// Named in reports and the run record by its versions and a digest of its YAML text, so
        /// a resume notices a changed mapping as it notices a changed file.
        case model(MappingModel, origin: String)

        var origin: String {
            switch self {
            case .file(let path): path
            case .model(_, let origin): origin
            }
        }

        var isPlan: Bool {
            if case .file(let path) = self { return MigrationPlanFile.isPlan(path) }
            return false
        }

        func load(source: ObjectModel, destination: ObjectModel, earlier: Set<String>, now: Double) throws -> ValidatedMapping {
            switch self {
            case .file(let path):
                try MappingLoader.load(path, source: source, destination: destination, earlierMappings: earlier, now: now)
            case .model(let model, let origin):
                try model.validate(source: source, destination: destination, now: now, file: origin, earlierMappings: earlier)
            }
        }

        static func inMemory(_ model: MappingModel) throws -> (MappingSource, source: String, destination: String) {
            guard let source = model.sourceVersion, let destination = model.destinationVersion else {
                throw TernError(.badInput, "a mapping model given in memory must name its source and destination versions")
            }
            let digest = Data(SHA256.hash(data: Data(try MappingLoader.yaml(model).utf8))).prefix(8).map { String(format: "%02x", $0) }.joined()
            return (.model(model, origin: "mapping in memory \(source) → \(destination) (\(digest))"), source, destination)
        }
    }

    /// The steps from `from` to `to`.
    ///
    /// - Throws: `TernError` when a step has neither a mapping file nor an inferable mapping
    ///   (every reason listed), or a mapping file is invalid.
    ///
    /// Files in `overriding`, and mapping models in `models` (built in memory, naming their
    /// versions), win over `mappingFiles` for the step they cover: a mapping given on the command
    /// line or by a program replaces the one found beside the model. `now` is what `now()` in
    /// every mapping gives.
    ///
    /// With `composing`, consecutive inferred steps become one (`StepComposition`), so the store
    /// is copied once for all of them; steps that cannot be composed say why (`notComposed`).
    public static func chain(
        in model: VersionedModel, from: String, to: String, mappingFiles: [String], overriding: [String] = [],
        models: [MappingModel] = [], composing: Bool = true,
        now: Double = Date().timeIntervalSinceReferenceDate
    ) throws -> [MigrationStep] {
        let names = model.versions.map(\.versionName)
        guard let start = names.firstIndex(of: from), let end = names.firstIndex(of: to) else {
            throw TernError(
                .badInput, "no version \(names.contains(from) ? to : from) in \(model.name) (versions: \(names.joined(separator: ", ")))", path: model.path)
        }
        guard start < end else {
            throw TernError(.badInput, "cannot migrate from \(from) to the earlier version \(to): give a mapping model for the downgrade", path: model.path)
        }
        var declared: [(mapping: MappingSource, source: String, destination: String)] = []
        var overridden: Set<StepIdentity> = []
        for built in models {
            let (mapping, source, destination) = try MappingSource.inMemory(built)
            declared.append((mapping, source, destination))
            overridden.insert(StepIdentity(source: source, destination: destination))
        }
        var overridingFiles: Set<StepIdentity> = []
        for file in overriding {
            let (source, destination) = try MappingLoader.versions(of: file, in: model)
            guard let source, let destination else {
                throw TernError(
                    .badInput,
                    file.hasSuffix(".cdm")
                        ? "the compiled mapping model's entity version hashes are those of no version of \(model.name)"
                        : "the mapping model does not name its source and destination versions", path: file)
            }
            if overridden.contains(StepIdentity(source: source, destination: destination)) { continue }
            declared.append((.file(file), source, destination))
            overridingFiles.insert(StepIdentity(source: source, destination: destination))
        }
        overridden.formUnion(overridingFiles)
        for file in mappingFiles where !overriding.contains(file) {
            let (source, destination) = try MappingLoader.versions(of: file, in: model)
            if let source, let destination, !overridden.contains(StepIdentity(source: source, destination: destination)) {
                declared.append((.file(file), source, destination))
            }
        }
        var steps: [MigrationStep] = []
        var position = start
        while position < end {
            // The furthest version an explicit mapping reaches from here, else the next one.
            let jumps = declared.filter { $0.source == names[position] }.compactMap { entry in
                names.firstIndex(of: entry.destination).flatMap { $0 > position && $0 <= end ? ($0, entry.mapping) : nil }
            }
            let source = model.versions[position]
            if let target = jumps.map(\.0).max() {
                let destination = model.versions[target]
                let mappings = jumps.filter { $0.0 == target }.map(\.1)
                var passes: [ValidatedMapping] = []
                var origins: [String] = []
                if let plan = mappings.first(where: \.isPlan) {
                    // A plan says exactly which passes the step has.
                    for pass in try MappingLoader.loadPasses(ofPlan: plan.origin, source: source, destination: destination, now: now) {
                        passes.append(pass.mapping)
                        origins.append(pass.file)
                    }
                } else {
                    var earlier: Set<String> = []
                    for mapping in mappings {
                        let pass = try mapping.load(source: source, destination: destination, earlier: earlier, now: now)
                        earlier.formUnion(pass.model.entityMappings.map(\.name))
                        passes.append(pass)
                    }
                    origins = mappings.map(\.origin)
                }
                steps.append(MigrationStep(source: source, destination: destination, passes: passes, isInferred: false, origins: origins))
                position = target
            } else {
                let destination = model.versions[position + 1]
                do {
                    let mapping = try MappingInference.infer(from: source, to: destination)
                    let validated = try mapping.validate(source: source, destination: destination, now: now)
                    steps.append(MigrationStep(source: source, destination: destination, passes: [validated], isInferred: true, origins: ["inferred"]))
                } catch let failure as InferenceFailure {
                    throw TernError(
                        .badInput,
                        "no mapping model from \(source.versionName) to \(destination.versionName), and it cannot be inferred:\n"
                            + failure.reasons.map { "  - \($0)" }.joined(separator: "\n"), path: model.path)
                }
                position += 1
            }
        }
        return composing ? composed(steps, now: now) : steps
    }

    /// A step from `version` to itself, every object and link carried as it is: what brings a
    /// store an earlier Tern laid out to Core Data's layout and hashes when it is at the target
    /// version already.
    static func relayout(of version: ObjectModel, now: Double) throws -> MigrationStep {
        let validated = try MappingInference.infer(from: version, to: version).validate(source: version, destination: version, now: now)
        return MigrationStep(source: version, destination: version, passes: [validated], isInferred: true, origins: ["inferred"])
    }

    /// `steps` with each run of consecutive inferred steps composed into one where it can be;
    /// a run that cannot keeps its steps, the first saying why.
    static func composed(_ steps: [MigrationStep], now: Double) -> [MigrationStep] {
        var result: [MigrationStep] = []
        var run: [MigrationStep] = []
        func flush() {
            if run.count > 1 {
                switch StepComposition.compose(run, now: now) {
                case .success(let step)
                where step.schemaChanges == nil && run.allSatisfy({ $0.schemaChanges != nil }):
                    // Schema changes alone, step after step, cost less than one copy.
                    run[0].notComposed = "each of these steps runs in place as schema changes, which costs less than the one copy they would take composed"
                    result += run
                case .success(let step): result.append(step)
                case .failure(let refusal):
                    run[0].notComposed = refusal.reason
                    result += run
                }
            } else {
                result += run
            }
            run = []
        }
        for step in steps {
            if step.isInferred {
                run.append(step)
            } else {
                flush()
                result.append(step)
            }
        }
        flush()
        return result
    }
}
