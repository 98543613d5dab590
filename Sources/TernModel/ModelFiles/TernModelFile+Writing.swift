import Foundation
import TernSQLite
import Yams

/// Tern's YAML model format written out: a version exported from a compiled model or a store's
/// `Z_MODELCACHE` becomes a file people read, edit and migrate with. Reading what is written
/// gives the same version (same hashes and layout).
extension TernModelFile {
    /// The YAML text of one version.
    static func text(_ version: ObjectModel) throws -> String {
        var entities: [String: Any] = [:]
        for entity in version.entities {
            var fields: [String: Any] = [:]
            if let parent = entity.parent { fields["parent"] = parent }
            if entity.isAbstract { fields["abstract"] = true }
            if let renaming = entity.renamingIdentifier { fields["renamingIdentifier"] = renaming }
            if let modifier = entity.versionHashModifier { fields["hashModifier"] = modifier }
            if let className = entity.className { fields["className"] = className }
            if !entity.userInfo.isEmpty { fields["userInfo"] = entity.userInfo }
            if !entity.attributes.isEmpty {
                fields["attributes"] = Dictionary(uniqueKeysWithValues: entity.attributes.map { ($0.name, attributeFields($0)) })
            }
            if !entity.relationships.isEmpty {
                fields["relationships"] = Dictionary(uniqueKeysWithValues: entity.relationships.map { ($0.name, relationshipFields($0)) })
            }
            if !entity.uniquenessConstraints.isEmpty { fields["unique"] = entity.uniquenessConstraints }
            if !entity.fetchIndexes.isEmpty {
                fields["indexes"] = Dictionary(entity.fetchIndexes.map { ($0.name, $0.properties) }, uniquingKeysWith: { first, _ in first })
            }
            if !entity.compoundIndexes.isEmpty { fields["compoundIndexes"] = entity.compoundIndexes }
            entities[entity.name] = fields
        }
        var document: [String: Any] = ["version": version.versionName, "entities": entities]
        if !version.versionIdentifiers.isEmpty { document["identifiers"] = version.versionIdentifiers }
        return try Yams.dump(object: document, sortKeys: true)
    }

    /// Writes `version` as a one-version Tern model: `model.yaml` and `v1.yaml` in `directory`.
    static func export(_ version: ObjectModel, named name: String, to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let index = try Yams.dump(object: ["name": name, "current": version.versionName, "versions": ["v1.yaml"]] as [String: Any], sortKeys: true)
        try DurableFile.write(Array(index.utf8), to: directory.appendingPathComponent("model.yaml").path, what: "the exported model")
        try DurableFile.write(Array(try text(version).utf8), to: directory.appendingPathComponent("v1.yaml").path, what: "the exported model version")
    }

    private static func attributeFields(_ attribute: Attribute) -> [String: Any] {
        var fields: [String: Any] = ["type": attribute.type.rawValue, "optional": attribute.isOptional]
        if attribute.isTransient { fields["transient"] = true }
        if let value = attribute.defaultValue { fields["default"] = defaultText(value, type: attribute.type) }
        let rules = attribute.validation
        if let low = rules.minimumValue { fields["min"] = low }
        if let high = rules.maximumValue { fields["max"] = high }
        if let low = rules.minimumLength { fields["minLength"] = low }
        if let high = rules.maximumLength { fields["maxLength"] = high }
        if let pattern = rules.pattern { fields["pattern"] = pattern }
        if let renaming = attribute.renamingIdentifier { fields["renamingIdentifier"] = renaming }
        if let modifier = attribute.versionHashModifier { fields["hashModifier"] = modifier }
        if let transformer = attribute.valueTransformerName { fields["transformer"] = transformer }
        if attribute.allowsExternalStorage { fields["externalStorage"] = true }
        if attribute.preservesValueInHistoryOnDeletion { fields["preserveAfterDeletion"] = true }
        if attribute.isIndexed { fields["indexed"] = true }
        if let derivation = attribute.derivation { fields["derivation"] = derivation.description }
        if !attribute.userInfo.isEmpty { fields["userInfo"] = attribute.userInfo }
        return fields
    }

    private static func relationshipFields(_ relationship: Relationship) -> [String: Any] {
        var fields: [String: Any] = [
            "destination": relationship.destination, "optional": relationship.isOptional,
            "deleteRule": relationship.deleteRule.rawValue,
        ]
        if let inverse = relationship.inverse ?? relationship.unreciprocatedInverse { fields["inverse"] = inverse }
        if relationship.isToMany { fields["toMany"] = true }
        if relationship.isOrdered { fields["ordered"] = true }
        if relationship.isTransient { fields["transient"] = true }
        if relationship.minCount != 0 { fields["minCount"] = relationship.minCount }
        if relationship.maxCount != (relationship.isToMany ? 0 : 1) { fields["maxCount"] = relationship.maxCount }
        if let renaming = relationship.renamingIdentifier { fields["renamingIdentifier"] = renaming }
        if let modifier = relationship.versionHashModifier { fields["hashModifier"] = modifier }
        if !relationship.userInfo.isEmpty { fields["userInfo"] = relationship.userInfo }
        return fields
    }

    /// A default as `AttributeType.parseDefault` reads it back.
    private static func defaultText(_ value: SQLiteValue, type: AttributeType) -> String {
        switch (value, type) {
        case (.integer(let number), .boolean): number == 0 ? "NO" : "YES"
        case (.integer(let number), _): String(number)
        case (.real(let number), _): "\(number)"
        case (.text(let text), _): text
        case (.blob(let bytes), .uuid) where bytes.count == 16:
            UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                    bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                )
            ).uuidString
        case (.blob(let bytes), _): Data(bytes).base64EncodedString()
        case (.null, _): ""
        }
    }
}

/// Writes a model version in Tern's YAML format (the article "Model and mapping files"): what `tern inspect
/// --export-model` does with the model a store carries.
public enum ModelExporter {
    /// The YAML text of `version`, as one version file.
    public static func yaml(_ version: ObjectModel) throws -> String {
        try TernModelFile.text(version)
    }

    /// Writes `version` as a one-version model directory (`model.yaml`, `v1.yaml`) named `name`.
    public static func export(_ version: ObjectModel, named name: String, to directory: URL) throws {
        try TernModelFile.export(version, named: name, to: directory)
    }
}
