import Foundation
import TernModel
import TernStore
import FoundationXML

/// Imports Xcode's `.xcmappingmodel/xcmapping.xml`: a Core Data XML-store document whose objects
/// are the mapping model, its entity mappings and their property mappings, with value expressions
/// as `NSKeyedArchiver` archives.
///
/// Entity mappings are named as Xcode names them (`CarToCar`; an add mapping by its destination).
/// Types follow Xcode's compiled models: a policy class makes a mapping custom, a missing source
/// entity an add, a missing destination a remove; otherwise it is a transform when an attribute
/// has an expression other than `$source.<its name>`, else a copy. Property mappings without an expression get the ones Xcode
/// generates (`ImportedMapping.resolvingDefaults`).
public enum XcodeMappingReader {
    /// A mapping as imported, before missing expressions are filled in.
    public struct ImportedMapping: Sendable {
        /// The mapping model, with entity mappings in Xcode's order; missing expressions are still nil.
        public var model: MappingModel
        /// Model file names the mapping was made between (`V1.xcdatamodel` → "V1").
        public var sourceModelName: String?
        /// The destination model file's name without its extension (`V2.xcdatamodel` → "V2").
        public var destinationModelName: String?
        /// Entity mapping → destination properties whose expression Xcode generates.
        public var generated: [String: Set<String>]
    }

    /// Reads a mapping model from an `.xcmappingmodel` package or its `xcmapping.xml`.
    /// Throws `TernError` naming the file when it is missing, unreadable or malformed.
    public static func read(at url: URL) throws -> ImportedMapping {
        let file = url.pathExtension == "xcmappingmodel" ? url.appendingPathComponent("xcmapping.xml") : url
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw TernError(FileManager.default.fileExists(atPath: file.path) ? .io : .missingInput, "cannot read the mapping model", path: file.path)
        }
        if let problem = WellFormedness.check(data) {
            throw TernError(.badInput, "malformed XML at \(problem)", path: file.path)
        }
        let document = try XMLDocument(data: data, options: [])
        var objects: [String: (type: String, element: XMLElement)] = [:]
        for element in document.rootElement()?.elements(forName: "object") ?? [] {
            if let id = element.attribute(forName: "id")?.stringValue, let type = element.attribute(forName: "type")?.stringValue {
                objects[id] = (type, element)
            }
        }
        guard let root = objects.values.first(where: { $0.type == "XDDEVMAPPINGMODEL" })?.element else {
            throw TernError(.badInput, "no XDDEVMAPPINGMODEL object: not an Xcode mapping model", path: file.path)
        }
        var entityMappings: [(number: Int, mapping: EntityMapping)] = []
        var generated: [String: Set<String>] = [:]
        do {
            for id in root.references("entitymappings") {
                guard let entity = objects[id]?.element else { continue }
                let source = entity.value("sourcename")
                let destination = entity.value("destinationname")
                let policy = EntityMapping.policy(className: entity.value("migrationpolicyclassname"))
                let name = source.map { "\($0)To\(destination ?? "")" } ?? destination ?? "Mapping\(id)"
                var attributes: [PropertyMapping] = []
                var relationships: [PropertyMapping] = []
                var missing: Set<String> = []
                var customExpressions = false
                for (key, kind) in [("attributemappings", true), ("relationshipmappings", false)] {
                    for propertyID in entity.references(key) {
                        guard let property = objects[propertyID]?.element, let propertyName = property.value("name") else { continue }
                        var expression: String?
                        if let encoded = property.value("valueexpressiondata") {
                            guard let archive = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters) else {
                                throw TernError(
                                    .badInput, "entity mapping \(name), property \(propertyName): the value expression is not base64", path: file.path)
                            }
                            do {
                                expression = try ArchivedExpression.text(from: [UInt8](archive))
                            } catch {
                                throw TernError(.badInput, "entity mapping \(name), property \(propertyName): \(error)", path: file.path)
                            }
                            customExpressions = customExpressions || (kind && expression != "$source.\(propertyName)")
                        } else {
                            missing.insert(propertyName)
                        }
                        let mapping = PropertyMapping(name: propertyName, valueExpression: expression)
                        if kind { attributes.append(mapping) } else { relationships.append(mapping) }
                    }
                }
                let type: EntityMappingType =
                    policy != nil ? .custom : source == nil ? .add : destination == nil ? .remove : customExpressions ? .transform : .copy
                generated[name] = missing
                entityMappings.append(
                    (
                        Int(entity.value("mappingnumber") ?? "") ?? entityMappings.count,
                        EntityMapping(
                            name: name, type: type, sourceEntity: source, destinationEntity: destination, policy: policy,
                            userInfo: entity.value("userinfodata").flatMap(userInfo) ?? [:],
                            attributeMappings: attributes.sorted { $0.name < $1.name },
                            relationshipMappings: relationships.sorted { $0.name < $1.name })
                    ))
            }
        }
        func modelName(_ key: String) -> String? {
            root.value(key).map { URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent }
        }
        let model = MappingModel(
            sourceVersion: modelName("sourcemodelpath"), destinationVersion: modelName("destinationmodelpath"),
            entityMappings: entityMappings.sorted { $0.number < $1.number }.map(\.mapping))
        return ImportedMapping(model: model, sourceModelName: model.sourceVersion, destinationModelName: model.destinationVersion, generated: generated)
    }

    /// An archived `NSDictionary` of strings, as entity-mapping user info is stored.
    private static func userInfo(_ encoded: String) -> [String: String]? {
        guard let data = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters),
            let archive = try? BinaryPropertyList.decode([UInt8](data)),
            case .array(let objects)? = archive["$objects"], case .uid(let root)? = archive["$top"]?["root"], root < objects.count,
            case .array(let keys)? = objects[root]["NS.keys"], case .array(let values)? = objects[root]["NS.objects"]
        else { return nil }
        var result: [String: String] = [:]
        for (key, value) in zip(keys, values) {
            guard case .uid(let k) = key, case .uid(let v) = value, k < objects.count, v < objects.count,
                let name = objects[k].string
            else { continue }
            switch objects[v] {
            case .string(let text): result[name] = text
            case .integer(let number): result[name] = String(number)
            case .real(let number): result[name] = String(number)
            case .bool(let flag): result[name] = flag ? "YES" : "NO"
            default: continue
            }
        }
        return result
    }
}

