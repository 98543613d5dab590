import Foundation
import TernModel
import TernStore

/// Reads a compiled mapping model (`.cdm`, what Xcode builds from an `.xcmappingmodel` and an app
/// ships): an `NSKeyedArchiver` archive of an `NSMappingModel`, read with the same archive reader
/// as compiled models. Its entity mappings become the ones the `.xcmappingmodel` gives; it names
/// no model versions, so the versions are found by the entity version hashes each entity
/// mapping carries (`versions(in:)`).
enum CompiledMappingReader {
    /// A compiled mapping model: the mapping, and the entity version hashes it was made between.
    struct Compiled {
        var model: MappingModel
        /// Source entity name → its version hash, from every entity mapping that reads one.
        var sourceHashes: [String: [UInt8]]
        /// Destination entity name → its version hash.
        var destinationHashes: [String: [UInt8]]

        /// The versions of `model` whose entities have these hashes (the current first where two
        /// agree): what the mapping model was compiled between.
        func versions(in versioned: VersionedModel) -> (source: String?, destination: String?) {
            func matching(_ hashes: [String: [UInt8]]) -> String? {
                guard !hashes.isEmpty else { return nil }
                return versioned.currentFirst.first { version in
                    let own = version.versionHashes
                    return hashes.allSatisfy { own[$0.key] == $0.value }
                }?.versionName
            }
            return (matching(sourceHashes), matching(destinationHashes))
        }
    }

    /// Core Data's `NSEntityMappingType` codes.
    private static let types: [Int: EntityMappingType] = [1: .custom, 2: .add, 3: .remove, 4: .copy, 5: .transform]

    /// Reads the `.cdm` at `url`. Throws `TernError` naming the file when it is not a compiled
    /// mapping model.
    static func read(at url: URL) throws -> Compiled {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw TernError(.io, "cannot read the compiled mapping model", path: url.path)
        }
        do {
            let archive = try KeyedArchive([UInt8](data))
            let root = try archive.object(archive.root)
            guard try archive.className(root) == "NSMappingModel" else {
                throw KeyedArchive.Malformed(description: "the archive holds a \(try archive.className(root)), not an NSMappingModel")
            }
            var compiled = Compiled(
                model: MappingModel(sourceVersion: nil, destinationVersion: nil, entityMappings: []), sourceHashes: [:], destinationHashes: [:])
            for entity in try archive.array(root["NSEntityMappings"]) {
                let mapping = try entityMapping(entity, archive: archive)
                compiled.model.entityMappings.append(mapping)
                if let source = mapping.sourceEntity, case .data(let hash)? = try archive.resolve(entity["NSSourceEntityVersionHash"]) {
                    compiled.sourceHashes[source] = hash
                }
                if let destination = mapping.destinationEntity, case .data(let hash)? = try archive.resolve(entity["NSDestinationEntityVersionHash"]) {
                    compiled.destinationHashes[destination] = hash
                }
            }
            return compiled
        } catch let malformed as KeyedArchive.Malformed {
            throw TernError(.badInput, "not a readable compiled mapping model: \(malformed.description)", path: url.path)
        } catch let unsupported as ArchivedExpression.Unsupported {
            throw TernError(.badInput, "\(unsupported.description)", path: url.path)
        }
    }

    private static func entityMapping(_ entity: PropertyListValue, archive: KeyedArchive) throws -> EntityMapping {
        let source = try archive.string(entity["NSSourceEntityName"])
        let destination = try archive.string(entity["NSDestinationEntityName"])
        let name = try archive.string(entity["NSMappingName"]) ?? source.map { "\($0)To\(destination ?? "")" } ?? destination ?? "Mapping"
        let policy = EntityMapping.policy(className: try archive.string(entity["NSEntityMigrationPolicyClassName"]))
        func properties(_ key: String) throws -> [PropertyMapping] {
            try archive.array(entity[key]).map { property in
                guard let propertyName = try archive.string(property["NSDestinationPropertyName"]) else {
                    throw KeyedArchive.Malformed(description: "entity mapping \(name): a property mapping without a name")
                }
                var expression: String?
                if case .uid(let uid)? = property["NSValueExpression"], try archive.resolve(property["NSValueExpression"]) != nil {
                    do {
                        expression = try ArchivedExpression.text(in: archive, object: uid)
                    } catch let unsupported as ArchivedExpression.Unsupported {
                        throw ArchivedExpression.Unsupported(description: "entity mapping \(name), property \(propertyName): \(unsupported.description)")
                    }
                }
                return PropertyMapping(name: propertyName, valueExpression: expression)
            }
        }
        let attributes = try properties("NSAttributeMappings")
        let relationships = try properties("NSRelationshipMappings")
        let code = (try archive.resolve(entity["NSMappingType"])).flatMap { value -> Int? in
            if case .integer(let number) = value { return Int(exactly: number) }
            return (try? archive.string(value)).flatMap { $0 }.flatMap { Int($0) }
        }
        var type = types[code ?? 0] ?? .transform
        if policy == nil, type == .custom {
            type = attributes.contains { $0.valueExpression != "$source.\($0.name)" } ? .transform : .copy
        }
        if policy != nil { type = .custom }
        return EntityMapping(
            name: name, type: type, sourceEntity: source, destinationEntity: destination,
            filterPredicate: try filter(entity["NSSourceExpression"], archive: archive), policy: policy,
            userInfo: try userInfo(entity["NSUserInfo"], archive: archive),
            attributeMappings: attributes.sorted { $0.name < $1.name }, relationshipMappings: relationships.sorted { $0.name < $1.name })
    }

    /// The predicate of the source fetch, `FETCH(FUNCTION($manager,
    /// "fetchRequestForSourceEntityNamed:predicateString:", entity, predicate), …)`: nil when it
    /// takes every object (`TRUEPREDICATE`).
    private static func filter(_ value: PropertyListValue?, archive: KeyedArchive) throws -> String? {
        guard let fetch = try archive.resolve(value), let request = try archive.resolve(fetch["NSFRExpression"]) else { return nil }
        let arguments = try archive.array(request["NSArguments"])
        guard arguments.count == 2, let predicate = try archive.string(arguments[1]["NSConstantValue"]) else { return nil }
        let trimmed = predicate.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty || trimmed == "TRUEPREDICATE" ? nil : trimmed
    }

    private static func userInfo(_ value: PropertyListValue?, archive: KeyedArchive) throws -> [String: String] {
        var info: [String: String] = [:]
        for (key, entry) in try archive.dictionary(value) {
            if let text = try archive.string(entry) {
                info[key] = text
            } else if case .integer(let number)? = try archive.resolve(entry) {
                info[key] = String(number)
            }
        }
        return info
    }
}
