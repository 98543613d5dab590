import TernDigest
import TernModel
import TernStore
import TernMapping
import Foundation
import TernSQLite

extension MigrationPlan {
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

    /// How a plan is written (`tern plan --json`, a run's record) and sealed: sorted keys, so
    /// one plan always has one encoding.
    public static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// The plan's seal: SHA-256 of its encoding without the seal.
    package func computedSeal() throws -> String {
        var unsealed = self
        unsealed.origin?.seal = nil
        return SHA256.hash(data: try Self.encoder.encode(unsealed)).map { String(format: "%02x", $0) }.joined()
    }

    /// What the plan decides, encoded: without the words it says to people (`notes`, `route`),
    /// its seal, the path the model was read at (what it scopes shows in the decisions), and
    /// with each pass's `now()` instant written as 0 (a plan made again a minute later decides
    /// the same; a run takes its instant from the plan it runs).
    private func decidedEncoding() throws -> Data {
        var decided = self
        decided.origin?.seal = nil
        decided.origin?.modelPath = ""
        (decided.notes, decided.route) = ([], nil)
        let encoder = Self.encoder
        encoder.userInfo[.omittingInstants] = true
        return try encoder.encode(decided)
    }

    private func decidedFields() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: decidedEncoding()) as? [String: Any] ?? [:]
    }

    private static func json(_ value: Any) -> Data? {
        try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
    }

    /// A digest of what the plan decides (`decidedEncoding`): two plans with one digest write one store.
    package func contentDigest() throws -> String {
        SHA256.hash(data: try decidedEncoding()).map { String(format: "%02x", $0) }.joined()
    }

    /// Where this plan decides otherwise than `recorded`, in words: each top-level part that
    /// differs, and for the steps, each step's part ("step A → B: its decisions"). Empty when
    /// the two write the same store.
    package func differences(from recorded: MigrationPlan) throws -> [String] {
        guard try contentDigest() != recorded.contentDigest() else { return [] }
        let (now, then) = (try decidedFields(), try recorded.decidedFields())
        let same = { (a: Any?, b: Any?) -> Bool in
            guard let a, let b else { return a == nil && b == nil }
            return Self.json(a) == Self.json(b)
        }
        var lines: [String] = []
        for key in Set(now.keys).union(then.keys).sorted() where key != "steps" && !same(now[key], then[key]) {
            lines.append("the plan's \(key)")
        }
        let (stepsNow, stepsThen) = (now["steps"] as? [[String: Any]] ?? [], then["steps"] as? [[String: Any]] ?? [])
        if stepsNow.count != stepsThen.count {
            lines.append("the plan's steps (then \(stepsThen.count), now \(stepsNow.count))")
        } else {
            for (index, (stepNow, stepThen)) in zip(stepsNow, stepsThen).enumerated() {
                let parts = Set(stepNow.keys).union(stepThen.keys).sorted().filter { !same(stepNow[$0], stepThen[$0]) }
                if !parts.isEmpty { lines.append("step \(steps[index].identity): its \(parts.joined(separator: ", "))") }
            }
        }
        return lines
    }

    /// Refuses a plan whose content is not what tern sealed when it made it: an edited plan
    /// file, or a run's record edited after the run began.
    package func checkSeal(path: String?) throws {
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
}

extension MigrationPlan {
    /// Every version is a valid model, and each step goes between two of them, as they are.
    package func checkVersions() throws {
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

extension MigrationPlan.Origin {
    /// The origin of a plan made from `model` for the store at `path`.
    package static func of(model: VersionedModel, metadata: StoreMetadata, signature: LayoutSignature) -> Self {
        Self(modelName: model.name, modelPath: model.path, storeSchema: schema(metadata: metadata, signature: signature))
    }

    /// SHA-256 of the store's layout signature and version hashes: what a plan depends on.
    package static func schema(metadata: StoreMetadata, signature: LayoutSignature) -> String {
        let text =
            signature.description + "\n"
            + metadata.versionHashes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\n")
        return SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

/// Words for what makes a saved plan unreadable.
package enum PlanCodingError {
    /// The coding path and what was wrong there.
    package static func describe(_ error: DecodingError) -> String {
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
    package static func firstDifference(saved: Data, decoded: Data) throws -> String? {
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
