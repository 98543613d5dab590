import TernDigest
import TernModel
import TernStore
import TernMapping
import Foundation
import TernSQLite

extension StoreMigration.Plan {
    /// What a plan was made for: the model it came from, and the schema of the store it read. A
    /// saved plan runs on any store with that schema and those version hashes (one plan for a
    /// fleet of stores of one version), and refuses any other.
    public struct Origin: Sendable, Codable, Equatable {
        /// The model's name.
        public var modelName: String
        /// The model's path, which scopes Tern's example policies (`PolicyRegistry.forModel(at:)`).
        public var modelPath: String
        /// SHA-256 of the store's tables, columns, declared types and version hashes.
        public var storeSchema: String
        /// SHA-256 of the whole plan as tern wrote it (this field left out): everything that
        /// decides what a run writes — a version's external-storage flag as much as a step or a
        /// filter — is pinned, so an edited plan is refused, never run (`checkSeal()`).
        public var seal: String?
    }

    /// The plan's seal: SHA-256 of its encoding without the seal.
    func computedSeal() throws -> String {
        var unsealed = self
        unsealed.origin?.seal = nil
        return SHA256.hash(data: try PlanEstimate.encoder.encode(unsealed)).map { String(format: "%02x", $0) }.joined()
    }

    /// Refuses a plan whose content is not what tern sealed when it made it: an edited plan
    /// file, or a run's record edited after the run began.
    func checkSeal(path: String?) throws {
        guard let seal = origin?.seal else {
            throw TernError(.badInput, "the plan has no seal (plan.origin.seal): tern plan writes one; make the plan again with tern plan --json", path: path)
        }
        guard try computedSeal() == seal else {
            throw TernError(
                .badInput,
                "the plan is not the one tern made (its content does not match its seal, plan.origin.seal): it was edited. "
                    + "Make the plan again with tern plan --json", path: path)
        }
    }

    /// The versioned model a saved plan runs with: the versions it goes through, the target current.
    public var model: VersionedModel {
        VersionedModel(name: origin?.modelName ?? "", versions: versions, currentVersionName: targetVersion, path: origin?.modelPath ?? "")
    }

    /// Reads a plan `tern plan --json` saved (its `plan`), refusing anything it would not have
    /// written: a key it does not know, a value of another type, a version that is not a valid
    /// model, a mapping that does not validate, schema changes that are not the step's.
    public static func read(from path: String) throws -> StoreMigration.Plan {
        try TernFailure.wrapping {
            guard let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int else {
                throw TernError(.missingInput, "no such file", path: path)
            }
            guard size <= 64 << 20 else { throw TernError(.badInput, "a plan file is at most 64 MiB; this one has \(size) bytes", path: path) }
            guard let data = FileManager.default.contents(atPath: path) else { throw TernError(.missingInput, "cannot read the plan", path: path) }
            let estimate: PlanEstimate
            do {
                estimate = try JSONDecoder().decode(PlanEstimate.self, from: data)
            } catch let error as DecodingError {
                throw TernError(.badInput, "not a plan tern plan --json wrote: \(PlanCodingError.describe(error))", path: path)
            } catch let error as TernError {
                throw TernError(.badInput, "the plan's mapping does not validate: \(error.message)", path: path)
            }
            if let extra = try PlanCodingError.firstDifference(saved: data, decoded: PlanEstimate.encoder.encode(estimate)) {
                throw TernError(
                    .badInput, "the plan has \(extra), which tern plan does not write: was it edited? Make it again with tern plan --json", path: path)
            }
            guard estimate.plan.origin != nil else {
                throw TernError(.badInput, "the plan has no origin (plan.origin): tern plan writes one; make the plan again with tern plan --json", path: path)
            }
            try estimate.plan.checkVersions()
            try estimate.plan.checkSeal(path: path)
            return estimate.plan
        }
    }
}

