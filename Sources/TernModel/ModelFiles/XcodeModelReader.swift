import Foundation
import FoundationXML
import TernSQLite

/// Reads Xcode's model files: `.xcdatamodeld` bundles (versions plus `.xccurrentversion`) and
/// single `.xcdatamodel/contents` XML documents.
///
/// `elementID` is read as the renaming identifier. Elements that do not affect storage (layout
/// `elements`, `configuration`, `fetchRequest`) are skipped; fetched properties have no column and
/// are skipped too.
enum XcodeModelReader {
    /// Reads every version of an `.xcdatamodeld` bundle, listed by file name, numbers compared
    /// as numbers ("Model 2" before "Model 10"): a stable listing for people, no order of age.
    static func readBundle(at url: URL) throws -> VersionedModel {
        let fileManager = FileManager.default
        let names = try fileManager.contentsOfDirectory(atPath: url.path)
            .filter { $0.hasSuffix(".xcdatamodel") }
            .sorted { stem($0).compare(stem($1), options: [.numeric]) == .orderedAscending }
        guard !names.isEmpty else {
            throw TernError(.badInput, "no .xcdatamodel version inside", path: url.path)
        }
        var warnings: [ModelWarning] = []
        let versions = try names.map { name in
            try readVersion(at: url.appendingPathComponent(name), warnings: &warnings)
        }
        // A bundle whose `.xccurrentversion` names no version (an empty dictionary, as WaterMe's
        // WaterMeData has, or no file at all) still compiles in Xcode; Tern takes the newest
        // version as the current one: it only decides the default target (`--to` names another).
        let currentFile = try currentVersionFile(in: url) ?? names[names.count - 1]
        let current = String(currentFile.dropLast(".xcdatamodel".count))
        guard versions.contains(where: { $0.versionName == current }) else {
            throw TernError(
                .badInput, ".xccurrentversion names \(currentFile), which is not in the bundle", path: url.appendingPathComponent(".xccurrentversion").path)
        }
        let modelName = url.deletingPathExtension().lastPathComponent
        return VersionedModel(name: modelName, versions: versions, currentVersionName: current, path: url.path, warnings: warnings)
    }

    private static func stem(_ file: String) -> String {
        String(file.dropLast(".xcdatamodel".count))
    }

    /// Reads one `.xcdatamodel` directory; the version's name is the directory's name.
    static func readVersion(at url: URL, warnings: inout [ModelWarning]) throws -> ObjectModel {
        let contents = url.appendingPathComponent("contents")
        guard FileManager.default.fileExists(atPath: contents.path) else {
            throw TernError(.badInput, "no contents file: Tern reads Xcode 4+ XML models, not the older binary elements/layout form", path: url.path)
        }
        return try readContents(at: contents, versionName: url.deletingPathExtension().lastPathComponent, warnings: &warnings)
    }

    private static func currentVersionFile(in bundle: URL) throws -> String? {
        let url = bundle.appendingPathComponent(".xccurrentversion")
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        let plist = try? PropertyListSerialization.propertyList(from: data, format: nil)
        guard let dictionary = plist as? [String: Any] else {
            throw TernError(.badInput, "not a property list", path: url.path)
        }
        return dictionary["_XCCurrentVersionName"] as? String
    }

