import TernDigest
import TernModel
import TernStore
import TernMapping
import Foundation

/// Works out the steps from a store's version to a target version, by the route Core Data takes
/// (`VersionRouter`): the app's mapping models where they lie on the way (several for one step
/// run as passes, in file-name order, unless a plan file lists the passes), inferred mappings
/// for the rest.
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

    /// The steps from `from` to `to`, by the route `choice` picks (`VersionRouter`): Core Data's
    /// by default — the app's mapping model for the pair, else its mapping models where they lie
    /// on the way with one inferred mapping for each stretch they leave, else one inferred
    /// mapping from `from` to `to`. No order of version names enters it.
    ///
    /// - Throws: `TernError` when no route is left (every inferred hop tried failed; the direct
    ///   inference's reasons listed), or a mapping file is invalid.
    ///
    /// Files in `overriding`, and mapping models in `models` (built in memory, naming their
    /// versions), win over `mappingFiles` for the step they cover: a mapping given on the command
    /// line or by a program replaces the one found beside the model. `now` is what `now()` in
    /// every mapping gives.
    public static func chain(
        in model: VersionedModel, from: String, to: String, mappingFiles: [String], overriding: [String] = [],
        models: [MappingModel] = [], choice: RouteChoice = .coreData,
        now: Double = Date().timeIntervalSinceReferenceDate
    ) throws -> (steps: [MigrationStep], reason: String) {
        for name in [from, to] + { if case .through(let stops) = choice { return stops } else { return [] } }()
        where model.version(named: name) == nil {
            throw TernError(
                .badInput, "no version \(name) in \(model.name) (versions: \(model.versions.map(\.versionName).joined(separator: ", ")))", path: model.path)
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
        var router = VersionRouter(
            versions: model.versions,
            mapped: Set(declared.filter { $0.source != $0.destination }.map { StepIdentity(source: $0.source, destination: $0.destination) }))
        var refused: [StepIdentity: InferenceFailure] = [:]
        var lastRefused: StepIdentity?
        while true {
            guard let route = router.route(from: from, to: to, choice: choice, refused: Set(refused.keys)) else {
                // The direct inference's reasons, else the last hop tried (a leg of --through).
                let pair = refused[StepIdentity(source: from, destination: to)] != nil ? StepIdentity(source: from, destination: to) : lastRefused
                let reasons = pair.flatMap { refused[$0] }?.reasons ?? []
                throw TernError(
                    .badInput,
                    "no mapping model from \(pair?.source ?? from) to \(pair?.destination ?? to), and it cannot be inferred:\n"
                        + reasons.map { "  - \($0)" }.joined(separator: "\n"),
                    path: model.path)
            }
            var steps: [MigrationStep] = []
            var notes: [String] = []
            var failed = false
            for hop in route.hops {
                let source = model.version(named: hop.from)!, destination = model.version(named: hop.to)!
                if hop.byMapping {
                    let mappings = declared.filter { $0.source == hop.from && $0.destination == hop.to }.map(\.mapping)
                    steps.append(try mappedStep(mappings, source: source, destination: destination, now: now))
                    continue
                }
                do {
                    let mapping = try MappingInference.infer(from: source, to: destination)
                    let validated = try mapping.validate(source: source, destination: destination, now: now)
                    let direct = MigrationStep(source: source, destination: destination, passes: [validated], isInferred: true, origins: ["inferred"])
                    // Beyond Core Data, the one direction allowed: what its one mapping drops (an
                    // entity renamed, then given an identifier naming its new name) but renames
                    // followed through the versions between keep, is kept, and the plan says so.
                    // Only where the one mapping drops something: finding the versions between is
                    // the costly part of planning a long history.
                    let between = choice == .coreData && !DataLoss.dropped(by: direct).isEmpty ? router.intermediates(from: hop.from, to: hop.to) : []
                    if !between.isEmpty,
                        let traced = try? MappingInference.infer(from: source, to: destination, through: between.map { model.version(named: $0)! }),
                        let validatedTraced = try? traced.validate(source: source, destination: destination, now: now)
                    {
                        let kept = MigrationStep(source: source, destination: destination, passes: [validatedTraced], isInferred: true, origins: ["inferred"])
                        if let dropped = Self.droppedOnlyBy(direct, keptBy: kept) {
                            steps.append(kept)
                            notes.append(
                                "Core Data's one mapping from \(hop.from) to \(hop.to) would drop \(dropped): "
                                    + "inferred following renames through \(between.joined(separator: ", ")), beyond Core Data")
                            continue
                        }
                    }
                    steps.append(direct)
                } catch let failure as InferenceFailure {
                    // Beyond Core Data, which would fail here: one mapping that follows renames
                    // through the versions between (an entity renamed, its identifier dropped later).
                    let between = router.intermediates(from: hop.from, to: hop.to)
                    if choice == .coreData, !between.isEmpty,
                        let traced = try? MappingInference.infer(from: source, to: destination, through: between.map { model.version(named: $0)! }),
                        let validated = try? traced.validate(source: source, destination: destination, now: now)
                    {
                        steps.append(MigrationStep(source: source, destination: destination, passes: [validated], isInferred: true, origins: ["inferred"]))
                        notes.append(
                            "\(hop.from) → \(hop.to) cannot be inferred as one mapping (\(failure.reasons.joined(separator: "; "))): "
                                + "inferred following renames through \(between.joined(separator: ", ")), beyond Core Data")
                        continue
                    }
                    if choice == .stepByStep, route.hops.count > 1 {
                        // Staged: each version's own rules, or nothing.
                        throw TernError(
                            .badInput,
                            "step by step, no mapping model from \(hop.from) to \(hop.to), and it cannot be inferred:\n"
                                + failure.reasons.map { "  - \($0)" }.joined(separator: "\n"), path: model.path)
                    }
                    refused[StepIdentity(source: hop.from, destination: hop.to)] = failure
                    lastRefused = StepIdentity(source: hop.from, destination: hop.to)
                    failed = true
                    break
                }
            }
            if !failed { return (steps, ([route.reason] + notes).joined(separator: "; ")) }
        }
    }

    /// What `direct` drops that `traced` keeps, in words, when `traced` keeps all `direct` keeps
    /// and more: every source entity `direct` maps, and another; or the same entities and fewer
    /// of their properties dropped. Nil otherwise.
    static func droppedOnlyBy(_ direct: MigrationStep, keptBy traced: MigrationStep) -> String? {
        func mapped(_ step: MigrationStep) -> Set<String> {
            Set(step.passes.flatMap(\.entities).filter { $0.mapping.destinationEntity != nil }.compactMap(\.mapping.sourceEntity))
        }
        let (directEntities, tracedEntities) = (mapped(direct), mapped(traced))
        guard directEntities.isSubset(of: tracedEntities) else { return nil }
        if directEntities != tracedEntities {
            return tracedEntities.subtracting(directEntities).sorted().map { "entity \($0)" }.joined(separator: ", ")
        }
        let (directLost, tracedLost) = (Set(DataLoss.dropped(by: direct).map(\.description)), Set(DataLoss.dropped(by: traced).map(\.description)))
        guard tracedLost.isSubset(of: directLost), tracedLost != directLost else { return nil }
        return directLost.subtracting(tracedLost).sorted().joined(separator: "; ")
    }

    /// A step by the app's mapping models for one pair of versions: one pass each, in file-name
    /// order, unless a plan file lists the passes.
    private static func mappedStep(_ mappings: [MappingSource], source: ObjectModel, destination: ObjectModel, now: Double) throws -> MigrationStep {
        var passes: [ValidatedMapping] = []
        var origins: [String] = []
        if let plan = mappings.first(where: \.isPlan) {
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
        return MigrationStep(source: source, destination: destination, passes: passes, isInferred: false, origins: origins)
    }

    /// A step from `version` to itself, every object and link carried as it is: what brings a
    /// store an earlier Tern laid out to Core Data's layout and hashes when it is at the target
    /// version already.
    package static func relayout(of version: ObjectModel, now: Double) throws -> MigrationStep {
        let validated = try MappingInference.infer(from: version, to: version).validate(source: version, destination: version, now: now)
        return MigrationStep(source: version, destination: version, passes: [validated], isInferred: true, origins: ["inferred"])
    }
}