extension StoreMigration.Plan {
    /// Every version is a valid model, and each step goes between two of them, as they are.
    func checkVersions() throws {
        for version in versions {
            let problems = version.problems()
            guard problems.isEmpty else {
                throw TernError(.badInput, "version \(version.versionName) of the plan is not a valid model: \(problems.joined(separator: "; "))")
            }
        }
        let byName = Dictionary(versions.map { ($0.versionName, $0) }, uniquingKeysWith: { first, _ in first })
        guard versions.first?.versionName == storeVersion || steps.isEmpty, versions.last?.versionName == targetVersion || steps.isEmpty else {
            throw TernError(.badInput, "the plan's versions do not go from \(storeVersion) to \(targetVersion)")
        }
        for step in steps where byName[step.source.versionName] != step.source || byName[step.destination.versionName] != step.destination {
            throw TernError(.badInput, "step \(step.identity) is not between versions of the plan")
        }
        // One chain: from the store's version, each step where the one before it ended, to the target.
        var at = storeVersion
        for (index, step) in steps.enumerated() {
            guard step.source.versionName == at else {
                throw TernError(.badInput, "plan.steps[\(index)] (\(step.identity)) does not start where the plan is then (\(at))")
            }
            at = step.destination.versionName
        }
        guard steps.isEmpty || at == targetVersion else {
            throw TernError(.badInput, "the plan's steps end at \(at), not at its target \(targetVersion)")
        }
        guard steps.first?.sourceRules != .earlierTern || steps.dropFirst().allSatisfy({ $0.sourceRules == .coreData }) else {
            throw TernError(.badInput, "only the first step of a plan reads an earlier Tern's layout")
        }
    }
}

extension StoreMigration.Plan.Origin {
    /// The origin of a plan made from `model` for the store at `path`.
    static func of(model: VersionedModel, metadata: StoreMetadata, signature: LayoutSignature) -> Self {
        Self(modelName: model.name, modelPath: model.path, storeSchema: schema(metadata: metadata, signature: signature))
    }

    /// SHA-256 of the store's layout signature and version hashes: what a plan depends on.
    static func schema(metadata: StoreMetadata, signature: LayoutSignature) -> String {
        let text =
            signature.description + "\n"
            + metadata.versionHashes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\n")
        return SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

/// Words for what makes a saved plan unreadable.
enum PlanCodingError {
    /// The coding path and what was wrong there.
    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().drop { $0 == "." }.description
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context.codingPath).isEmpty ? "" : path(context.codingPath) + ": ")\(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])) is missing"
        @unknown default:
            return "\(error)"
        }
    }

    /// The first key path where the saved JSON has what the decoded value does not give back (an
    /// unknown key, a number where Tern writes none); nil when they are the same tree.
    static func firstDifference(saved: Data, decoded: Data) throws -> String? {
        let a = try JSONSerialization.jsonObject(with: saved, options: [.fragmentsAllowed])
        let b = try JSONSerialization.jsonObject(with: decoded, options: [.fragmentsAllowed])
        return difference(a, b, at: "")
    }

    private static func difference(_ saved: Any, _ decoded: Any, at path: String) -> String? {
        switch (saved, decoded) {
        case let (a as [String: Any], b as [String: Any]):
            for key in a.keys.sorted() {
                guard let other = b[key] else { return "\(path.isEmpty ? "" : path + ".")\(key)" }
                if let found = difference(a[key]!, other, at: path.isEmpty ? key : path + "." + key) { return found }
            }
            return nil
        case let (a as [Any], b as [Any]):
            guard a.count == b.count else { return "\(path) (\(a.count) elements)" }
            for (index, pair) in zip(a, b).enumerated() {
                if let found = difference(pair.0, pair.1, at: "\(path)[\(index)]") { return found }
            }
            return nil
        case let (a as String, b as String):
            return a == b ? nil : "\(path) = \(a)"
        case let (a as NSNumber, b as NSNumber):
            return a == b ? nil : "\(path) = \(a)"
        case (is NSNull, is NSNull):
            return nil
        default:
            return "\(path) = \(saved)"
        }
    }
}