    /// Parses a `contents` XML document.
    static func readContents(at url: URL, versionName: String, warnings: inout [ModelWarning]) throws -> ObjectModel {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw TernError(.io, "cannot read the file", path: url.path)
        }
        // XMLDocument recovers from broken XML on Linux; a strict SAX pass rejects it first and
        // says where.
        if let problem = WellFormedness.check(data) {
            throw TernError(.badInput, "malformed XML at \(problem)", path: url.path)
        }
        let document: XMLDocument
        do {
            document = try XMLDocument(data: data, options: [])
        } catch {
            throw TernError(.badInput, "malformed XML: \(error.localizedDescription)", path: url.path)
        }
        guard let root = document.rootElement(), root.name == "model" else {
            throw TernError(.badInput, "the root element is not <model>", path: url.path)
        }
        let identifier = root.string("userDefinedModelVersionIdentifier")
        do {
            var found: [String] = []
            var entities: [Entity] = []
            for element in root.elements(forName: "entity") { entities.append(try readEntity(element, warnings: &found)) }
            warnings += found.map { ModelWarning(version: versionName, file: url.path, message: $0) }
            return ObjectModel(versionName: versionName, versionIdentifiers: identifier.map { [$0] } ?? [], entities: entities)
        } catch {
            throw TernError(.badInput, error.description, path: url.path)
        }
    }

    private static func readEntity(_ element: XMLElement, warnings: inout [String]) throws(ModelTextError) -> Entity {
        guard let name = element.string("name") else { throw ModelTextError("an <entity> has no name") }
        do {
            var found: [String] = []
            var attributes: [Attribute] = []
            for attribute in element.elements(forName: "attribute") { attributes.append(try readAttribute(attribute, warnings: &found)) }
            warnings += found.map { "entity \(name), \($0)" }
            return Entity(
                name: name,
                parent: element.string("parentEntity"),
                isAbstract: element.flag("isAbstract"),
                renamingIdentifier: element.string("elementID"),
                versionHashModifier: element.string("versionHashModifier"),
                className: element.string("representedClassName"),
                userInfo: element.userInfo,
                attributes: attributes,
                relationships: try element.elements(forName: "relationship").map(readRelationship),
                uniquenessConstraints: element.elements(forName: "uniquenessConstraints")
                    .flatMap { $0.elements(forName: "uniquenessConstraint") }
                    .map { $0.elements(forName: "constraint").compactMap { $0.string("value") } },
                fetchIndexes: element.elements(forName: "fetchIndex").map { index in
                    FetchIndex(
                        name: index.string("name") ?? "",
                        properties: index.elements(forName: "fetchIndexElement").compactMap { $0.string("property") })
                },
                compoundIndexes: element.elements(forName: "compoundIndexes")
                    .flatMap { $0.elements(forName: "compoundIndex") }
                    .map { $0.elements(forName: "index").compactMap { $0.string("value") } }
            )
        } catch {
            throw ModelTextError("entity \(name), \(error.description)")
        }
    }

    private static func readAttribute(_ element: XMLElement, warnings: inout [String]) throws(ModelTextError) -> Attribute {
        guard let name = element.string("name") else { throw ModelTextError("an <attribute> has no name") }
        let typeName = element.string("attributeType") ?? "Undefined"
        guard let type = AttributeType(xcodeName: typeName) else {
            let known = AttributeType.allCases.map(\.xcodeName).joined(separator: ", ")
            throw ModelTextError("attribute \(name): unknown attributeType \"\(typeName)\" (known: \(known))")
        }
        do {
            var defaultValue: SQLiteValue?
            if let text = element.string("defaultValueString") {
                defaultValue = try xcodeDefault(text, type: type, attribute: name, warnings: &warnings)
            } else if let seconds = element.string("defaultDateTimeInterval") {
                defaultValue = try AttributeType.date.parseDefault(seconds)
            }
            var rules = ValidationRules(pattern: element.string("regularExpressionString"))
            let measuresLength = [.string, .uri, .binary].contains(type)
            if let low = element.string("minValueString") {
                if measuresLength { rules.minimumLength = try integer(low) } else { rules.minimumValue = try number(low) }
            }
            if let high = element.string("maxValueString") {
                if measuresLength { rules.maximumLength = try integer(high) } else { rules.maximumValue = try number(high) }
            }
            if let low = element.string("minDateTimeInterval") { rules.minimumValue = try number(low) }
            if let high = element.string("maxDateTimeInterval") { rules.maximumValue = try number(high) }
            return Attribute(
                name: name, type: type,
                isOptional: element.flag("optional"),
                isTransient: element.flag("transient"),
                defaultValue: defaultValue,
                validation: rules,
                renamingIdentifier: element.string("elementID"),
                versionHashModifier: element.string("versionHashModifier"),
                valueTransformerName: element.string("valueTransformerName"),
                allowsExternalStorage: element.flag("allowsExternalBinaryDataStorage"),
                userInfo: element.userInfo,
                preservesValueInHistoryOnDeletion: element.flag("preserveAfterDeletion"),
                isIndexed: element.flag("indexed"),
                derivation: element.string("derivationExpression").map(Derivation.init)
            )
        } catch {
            throw ModelTextError("attribute \(name): \(error.description)")
        }
    }

    private static func readRelationship(_ element: XMLElement) throws(ModelTextError) -> Relationship {
        guard let name = element.string("name") else { throw ModelTextError("a <relationship> has no name") }
        guard let destination = element.string("destinationEntity") else {
            throw ModelTextError("relationship \(name): no destinationEntity")
        }
        do throws(ModelTextError) {
            let ruleName = element.string("deletionRule") ?? "Nullify"
            guard let rule = DeleteRule(xcodeName: ruleName) else {
                throw ModelTextError("unknown deletionRule \"\(ruleName)\"")
            }
            let toMany = element.flag("toMany")
            return Relationship(
                name: name, destination: destination,
                inverse: element.string("inverseName"),
                isToMany: toMany,
                isOrdered: element.flag("ordered"),
                isOptional: element.flag("optional"),
                isTransient: element.flag("transient"),
                minCount: try element.string("minCount").map(integer) ?? 0,
                maxCount: try element.string("maxCount").map(integer) ?? (toMany ? 0 : 1),
                deleteRule: rule,
                renamingIdentifier: element.string("elementID"),
                versionHashModifier: element.string("versionHashModifier"),
                userInfo: element.userInfo
            )
        } catch {
            throw ModelTextError("relationship \(name): \(error.description)")
        }
    }

    /// A default as Xcode's model compiler reads it: a Boolean's `YES` or `NO` left on an integer
    /// attribute whose type was changed becomes the number the text starts with, 0, as
    /// Foundation's `longLongValue` reads it. Xcode compiles such a model without a word, so Tern
    /// loads it too, with a warning; any other text that is not a number stays an error.
    private static func xcodeDefault(_ text: String, type: AttributeType, attribute: String, warnings: inout [String]) throws(ModelTextError) -> SQLiteValue {
        do {
            return try type.parseDefault(text)
        } catch {
            guard [.integer16, .integer32, .integer64].contains(type),
                ["YES", "NO"].contains(text.trimmingCharacters(in: .whitespaces).uppercased())
            else { throw error }
            warnings.append("attribute \(attribute): defaultValueString \"\(text)\" is not an integer; read as 0, as Xcode's model compiler reads it")
            return .integer(0)
        }
    }

    private static func integer(_ text: String) throws(ModelTextError) -> Int {
        guard let value = Int(text) else { throw ModelTextError("\(text) is not a whole number") }
        return value
    }

    private static func number(_ text: String) throws(ModelTextError) -> Double {
        guard let value = Double(text) else { throw ModelTextError("\(text) is not a number") }
        return value
    }
}

extension XMLElement {
    fileprivate func string(_ name: String) -> String? {
        attribute(forName: name)?.stringValue
    }

    fileprivate func flag(_ name: String) -> Bool {
        string(name) == "YES"
    }

    fileprivate var userInfo: [String: String] {
        var entries: [String: String] = [:]
        for info in elements(forName: "userInfo") {
            for entry in info.elements(forName: "entry") {
                if let key = entry.string("key") { entries[key] = entry.string("value") ?? "" }
            }
        }
        return entries
    }
}
