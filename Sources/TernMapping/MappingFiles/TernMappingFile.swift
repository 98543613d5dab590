import Foundation
import TernModel
import TernStore
import Yams

/// Tern's mapping-model format: YAML, written by people or by `tern infer` (documented in the
/// article "Model and mapping files").
enum TernMappingFile {
    struct File: Codable {
        var source: String?
        var destination: String?
        var entityMappings: [EntityFields]

        private enum CodingKeys: String, CodingKey, CaseIterable { case source, destination, entityMappings }

        init(_ model: MappingModel) {
            source = model.sourceVersion
            destination = model.destinationVersion
            entityMappings = model.entityMappings.map(EntityFields.init)
        }

        init(from decoder: Decoder) throws {
            try decoder.rejectUnknownKeys(allowed: Set(CodingKeys.allCases.map(\.rawValue)), in: "a mapping model")
            let c = try decoder.container(keyedBy: CodingKeys.self)
            source = try c.decodeIfPresent(String.self, forKey: .source)
            destination = try c.decodeIfPresent(String.self, forKey: .destination)
            entityMappings = try c.decodeIfPresent([EntityFields].self, forKey: .entityMappings) ?? []
        }

        var model: MappingModel {
            MappingModel(sourceVersion: source, destinationVersion: destination, entityMappings: entityMappings.map(\.mapping))
        }
    }

    struct EntityFields: Codable {
        var name: String
        var type: EntityMappingType
        var source: String?
        var destination: String?
        var filter: String?
        var policy: String?
        var userInfo: [String: String]?
        /// Destination property → value expression (nil: no expression).
        var attributes: [String: String?]?
        var relationships: [String: String?]?

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case name, type, source, destination, filter, policy, userInfo, attributes, relationships
        }

        init(_ mapping: EntityMapping) {
            name = mapping.name
            type = mapping.type
            source = mapping.sourceEntity
            destination = mapping.destinationEntity
            filter = mapping.filterPredicate
            policy = mapping.policy
            userInfo = mapping.userInfo.isEmpty ? nil : mapping.userInfo
            attributes =
                mapping.attributeMappings.isEmpty ? nil : Dictionary(uniqueKeysWithValues: mapping.attributeMappings.map { ($0.name, $0.valueExpression) })
            relationships =
                mapping.relationshipMappings.isEmpty
                ? nil : Dictionary(uniqueKeysWithValues: mapping.relationshipMappings.map { ($0.name, $0.valueExpression) })
        }

        init(from decoder: Decoder) throws {
            try decoder.rejectUnknownKeys(allowed: Set(CodingKeys.allCases.map(\.rawValue)), in: "an entity mapping")
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            type = try c.decode(EntityMappingType.self, forKey: .type)
            source = try c.decodeIfPresent(String.self, forKey: .source)
            destination = try c.decodeIfPresent(String.self, forKey: .destination)
            filter = try c.decodeIfPresent(String.self, forKey: .filter)
            policy = try c.decodeIfPresent(String.self, forKey: .policy)
            userInfo = try c.decodeIfPresent([String: String].self, forKey: .userInfo)
            attributes = try c.decodeIfPresent([String: String?].self, forKey: .attributes)
            relationships = try c.decodeIfPresent([String: String?].self, forKey: .relationships)
        }

        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name)
            try c.encode(type, forKey: .type)
            try c.encodeIfPresent(source, forKey: .source)
            try c.encodeIfPresent(destination, forKey: .destination)
            try c.encodeIfPresent(filter, forKey: .filter)
            try c.encodeIfPresent(policy, forKey: .policy)
            try c.encodeIfPresent(userInfo, forKey: .userInfo)
            for (key, properties) in [(CodingKeys.attributes, attributes), (.relationships, relationships)] {
                guard let properties else { continue }
                // Sorted here, not by the encoder, so the entity's own keys keep their reading order.
                var nested = c.nestedContainer(keyedBy: AnyCodingKey.self, forKey: key)
                for name in properties.keys.sorted() {
                    if let expression = properties[name] ?? nil {
                        try nested.encode(expression, forKey: AnyCodingKey(stringValue: name))
                    } else {
                        try nested.encodeNil(forKey: AnyCodingKey(stringValue: name))
                    }
                }
            }
        }

        var mapping: EntityMapping {
            EntityMapping(
                name: name, type: type, sourceEntity: source, destinationEntity: destination, filterPredicate: filter,
                policy: policy, userInfo: userInfo ?? [:],
                attributeMappings: (attributes ?? [:]).map { PropertyMapping(name: $0.key, valueExpression: $0.value) }.sorted { $0.name < $1.name },
                relationshipMappings: (relationships ?? [:]).map { PropertyMapping(name: $0.key, valueExpression: $0.value) }.sorted { $0.name < $1.name })
        }
    }

    static func read(at url: URL) throws -> MappingModel {
        let file: File = try TernModelFile.decode(url)
        return file.model
    }

    /// The YAML text of a mapping model: keys in reading order (name, type, source, …), property
    /// mappings by name, so the same model always gives the same text.
    static func text(_ model: MappingModel) throws -> String {
        let encoder = YAMLEncoder()
        encoder.options.width = -1
        return try encoder.encode(File(model))
    }
}
