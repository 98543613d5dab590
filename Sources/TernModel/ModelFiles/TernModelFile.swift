import Foundation
import TernSQLite
import Yams

/// Tern's own model format: YAML files people write by hand (documented in the article "Model and mapping files" under
/// "Model files").
///
/// A versioned model is a directory with `model.yaml` naming the versions, oldest first, and the
/// current one; each version is a YAML file of entities.
package enum TernModelFile {
    struct Index: Decodable {
        var name: String?
        var current: String
        /// Version files, relative to the directory, oldest first.
        var versions: [String]

        init(from decoder: Decoder) throws {
            try decoder.rejectUnknownKeys(allowed: ["name", "current", "versions"], in: "model.yaml")
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            name = try container.decodeIfPresent(String.self, forKey: .init(stringValue: "name"))
            current = try container.decode(String.self, forKey: .init(stringValue: "current"))
            versions = try container.decode([String].self, forKey: .init(stringValue: "versions"))
        }
    }

    struct Version: Decodable {
        var version: String?
        var identifiers: [String]
        var entities: [String: EntityFields]

        init(from decoder: Decoder) throws {
            try decoder.rejectUnknownKeys(allowed: ["version", "identifiers", "entities"], in: "a model version")
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            version = try container.decodeIfPresent(String.self, forKey: .init(stringValue: "version"))
            identifiers = try container.decodeIfPresent([String].self, forKey: .init(stringValue: "identifiers")) ?? []
            entities = try container.decodeIfPresent([String: EntityFields].self, forKey: .init(stringValue: "entities")) ?? [:]
        }
    }

    struct EntityFields: Decodable {
        var parent: String?
        var abstract: Bool?
        var renamingIdentifier: String?
        var hashModifier: String?
        var className: String?
        var userInfo: [String: String]?
        var attributes: [String: AttributeFields]?
        var relationships: [String: RelationshipFields]?
        var unique: [[String]]?
        var indexes: [String: [String]]?
        var compoundIndexes: [[String]]?

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case parent, abstract, renamingIdentifier, hashModifier, className, userInfo, attributes, relationships, unique, indexes, compoundIndexes
        }

        init(from decoder: Decoder) throws {
            try decoder.rejectUnknownKeys(allowed: Set(CodingKeys.allCases.map(\.rawValue)), in: "an entity")
            let c = try decoder.container(keyedBy: CodingKeys.self)
            parent = try c.decodeIfPresent(String.self, forKey: .parent)
            abstract = try c.decodeIfPresent(Bool.self, forKey: .abstract)
            renamingIdentifier = try c.decodeIfPresent(String.self, forKey: .renamingIdentifier)
            hashModifier = try c.decodeIfPresent(String.self, forKey: .hashModifier)
            className = try c.decodeIfPresent(String.self, forKey: .className)
            userInfo = try c.decodeIfPresent([String: String].self, forKey: .userInfo)
            attributes = try c.decodeIfPresent([String: AttributeFields].self, forKey: .attributes)
            relationships = try c.decodeIfPresent([String: RelationshipFields].self, forKey: .relationships)
            unique = try c.decodeIfPresent([[String]].self, forKey: .unique)
            indexes = try c.decodeIfPresent([String: [String]].self, forKey: .indexes)
            compoundIndexes = try c.decodeIfPresent([[String]].self, forKey: .compoundIndexes)
        }
    }

    /// An attribute: either just its type (`title: string`) or a mapping of fields.
    struct AttributeFields: Decodable {
        var type: AttributeType
        var optional: Bool?
        var transient: Bool?
        var defaultText: String?
        var min: Double?
        var max: Double?
        var minLength: Int?
        var maxLength: Int?
        var pattern: String?
        var renamingIdentifier: String?
        var hashModifier: String?
        var transformer: String?
        var externalStorage: Bool?
        var preserveAfterDeletion: Bool?
        var indexed: Bool?
        var derivation: String?
        var userInfo: [String: String]?

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case type, optional, transient, `default`, min, max, minLength, maxLength, pattern
            case renamingIdentifier, hashModifier, transformer, externalStorage, preserveAfterDeletion, indexed, derivation, userInfo
        }

        init(from decoder: Decoder) throws {
            if let shorthand = try? decoder.singleValueContainer().decode(AttributeType.self) {
                type = shorthand
                return
            }
            try decoder.rejectUnknownKeys(allowed: Set(CodingKeys.allCases.map(\.rawValue)), in: "an attribute")
            let c = try decoder.container(keyedBy: CodingKeys.self)
            type = try c.decode(AttributeType.self, forKey: .type)
            optional = try c.decodeIfPresent(Bool.self, forKey: .optional)
            transient = try c.decodeIfPresent(Bool.self, forKey: .transient)
            defaultText = try c.decodeIfPresent(String.self, forKey: .default)
            min = try c.decodeIfPresent(Double.self, forKey: .min)
            max = try c.decodeIfPresent(Double.self, forKey: .max)
            minLength = try c.decodeIfPresent(Int.self, forKey: .minLength)
            maxLength = try c.decodeIfPresent(Int.self, forKey: .maxLength)
            pattern = try c.decodeIfPresent(String.self, forKey: .pattern)
            renamingIdentifier = try c.decodeIfPresent(String.self, forKey: .renamingIdentifier)
            hashModifier = try c.decodeIfPresent(String.self, forKey: .hashModifier)
            transformer = try c.decodeIfPresent(String.self, forKey: .transformer)
            externalStorage = try c.decodeIfPresent(Bool.self, forKey: .externalStorage)
            preserveAfterDeletion = try c.decodeIfPresent(Bool.self, forKey: .preserveAfterDeletion)
            indexed = try c.decodeIfPresent(Bool.self, forKey: .indexed)
            derivation = try c.decodeIfPresent(String.self, forKey: .derivation)
            userInfo = try c.decodeIfPresent([String: String].self, forKey: .userInfo)
        }
    }

    struct RelationshipFields: Decodable {
        var destination: String
        var inverse: String?
        var toMany: Bool?
        var ordered: Bool?
        var optional: Bool?
        var transient: Bool?
        var minCount: Int?
        var maxCount: Int?
        var deleteRule: DeleteRule?
        var renamingIdentifier: String?
        var hashModifier: String?
        var userInfo: [String: String]?

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case destination, inverse, toMany, ordered, optional, transient, minCount, maxCount, deleteRule
            case renamingIdentifier, hashModifier, userInfo
        }

        init(from decoder: Decoder) throws {
            try decoder.rejectUnknownKeys(allowed: Set(CodingKeys.allCases.map(\.rawValue)), in: "a relationship")
            let c = try decoder.container(keyedBy: CodingKeys.self)
            destination = try c.decode(String.self, forKey: .destination)
            inverse = try c.decodeIfPresent(String.self, forKey: .inverse)
            toMany = try c.decodeIfPresent(Bool.self, forKey: .toMany)
            ordered = try c.decodeIfPresent(Bool.self, forKey: .ordered)
            optional = try c.decodeIfPresent(Bool.self, forKey: .optional)
            transient = try c.decodeIfPresent(Bool.self, forKey: .transient)
            minCount = try c.decodeIfPresent(Int.self, forKey: .minCount)
            maxCount = try c.decodeIfPresent(Int.self, forKey: .maxCount)
            deleteRule = try c.decodeIfPresent(DeleteRule.self, forKey: .deleteRule)
            renamingIdentifier = try c.decodeIfPresent(String.self, forKey: .renamingIdentifier)
            hashModifier = try c.decodeIfPresent(String.self, forKey: .hashModifier)
            userInfo = try c.decodeIfPresent([String: String].self, forKey: .userInfo)
        }
    }

    // MARK: Reading

    static func readDirectory(at url: URL) throws -> VersionedModel {
        let indexURL = url.appendingPathComponent("model.yaml")
        let index: Index = try decode(indexURL)
        guard !index.versions.isEmpty else {
            throw TernError(.badInput, "versions is empty", path: indexURL.path)
        }
        let versions = try index.versions.map { file in
            try readVersion(at: url.appendingPathComponent(file))
        }
        guard versions.contains(where: { $0.versionName == index.current }) else {
            throw TernError(
                .badInput, "current version \"\(index.current)\" is not one of the versions (\(versions.map(\.versionName).joined(separator: ", ")))",
                path: indexURL.path)
        }
        return VersionedModel(name: index.name ?? url.lastPathComponent, versions: versions, currentVersionName: index.current, path: url.path)
    }

    static func readVersion(at url: URL) throws -> ObjectModel {
        let file: Version = try decode(url)
        let name = file.version ?? url.deletingPathExtension().lastPathComponent
        do throws(ModelTextError) {
            var entities: [Entity] = []
            for (entityName, fields) in file.entities {
                entities.append(try entity(entityName, fields))
            }
            return ObjectModel(versionName: name, versionIdentifiers: file.identifiers, entities: entities)
        } catch {
            throw TernError(.badInput, error.description, path: url.path)
        }
    }

    private static func entity(_ name: String, _ fields: EntityFields) throws(ModelTextError) -> Entity {
        var attributes: [Attribute] = []
        for (attributeName, field) in fields.attributes ?? [:] {
            var value: SQLiteValue? = nil
            if let text = field.defaultText {
                do {
                    value = try field.type.parseDefault(text)
                } catch {
                    throw ModelTextError("entity \(name), attribute \(attributeName): default \(error.description)")
                }
            }
            attributes.append(
                Attribute(
                    name: attributeName, type: field.type,
                    isOptional: field.optional ?? true,
                    isTransient: field.transient ?? false,
                    defaultValue: value,
                    validation: ValidationRules(
                        minimumValue: field.min, maximumValue: field.max,
                        minimumLength: field.minLength, maximumLength: field.maxLength, pattern: field.pattern),
                    renamingIdentifier: field.renamingIdentifier,
                    versionHashModifier: field.hashModifier,
                    valueTransformerName: field.transformer,
                    allowsExternalStorage: field.externalStorage ?? false,
                    userInfo: field.userInfo ?? [:],
                    preservesValueInHistoryOnDeletion: field.preserveAfterDeletion ?? false,
                    isIndexed: field.indexed ?? false,
                    derivation: field.derivation.map(Derivation.init)))
        }
        let relationships = (fields.relationships ?? [:]).map { relationshipName, field in
            Relationship(
                name: relationshipName, destination: field.destination, inverse: field.inverse,
                isToMany: field.toMany ?? false, isOrdered: field.ordered ?? false,
                isOptional: field.optional ?? true, isTransient: field.transient ?? false,
                minCount: field.minCount ?? 0, maxCount: field.maxCount,
                deleteRule: field.deleteRule ?? .nullify,
                renamingIdentifier: field.renamingIdentifier, versionHashModifier: field.hashModifier,
                userInfo: field.userInfo ?? [:])
        }
        return Entity(
            name: name, parent: fields.parent, isAbstract: fields.abstract ?? false,
            renamingIdentifier: fields.renamingIdentifier, versionHashModifier: fields.hashModifier,
            className: fields.className, userInfo: fields.userInfo ?? [:],
            attributes: attributes.sorted { $0.name < $1.name },
            relationships: relationships.sorted { $0.name < $1.name },
            uniquenessConstraints: fields.unique ?? [],
            fetchIndexes: (fields.indexes ?? [:]).map { FetchIndex(name: $0.key, properties: $0.value) }.sorted { $0.name < $1.name },
            compoundIndexes: fields.compoundIndexes ?? [])
    }

    /// Decodes a YAML file; syntax errors carry line and column, shape errors the key path.
    package static func decode<Value: Decodable>(_ url: URL) throws -> Value {
        guard let text = try? String(contentsOf: url, encoding: .utf8) else {
            throw TernError(
                FileManager.default.fileExists(atPath: url.path) ? .io : .missingInput,
                FileManager.default.fileExists(atPath: url.path) ? "cannot read the file as UTF-8 text" : "no such file", path: url.path)
        }
        if let (line, column) = YAMLComplexKeys.first(in: text) {
            throw TernError(.badInput, "line \(line), column \(column): a mapping key that is not a plain name (Tern's YAML keys are names)", path: url.path)
        }
        do {
            return try YAMLDecoder().decode(Value.self, from: text)
        } catch let error as YamlError {
            throw TernError(.badInput, "YAML syntax error: \(error)", path: url.path)
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, let syntax = context.underlyingError as? YamlError {
                throw TernError(.badInput, "YAML syntax error: \(syntax)", path: url.path)
            }
            throw TernError(.badInput, describe(error), path: url.path)
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map(\.stringValue).filter { !$0.isEmpty }
            return keys.isEmpty ? "" : "at \(keys.joined(separator: ".")): "
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context))missing key \(key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(path(context))\(context.debugDescription)"
        case .dataCorrupted(let context):
            return "\(path(context))\(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
