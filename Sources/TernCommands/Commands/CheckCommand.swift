import ArgumentParser
import Foundation
import Tern

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Say whether a store opens with a model's current version, or which version wrote it.",
        discussion: """
            Exit status: 0 when the store was written by the current version, 3 when it was written \
            by an older version (migration needed; both versions are named), 4 when no version of \
            the model wrote it. Stores Tern wrote are matched by version hashes; stores Core Data \
            wrote by Apple's hashes when --version-info names the compiled model's VersionInfo.plist, \
            and otherwise by comparing the store's tables and columns with each version's layout.
            """
    )

    @Argument(help: "The store.")
    var store: String

    @Option(
        help:
            "The model: an .xcdatamodeld bundle, an .xcdatamodel, a compiled .momd or .mom, a directory with model.yaml, or a .yaml version file. Repeated, the models are merged, as an app merging its frameworks' models opens its store (each part's version is the one whose hashes the store carries)."
    )
    var model: [String]

    @Option(help: "A compiled model's VersionInfo.plist (inside .momd), to recognise Core Data stores by Apple's hashes.")
    var versionInfo: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let logger = global.makeLogger(label: "tern.check")
        var status: Int32 = 0
        try reportingErrors {
            let versioned = try loadModel(model, forStoreAt: store)
            // A compiled model's bundle carries its VersionInfo.plist.
            let info = versionInfo ?? (model.count == 1 && model[0].hasSuffix(".momd") ? model[0] + "/VersionInfo.plist" : nil)
            let apple = try info.map(VersionMatch.appleHashes(versionInfoAt:)) ?? [:]
            let match = try VersionMatch.find(in: versioned, storeAt: store, appleHashes: apple)
            logger.debug("checked", metadata: ["store": "\(store)", "verdict": "\(match.verdict)"])
            var report = CheckReport(match: match, model: versioned)
            warn(about: versioned, versions: report.storeVersion.map { [$0, versioned.currentVersionName] })
            report.addLightweight(in: versioned)
            try report.addAnomalies(store: store, model: versioned)
            if report.status == "no-match" { report.carriesModel = try StoreModelCache.model(ofStoreAt: store) != nil }
            print(json ? try report.json() : report.text)
            status = report.exitCode
        }
        if status != 0 { throw ExitCode(status) }
    }
}

/// The result of `tern check`, for people and programs.
struct CheckReport: Encodable {
    /// "compatible", "migration-needed" or "no-match".
    let status: String
    let storeVersion: String?
    let currentVersion: String
    /// How the store's version was recognised: "apple-hashes", "schema" or "earlier-tern" (an
    /// earlier Tern laid the store out; `tern migrate` brings it to Core Data's layout).
    let evidence: String?
    /// For "no-match": the version whose layout is closest, and how the store differs from it.
    let closestVersion: String?
    let differences: [String]
    /// For "migration-needed": whether the step to the current version can be inferred
    /// (a lightweight migration), and if not, why.
    var lightweight: Bool?
    /// How the version was recognised, where people should know (`VersionMatch.notes`).
    var notes: [String] = []
    /// The route `tern migrate` takes to the current version (`MigrationPlanner.chain`).
    var route: String?
    var lightweightProblems: [String] = []
    /// Rows Core Data never writes, which `tern migrate` refuses (see `StoreAnomalies`).
    var anomalies: [String] = []
    /// What Core Data reads all the same, which `tern migrate` carries and reports (refused
    /// with `--strict`).
    var tolerated: [String] = []
    /// For "no-match": whether the store carries its own model (`Z_MODELCACHE`, its layout the
    /// store's schema), which `tern plan` and `tern migrate` then take as the source version.
    var carriesModel = false