extension XcodeMappingReader.ImportedMapping {
    /// Fills the expressions Xcode generates for property mappings that have none: `$source.name`
    /// for an attribute the source entity has; for a relationship the source entity has,
    /// `destinationInstancesForEntityMappingNamed:` with the one entity mapping into the
    /// destination entity, or `destinationInstancesForSourceRelationshipNamed:` when several
    /// mappings cover it. Properties the source lacks keep no expression.
    public func resolvingDefaults(source: ObjectModel, destination: ObjectModel) -> MappingModel {
        var result = model
        for index in result.entityMappings.indices {
            let mapping = result.entityMappings[index]
            guard let sourceEntity = mapping.sourceEntity, let destinationEntity = mapping.destinationEntity else { continue }
            let missing = generated[mapping.name] ?? []
            let sourceAttributes = Set(source.allAttributes(of: sourceEntity).map(\.name))
            for (position, property) in mapping.attributeMappings.enumerated() where missing.contains(property.name) && sourceAttributes.contains(property.name)
            {
                result.entityMappings[index].attributeMappings[position].valueExpression = "$source.\(property.name)"
            }
            let sourceRelationships = Set(source.allRelationships(of: sourceEntity).map(\.name))
            for (position, property) in mapping.relationshipMappings.enumerated()
            where missing.contains(property.name) && sourceRelationships.contains(property.name) {
                guard let target = destination.allRelationships(of: destinationEntity).first(where: { $0.name == property.name })?.destination else { continue }
                let covering = model.entityMappings.filter { mapping in
                    mapping.destinationEntity.map { name in destination.descendants(of: target).contains { $0.name == name } } == true
                }
                let expression =
                    covering.count == 1
                    ? "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"\(covering[0].name)\", $source.\(property.name))"
                    : "FUNCTION($manager, \"destinationInstancesForSourceRelationshipNamed:sourceInstances:\", \"\(property.name)\", $source.\(property.name))"
                result.entityMappings[index].relationshipMappings[position].valueExpression = expression
            }
        }
        return result
    }
}

extension XMLElement {
    /// The text of `<attribute name="…">` child elements of a Core Data XML-store object.
    fileprivate func value(_ name: String) -> String? {
        elements(forName: "attribute").first { $0.attribute(forName: "name")?.stringValue == name }?.stringValue
    }

    /// The ids in a `<relationship name="…" idrefs="…">` child element.
    fileprivate func references(_ name: String) -> [String] {
        let relationship = elements(forName: "relationship").first { $0.attribute(forName: "name")?.stringValue == name }
        return (relationship?.attribute(forName: "idrefs")?.stringValue ?? "").split(separator: " ").map(String.init)
    }
}
