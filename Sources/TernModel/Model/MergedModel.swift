/// Several models one store holds together: an app whose frameworks bring models of their own
/// opens its store with `NSManagedObjectModel(byMerging:)` of all of them (DuckDuckGo's
/// `Database.sqlite`: AppRatingPrompt, HTTPSUpgrade 3 and RemoteMessaging).
extension ObjectModel {
    /// The union of `parts`' entities, as `NSManagedObjectModel(byMerging:)` makes it: entities
    /// are numbered across all of them by name, version identifiers are pooled, and two parts
    /// declaring one entity name is an error (Core Data refuses that merge too).
    public static func merging(_ parts: [ObjectModel]) throws -> ObjectModel {
        var owner: [String: String] = [:]
        for part in parts {
            for entity in part.entities {
                if let first = owner[entity.name] {
                    throw TernError(.badInput, "models \(first) and \(part.versionName) both declare entity \(entity.name): they cannot be merged")
                }
                owner[entity.name] = part.versionName
            }
        }
        return ObjectModel(
            versionName: parts.map(\.versionName).joined(separator: " + "),
            versionIdentifiers: Array(Set(parts.flatMap(\.versionIdentifiers))).sorted(),
            entities: parts.flatMap(\.entities))
    }
}

extension VersionedModel {
    /// The merge of `parts`, one version per combination a migration passes through: it starts
    /// where `start` says (each part's version, by name; nil: that part's oldest) and brings one
    /// part at a time to its current version, in the order given. A store written by any
    /// combination is migrated by naming that combination as the start.
    public static func merging(_ parts: [VersionedModel], start: [String?]? = nil) throws -> VersionedModel {
        guard parts.count > 1 else {
            guard let only = parts.first else { throw TernError(.badInput, "no model to merge") }
            return only
        }
        var positions = try parts.enumerated().map { index, part in
            guard let name = start?[index] ?? nil else { return 0 }
            guard let position = part.versions.firstIndex(where: { $0.versionName == name }) else {
                throw TernError(.badInput, "model \(part.name) has no version \(name)", path: part.path)
            }
            return position
        }
        let currents = parts.map { part in part.versions.firstIndex { $0.versionName == part.currentVersionName } ?? part.versions.count - 1 }
        var versions = [try ObjectModel.merging(zip(parts, positions).map { $0.versions[$1] })]
        for index in parts.indices {
            // A part whose start is past its current version (a store newer than the app) stays.
            while positions[index] < currents[index] {
                positions[index] += 1
                versions.append(try ObjectModel.merging(zip(parts, positions).map { $0.versions[$1] }))
            }
        }
        let merged = versions[versions.count - 1]
        for version in versions {
            let problems = version.problems()
            guard problems.isEmpty else {
                throw TernError(.badInput, "the merged model \(version.versionName) is not valid: \(problems.joined(separator: "; "))")
            }
        }
        return VersionedModel(
            name: parts.map(\.name).joined(separator: " + "), versions: versions,
            currentVersionName: merged.versionName, path: parts.map(\.path).joined(separator: ", "),
            warnings: parts.flatMap(\.warnings))
    }

    /// For each part, the version whose entity hashes are the store's for that part's entities
    /// (the current first, as `VersionMatch` prefers); nil for a part no version of which matches.
    public static func versionsWriting(_ hashes: [String: String], parts: [VersionedModel]) -> [String?] {
        parts.map { part in
            part.currentFirst.first { version in
                let own = version.versionHashes.mapValues(VersionHash.hex)
                return own.allSatisfy { hashes[$0.key] == $0.value }
            }?.versionName
        }
    }
}