    init(match: VersionMatch, model: VersionedModel) {
        currentVersion = model.currentVersionName
        notes = match.notes
        switch match.verdict {
        case .compatible(let version, let evidence):
            status = "compatible"; storeVersion = version; self.evidence = evidence.rawValue
            closestVersion = nil; differences = []
        case .migrationNeeded(let from, _, let evidence):
            status = "migration-needed"; storeVersion = from; self.evidence = evidence.rawValue
            closestVersion = nil; differences = []
        case .noMatch(let closest, let differences):
            status = "no-match"; storeVersion = nil; evidence = nil
            closestVersion = closest; self.differences = differences
        }
    }

    /// Decides whether one mapping inferred from the store's version to the current one exists
    /// (Core Data's lightweight migration), and the route `tern migrate` takes.
    mutating func addLightweight(in model: VersionedModel) {
        guard status == "migration-needed", let storeVersion, storeVersion != currentVersion,
            let (source, destination) = try? InferCommand.versions(in: model, from: storeVersion, to: currentVersion)
        else { return }
        do {
            _ = try MappingInference.infer(from: source, to: destination)
            lightweightProblems = StoreLayout(model: destination).nameClashes().map(\.description)
            lightweight = lightweightProblems.isEmpty
        } catch {
            lightweight = false
            lightweightProblems = error.reasons
        }
        route = try? MigrationPlanner.chain(
            in: model, from: storeVersion, to: currentVersion, mappingFiles: MigrationPlanner.mappingFiles(for: model)
        ).reason
    }

    /// Scans a store of a known version for rows a migration would refuse.
    mutating func addAnomalies(store: String, model: VersionedModel) throws {
        guard let storeVersion, let version = model.version(named: storeVersion) else { return }
        let source = try ReadOnlyStore(path: store)
        let rules: StoreLayout.Rules = evidence == VersionMatch.Evidence.earlierTern.rawValue ? .earlierTern : .coreData
        let found = try StoreAnomalies.find(in: source.attachPath, model: version, rules: rules)
        anomalies = found.filter { !$0.isTolerated }.map(\.description)
        tolerated = found.filter(\.isTolerated).map(\.description)
    }

    var exitCode: Int32 {
        switch status {
        case "compatible": 0
        case "migration-needed": TernExitCode.migrationNeeded
        default: TernExitCode.noVersionMatches
        }
    }

    var text: String {
        var lines = [verdictText] + notes.map { "note: \($0)" }
        if !anomalies.isEmpty {
            lines.append("rows Core Data never writes, which tern migrate refuses:")
            lines += anomalies.map { "  - \($0)" }
        }
        if !tolerated.isEmpty {
            lines.append("what Core Data reads all the same, which tern migrate carries as it reads it and reports (--strict refuses it):")
            lines += tolerated.map { "  - \($0)" }
        }
        return lines.joined(separator: "\n")
    }

    private var verdictText: String {
        switch status {
        case "compatible":
            return "compatible: the store was written by \(storeVersion!), the current version (recognised by \(evidence!))"
        case "migration-needed":
            var lines = ["migration needed: the store was written by \(storeVersion!); the current version is \(currentVersion) (recognised by \(evidence!))"]
            if evidence == VersionMatch.Evidence.earlierTern.rawValue {
                lines.append(
                    "an earlier Tern laid the store out by its own rules (join tables, Tern's own hashes): tern migrate copies it into Core Data's layout, "
                        + "with Core Data's hashes, so the app can open it")
            }
            switch lightweight {
            case true?: lines.append("the step can be inferred: a lightweight migration")
            case false?:
                lines.append("one mapping from it to the current version cannot be inferred:")
                lines += lightweightProblems.map { "  - \($0)" }
            case nil: break
            }
            if let route { lines.append("route: \(route)") }
            return lines.joined(separator: "\n")
        default:
            var lines = ["no version of the model wrote this store"]
            if let closestVersion {
                lines.append("closest version: \(closestVersion), which differs:")
                lines += differences.map { "  - \($0)" }
            }
            if carriesModel {
                lines.append("the store carries its own model (Z_MODELCACHE): tern plan and tern migrate take it as the source version")
            }
            return lines.joined(separator: "\n")
        }
    }

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
