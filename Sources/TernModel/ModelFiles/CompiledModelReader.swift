import Foundation
import TernSQLite

/// Reads Core Data's compiled models: `.mom` files and `.momd` bundles, which Xcode builds from
/// `.xcdatamodel` sources, and the same archive a store keeps in `Z_MODELCACHE`. A `.mom` is an
/// `NSKeyedArchiver` archive of an `NSManagedObjectModel`; a `.momd` holds one per version and a
/// `VersionInfo.plist` naming the current one.
///
/// Only what storage and migration depend on is read (the keys Core Data's archive uses):
/// entities with inheritance, abstractness, renaming identifiers, hash modifiers, uniqueness
/// constraints and fetch indexes; attributes of every type with optionality, transience (`_P`
/// flags or `NSIsOptional`/`NSIsTransient`), defaults, validation predicates and external
/// storage (`NSFlagsKey`); relationships with their destination, inverse, counts, order and
/// delete rule. Fetched properties have no column and are skipped.
package enum CompiledModelReader {
    /// The deepest nesting of archived objects followed; real models nest a handful of levels.
    static let maximumDepth = 32

    /// Reads every version of a `.momd` bundle (listed by file name), the current one named by its
    /// `VersionInfo.plist` (required when there are several).
    static func readBundle(at url: URL) throws -> VersionedModel {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw TernError(.badInput, "not a compiled model: a .momd is a folder of .mom files (and a VersionInfo.plist)", path: url.path)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: url.path)
            .filter { $0.hasSuffix(".mom") }
            .sorted { stem($0).compare(stem($1), options: [.numeric]) == .orderedAscending }
        guard !names.isEmpty else { throw TernError(.badInput, "no .mom version inside", path: url.path) }
        let versions = try names.map { try readVersion(at: url.appendingPathComponent($0)) }
        let info = url.appendingPathComponent("VersionInfo.plist")
        let current: String
        if let data = FileManager.default.contents(atPath: info.path),
            let name = ((try? BinaryPropertyList.decode([UInt8](data))) ?? xmlPropertyList(data))?["NSManagedObjectModel_CurrentVersionName"]?.string
        {
            current = name
        } else if versions.count == 1 {
            // Xcode leaves the current version's name out of a one-version bundle's plist
            // (DuckDuckGo's AppRatingPrompt.momd).
            current = versions[0].versionName
        } else {
            throw TernError(
                .badInput, "several versions and no VersionInfo.plist with NSManagedObjectModel_CurrentVersionName naming the current one", path: url.path)
        }
        guard versions.contains(where: { $0.versionName == current }) else {
            throw TernError(.badInput, "VersionInfo.plist names \(current) as the current version, which has no .mom in the bundle", path: info.path)
        }
        return VersionedModel(name: url.deletingPathExtension().lastPathComponent, versions: versions, currentVersionName: current, path: url.path)
    }

    /// Reads one `.mom` file; the version's name is the file's name without `.mom`.
    static func readVersion(at url: URL) throws -> ObjectModel {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw TernError(.io, "cannot read the file", path: url.path)
        }
        do {
            return try decode([UInt8](data), versionName: stem(url.lastPathComponent))
        } catch let error as TernError {
            throw TernError(error.kind, error.message, path: url.path)
        }
    }

    /// Decodes an archived `NSManagedObjectModel` as the version `versionName`.
    ///
    /// - Throws: `TernError` (bad input) saying what is wrong: not an archive, not a model, a
    ///   reference out of range, an attribute type Tern does not store, nesting too deep.
    package static func decode(_ bytes: [UInt8], versionName: String) throws -> ObjectModel {
        do {
            let archive = try KeyedArchive(bytes)
            let root = try archive.object(archive.root)
            guard try archive.className(root) == "NSManagedObjectModel" else {
                throw KeyedArchive.Malformed(description: "the archive holds a \(try archive.className(root)), not an NSManagedObjectModel")
            }
            let reader = Reader(archive: archive)
            let identifiers = try archive.array(root["NSVersionIdentifiers"]).compactMap { try archive.string($0) }.sorted()
            let entities = try archive.dictionary(root["NSEntities"]).map { try reader.entity($0.value) }
            return ObjectModel(versionName: versionName, versionIdentifiers: identifiers, entities: ownPropertiesOnly(entities))
        } catch let malformed as KeyedArchive.Malformed {
            throw TernError(.badInput, "not a readable compiled model: \(malformed.description)")
        }
    }

    /// A store's cached model lists a subentity's inherited properties again (a `.mom` lists
    /// them as proxies, which are skipped); a Tern model keeps each property on the entity that
    /// declares it.
    private static func ownPropertiesOnly(_ entities: [Entity]) -> [Entity] {
        let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        return entities.map { entity in
            var inherited: Set<String> = []
            var ancestor = entity.parent.flatMap { byName[$0] }
            var seen: Set<String> = [entity.name]
            while let parent = ancestor, seen.insert(parent.name).inserted {
                inherited.formUnion(parent.propertyNames)
                ancestor = parent.parent.flatMap { byName[$0] }
            }
            var own = entity
            own.attributes.removeAll { inherited.contains($0.name) }
            own.relationships.removeAll { inherited.contains($0.name) }
            return own
        }
    }

    private static func stem(_ file: String) -> String {
        URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
    }

    /// A `VersionInfo.plist` in XML form (Xcode writes binary; a hand-made bundle may not).
    private static func xmlPropertyList(_ data: Data) -> PropertyListValue? {
        guard let dictionary = (try? PropertyListSerialization.propertyList(from: data, format: nil)) as? [String: Any],
            let name = dictionary["NSManagedObjectModel_CurrentVersionName"] as? String
        else { return nil }
        return .dictionary(["NSManagedObjectModel_CurrentVersionName": .string(name)])
    }

    private struct Reader {
        let archive: KeyedArchive

        func entity(_ object: PropertyListValue) throws -> Entity {
            guard let name = try archive.string(object["NSEntityName"]) else {
                throw KeyedArchive.Malformed(description: "an entity without a name")
            }
            do {
                var attributes: [Attribute] = []
                var relationships: [Relationship] = []
                for (_, property) in try archive.dictionary(object["NSProperties"]) {
                    switch try archive.className(property) {
                    case "NSAttributeDescription", "NSDerivedAttributeDescription": attributes.append(try attribute(property))
                    case "NSRelationshipDescription": relationships.append(try relationship(property))
                    default: continue  // fetched properties have no column; proxies stand for inherited ones
                    }
                }
                let parent = try archive.resolve(object["NSSuperentity"]).map { try archive.string($0["NSEntityName"]) } ?? nil
                return Entity(
                    name: name, parent: parent,
                    isAbstract: object["NSIsAbstract"] == .bool(true),
                    renamingIdentifier: try renaming(object["NSRenamingIdentifier"], name: name),
                    versionHashModifier: try archive.string(object["NSVersionHashModifier"]),
                    className: try archive.string(object["NSClassNameForEntity"]),
                    userInfo: try userInfo(object["NSUserInfo"]),
                    attributes: attributes.sorted { $0.name < $1.name },
                    relationships: relationships.sorted { $0.name < $1.name },
                    uniquenessConstraints: try archive.array(object["NSUniqueTuples"]).map { tuple in
                        try archive.array(tuple).compactMap { try archive.string($0) ?? archive.string($0["NSPropertyName"]) }
                    },
                    fetchIndexes: try archive.array(object["NSFetchIndexDescriptions"]).map { index in
                        FetchIndex(
                            name: try archive.string(index["NSIndexName"]) ?? "",
                            properties: try archive.array(index["NSIndexElements"]).compactMap { try archive.string($0["NSPropertyName"]) })
                    })
            } catch let malformed as KeyedArchive.Malformed {
                throw KeyedArchive.Malformed(description: "entity \(name): \(malformed.description)")
            }
        }

        func attribute(_ object: PropertyListValue) throws -> Attribute {
            let name = try propertyName(object)
            let code = object["NSAttributeType"].flatMap(integer) ?? 0
            guard let type = AttributeType.allCases.first(where: { $0.coreDataCode == code }) else {
                throw KeyedArchive.Malformed(description: "attribute \(name): attribute type \(code) is not one a store keeps")
            }
            let flags = object["NSFlagsKey"].flatMap(integer) ?? 0
            do {
                return Attribute(
                    name: name, type: type,
                    isOptional: isOptional(object), isTransient: isTransient(object),
                    defaultValue: try defaultValue(object["NSDefaultValue"], type: type),
                    validation: try validation(object["NSValidationPredicates"], type: type),
                    renamingIdentifier: try renaming(object["NSRenamingIdentifier"], name: name),
                    versionHashModifier: try archive.string(object["NSVersionHashModifier"]),
                    valueTransformerName: try archive.string(object["NSValueTransformerName"]),
                    // NSAttributeDescription's flags, in the order its header declares them:
                    // has-maximum, has-minimum, stores binary data externally; bit 16 keeps the
                    // value in persistent history after deletion.
                    allowsExternalStorage: flags & 4 != 0,
                    userInfo: try userInfo(object["NSUserInfo"]),
                    preservesValueInHistoryOnDeletion: flags & 16 != 0,
                    derivation: try derivation(object["NSDerivationExpression"]))
            } catch let malformed as KeyedArchive.Malformed {
                throw KeyedArchive.Malformed(description: "attribute \(name): \(malformed.description)")
            }
        }

        /// A derived attribute's archived `NSExpression`, as Xcode's text reads it.
        func derivation(_ value: PropertyListValue?) throws -> Derivation? {
            guard case .uid(let uid)? = value, try archive.resolve(value) != nil else { return nil }
            do {
                return Derivation(try ArchivedExpression.text(in: archive, object: uid))
            } catch let unsupported as ArchivedExpression.Unsupported {
                throw KeyedArchive.Malformed(description: "derivation expression: \(unsupported.description)")
            }
        }

        func relationship(_ object: PropertyListValue) throws -> Relationship {
            let name = try propertyName(object)
            let destination = try archive.resolve(object["NSDestinationEntity"]).map { try archive.string($0["NSEntityName"]) } ?? nil
            guard let destination = try destination ?? archive.string(object["_NSDestinationEntityName"]) else {
                throw KeyedArchive.Malformed(description: "relationship \(name) has no destination entity")
            }
            let inverse = try archive.resolve(object["NSInverseRelationship"]).map { try archive.string($0["NSPropertyName"]) } ?? nil
            // Unbounded is 0 in Xcode's XML and may be archived as -1 (NSUIntegerMax), which the
            // version hash keeps apart.
            let maxCount = max(-1, object["NSMaxCount"].flatMap(integer) ?? 1)
            let rules: [Int: DeleteRule] = [0: .noAction, 1: .nullify, 2: .cascade, 3: .deny]
            return Relationship(
                name: name, destination: destination,
                inverse: try inverse ?? archive.string(object["_NSInverseRelationshipName"]),
                isToMany: maxCount != 1,
                isOrdered: object["NSIsOrdered"] == .bool(true) || (flagBits(object) & 1024 != 0),
                isOptional: isOptional(object), isTransient: isTransient(object),
                minCount: object["NSMinCount"].flatMap(integer) ?? 0,
                maxCount: maxCount,
                deleteRule: rules[object["NSDeleteRule"].flatMap(integer) ?? 1] ?? .nullify,
                renamingIdentifier: try renaming(object["NSRenamingIdentifier"], name: name),
                versionHashModifier: try archive.string(object["NSVersionHashModifier"]),
                userInfo: try userInfo(object["NSUserInfo"]))
        }

        private func propertyName(_ object: PropertyListValue) throws -> String {
            guard let name = try archive.string(object["NSPropertyName"]) else {
                throw KeyedArchive.Malformed(description: "a property without a name")
            }
            return name
        }

        /// `_P` packs a property's flags: 2 optional, 8 transient, 1024 ordered; the separate
        /// keys are written only when true, and older archives carry those alone.
        private func flagBits(_ object: PropertyListValue) -> Int {
            object["_P"].flatMap(integer) ?? 0
        }

        private func isOptional(_ object: PropertyListValue) -> Bool {
            object["NSIsOptional"] == .bool(true) || flagBits(object) & 2 != 0
        }

        private func isTransient(_ object: PropertyListValue) -> Bool {
            object["NSIsTransient"] == .bool(true) || flagBits(object) & 8 != 0
        }

        /// The archive repeats the name as the renaming identifier when none was set.
        private func renaming(_ value: PropertyListValue?, name: String) throws -> String? {
            try archive.string(value).flatMap { $0 == name ? nil : $0 }
        }

        private func userInfo(_ value: PropertyListValue?) throws -> [String: String] {
            var info: [String: String] = [:]
            for (key, entry) in try archive.dictionary(value) {
                info[key] = try archive.string(entry) ?? integer(entry).map(String.init) ?? ""
            }
            return info
        }

        private func integer(_ value: PropertyListValue) -> Int? {
            switch value {
            case .integer(let number): Int(exactly: number)
            case .bool(let flag): flag ? 1 : 0
            default: nil
            }
        }

        /// An archived `NSDecimalNumber` (a Decimal attribute's default in CartKit's model): a
        /// mantissa of little-endian 16-bit words, a power of ten and a sign, as the store keeps it
        /// (a REAL: Core Data stores decimals as doubles).
        private func decimalNumber(_ value: PropertyListValue) -> Double? {
            guard case .data(let mantissa)? = value["NS.mantissa"], let exponent = value["NS.exponent"].flatMap(integer),
                let length = value["NS.length"].flatMap(integer), length >= 0, length * 2 <= mantissa.count
            else { return nil }
            var number = 0.0
            for word in (0..<length).reversed() {
                number = number * 65536 + Double(Int(mantissa[word * 2]) | Int(mantissa[word * 2 + 1]) << 8)
            }
            let negative = value["NS.negative"] == .bool(true) || value["NS.negative"] == .integer(1)
            return (negative ? -number : number) * pow(10, Double(exponent))
        }

        /// An archived default (`NSNumber`, `NSString`, `NSDate`, `NSUUID`, `NSData`) as the
        /// value a store keeps for the attribute's type.
        private func defaultValue(_ value: PropertyListValue?, type: AttributeType) throws -> SQLiteValue? {
            guard let value = try archive.resolve(value) else { return nil }
            switch value {
            case .bool(let flag): return .integer(flag ? 1 : 0)
            case .integer(let number): return [.double, .float, .decimal, .date].contains(type) ? .real(Double(number)) : .integer(number)
            case .real(let number): return [.integer16, .integer32, .integer64, .boolean].contains(type) ? .integer(Int64(number)) : .real(number)
            case .string(let text): return .text(text)
            case .data(let bytes): return .blob(bytes)
            case .dictionary:
                if case .real(let seconds)? = value["NS.time"] { return .real(seconds) }
                if case .integer(let seconds)? = value["NS.time"] { return .real(Double(seconds)) }
                if case .data(let bytes)? = value["NS.uuidbytes"] { return .blob(bytes) }
                if case .data(let bytes)? = value["NS.data"] { return .blob(bytes) }
                if let decimal = decimalNumber(value) { return .real(decimal) }
                if let text = try archive.string(value) { return .text(text) }
                // An object of the app's own class, stored through a value transformer: Tern
                // cannot make its bytes, and a store never needs them (defaults apply to new objects).
                if type == .transformable { return nil }
                throw KeyedArchive.Malformed(description: "a default value of class \(try archive.className(value)), which Tern does not read")
            default:
                throw KeyedArchive.Malformed(description: "an unreadable default value")
            }
        }

        /// Min/max and length rules from the attribute's validation predicates
        /// (`SELF >= 0`, `length <= 40`, `SELF MATCHES "…"`); other predicates are not rules Tern
        /// checks and are left out.
        private func validation(_ value: PropertyListValue?, type: AttributeType) throws -> ValidationRules {
            var rules = ValidationRules()
            for predicate in try archive.array(value) where try archive.className(predicate) == "NSComparisonPredicate" {
                guard let left = try archive.resolve(predicate["NSLeftExpression"]), let right = try archive.resolve(predicate["NSRightExpression"]),
                    let operation = try archive.resolve(predicate["NSPredicateOperator"]), let code = operation["NSOperatorType"].flatMap(integer)
                else { continue }
                let measuresLength = try archive.className(left) != "NSSelfExpression"
                let constant = try archive.resolve(right["NSConstantValue"])
                let number: Double? =
                    switch constant {
                    case .integer(let value)?: Double(value)
                    case .real(let value)?: value
                    case .dictionary? where constant?["NS.time"] != nil:
                        if case .real(let seconds)? = constant?["NS.time"] { seconds } else { nil }
                    default: nil
                    }
                // NSPredicateOperatorType: 1 ≤, 3 ≥, 6 MATCHES.
                switch (code, number) {
                case (1, let limit?): if measuresLength { rules.maximumLength = Int(limit) } else { rules.maximumValue = limit }
                case (3, let limit?): if measuresLength { rules.minimumLength = Int(limit) } else { rules.minimumValue = limit }
                case (6, _): rules.pattern = try archive.string(constant)
                default: continue
                }
            }
            return rules
        }
    }
}
