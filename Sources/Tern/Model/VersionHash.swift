import Crypto
import Foundation

/// Tern's version hashes: SHA-256 over exactly the features that change how a store is laid out.
///
/// Core Data's byte-level recipe is not published, so Tern defines its own, documented in the
/// README ("Version hashes") so anyone can recompute it. Each hash is SHA-256 of UTF-8 text lines,
/// each ending in "\n". Names are validated identifiers, so a line can never be forged by a name.
public enum VersionHash {
    /// A property's hash: name, optional, transient, read-only, the modifier, and for attributes
    /// the type code, for relationships the destination, inverse, counts, delete rule and ordering.
    public static func of(_ attribute: Attribute) -> [UInt8] {
        digest([
            "tern.property.v1",
            "kind=attribute",
            "name=\(attribute.name)",
            "optional=\(bit(attribute.isOptional))",
            "transient=\(bit(attribute.isTransient))",
            "readOnly=0",
            "type=\(attribute.type.coreDataCode)",
            "modifier=\(attribute.versionHashModifier ?? "")",
        ])
    }

    /// A relationship's hash: the property fields, then destination, inverse, counts, delete rule and ordering.
    public static func of(_ relationship: Relationship) -> [UInt8] {
        digest([
            "tern.property.v1",
            "kind=relationship",
            "name=\(relationship.name)",
            "optional=\(bit(relationship.isOptional))",
            "transient=\(bit(relationship.isTransient))",
            "readOnly=0",
            "destination=\(relationship.destination)",
            "inverse=\(relationship.inverse ?? "")",
            "minCount=\(relationship.minCount)",
            "maxCount=\(relationship.maxCount)",
            "deleteRule=\(relationship.deleteRule.rawValue)",
            "ordered=\(bit(relationship.isOrdered))",
            "modifier=\(relationship.versionHashModifier ?? "")",
        ])
    }

    /// An entity's hash: name, parent, abstract, modifier, and its own properties' hashes in
    /// name order.
    public static func of(_ entity: Entity) -> [UInt8] {
        var properties: [(String, [UInt8])] = entity.attributes.map { ($0.name, of($0)) }
        properties += entity.relationships.map { ($0.name, of($0)) }
        properties.sort { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
        return digest([
            "tern.entity.v1",
            "name=\(entity.name)",
            "parent=\(entity.parent ?? "")",
            "abstract=\(bit(entity.isAbstract))",
            "modifier=\(entity.versionHashModifier ?? "")",
        ] + properties.map { "property=\($0.0) \(hex($0.1))" })
    }

    /// Core Data's `versionChecksum` formula applied to any entity hashes: SHA-256 of the hashes
    /// concatenated in byte-wise name order, base64 (STORE-LAYOUT.md §5.2).
    public static func checksum(_ hashes: [String: [UInt8]]) -> String {
        let ordered = hashes.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        return Data(SHA256.hash(data: ordered.flatMap(\.value))).base64EncodedString()
    }

    /// Core Data's `NSStoreModelVersionHashesDigest` formula: SHA-512 of name ‖ hash pairs in
    /// byte-wise name order, base64 (STORE-LAYOUT.md §5.2).
    public static func digest(_ hashes: [String: [UInt8]]) -> String {
        let ordered = hashes.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        return Data(SHA512.hash(data: ordered.flatMap { Array($0.key.utf8) + $0.value })).base64EncodedString()
    }

    /// `bytes` as lowercase hexadecimal, two digits per byte, as hashes are written in entity hash lines.
    public static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    private static func digest(_ lines: [String]) -> [UInt8] {
        Array(SHA256.hash(data: Array(lines.map { $0 + "\n" }.joined().utf8)))
    }

    private static func bit(_ value: Bool) -> Int { value ? 1 : 0 }
}

extension ObjectModel {
    /// Entity name → version hash, for every entity (abstract ones and subentities included).
    public var versionHashes: [String: [UInt8]] {
        Dictionary(uniqueKeysWithValues: entities.map { ($0.name, VersionHash.of($0)) })
    }

    /// One hash for the whole version (the `versionChecksum` formula over `versionHashes`).
    public var versionChecksum: String {
        VersionHash.checksum(versionHashes)
    }
}
