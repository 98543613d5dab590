import TernDigest
import Foundation

/// Core Data's version hashes, computed as Core Data computes them, so a store Tern writes is one
/// the app's Core Data opens, and a store Core Data wrote is recognised by its hashes.
///
/// The byte layout was established from the stores and compiled models in `shared/fixtures`
/// (every `NSStoreModelVersionHashes` and `VersionInfo.plist` hash there is reproduced; see
/// `CoreDataCorpusTests` and the article "Version hashes and the store layout"). Every digest is SHA-256; strings are
/// their UTF-8 bytes with no terminator or length; integers are 32-bit little-endian.
///
/// - property: `name ‖ isOptional ‖ isTransient` (one byte each) `‖ versionHashModifier`;
/// - attribute: `SHA256(property) ‖ attributeType ‖ 0x01 if its value is kept in history after deletion`;
/// - derived attribute: its derivation's `predicateFormat` alone (`count:(pages)`);
/// - relationship: `SHA256(property) ‖ destination name ‖ inverse name ‖ maxCount ‖ minCount ‖ 0x01 0x00 if ordered`;
/// - entity: `name ‖ isAbstract ‖ the superentity's hash ‖` the hashes of every stored property,
///   inherited ones included, in byte-wise name order `‖` each uniqueness constraint's
///   properties joined by "." `‖ versionHashModifier`.
///
/// Not hashed: the delete rule, class names, user info, renaming identifiers, defaults,
/// validation rules, indexes, transient properties, and a relationship's destination beyond its
/// name — so none of them makes Core Data migrate a store.
public enum VersionHash {
    /// An attribute's version hash.
    public static func of(_ attribute: Attribute) -> [UInt8] {
        // A derived attribute's hash is its expression's text alone: Core Data's
        // `-[NSDerivedAttributeDescription _versionHash:inStyle:]` hashes the attribute into a
        // buffer it never uses (CoreDataPlus's `pagesCount`: SHA-256 of "count:(pages)").
        if let derivation = attribute.derivation {
            return sha256(Array(derivation.predicateFormat.utf8))
        }
        var bytes = property(
            attribute.name, isOptional: attribute.isOptional, isTransient: attribute.isTransient,
            modifier: attribute.versionHashModifier)
        bytes += littleEndian(UInt32(attribute.type.coreDataCode))
        if attribute.preservesValueInHistoryOnDeletion { bytes.append(1) }
        return sha256(bytes)
    }

    /// A relationship's version hash.
    public static func of(_ relationship: Relationship) -> [UInt8] {
        var bytes = property(
            relationship.name, isOptional: relationship.isOptional, isTransient: relationship.isTransient,
            modifier: relationship.versionHashModifier)
        bytes += Array(relationship.destination.utf8) + Array((relationship.inverse ?? relationship.unreciprocatedInverse ?? "").utf8)
        bytes += littleEndian(UInt32(truncatingIfNeeded: relationship.maxCount))
        bytes += littleEndian(UInt32(truncatingIfNeeded: relationship.minCount))
        if relationship.isOrdered { bytes += [1, 0] }
        return sha256(bytes)
    }

    /// The version hash of `entity` in `model`, whose superentity's hash and inherited
    /// properties enter it.
    public static func of(_ entity: Entity, in model: ObjectModel) -> [UInt8] {
        var hashes: [String: [UInt8]] = [:]
        return of(entity, in: model, memo: &hashes)
    }

    private static func of(_ entity: Entity, in model: ObjectModel, memo: inout [String: [UInt8]]) -> [UInt8] {
        // From the root down, each entity's hash feeding its subentity's; `lineage` stops at a
        // cycle, so a malformed model cannot recurse here.
        let lineage = model.lineage(of: entity.name)
        var parentHash: [UInt8]?
        for index in lineage.indices.reversed() {
            let current = lineage[index]
            if let known = memo[current.name] { parentHash = known; continue }
            var bytes = Array(current.name.utf8) + [current.isAbstract ? 1 : 0]
            bytes += parentHash ?? []
            bytes += storedProperties(of: lineage[index...]).flatMap(\.hash)
            for constraint in current.uniquenessConstraints {
                bytes += Array(constraint.joined(separator: ".").utf8)
            }
            bytes += Array((current.versionHashModifier ?? "").utf8)
            let hash = sha256(bytes)
            memo[current.name] = hash
            parentHash = hash
        }
        return parentHash ?? []
    }

    /// The stored properties of an entity and its ancestors (`lineage`, the entity first), with
    /// their hashes, in byte-wise name order.
    private static func storedProperties(of lineage: ArraySlice<Entity>) -> [(name: String, hash: [UInt8])] {
        var properties: [(name: String, hash: [UInt8])] = []
        var seen: Set<String> = []
        for owner in lineage {
            for attribute in owner.attributes where !attribute.isTransient && seen.insert(attribute.name).inserted {
                properties.append((attribute.name, of(attribute)))
            }
            for relationship in owner.relationships where !relationship.isTransient && seen.insert(relationship.name).inserted {
                properties.append((relationship.name, of(relationship)))
            }
        }
        return properties.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// Core Data's `versionChecksum` (`NSStoreModelVersionChecksumKey`): SHA-256 of the entity
    /// hashes concatenated in byte-wise name order, base64 ("The metadata's digests" in
    /// `Sources/Tern/Tern.docc/VersionHashesAndStoreLayout.md`).
    public static func checksum(_ hashes: [String: [UInt8]]) -> String {
        let ordered = hashes.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        return Data(SHA256.hash(data: ordered.flatMap(\.value))).base64EncodedString()
    }

    /// Core Data's `NSStoreModelVersionHashesDigest`: SHA-512 of name ‖ hash pairs in byte-wise
    /// name order, base64 ("The metadata's digests" in
    /// `Sources/Tern/Tern.docc/VersionHashesAndStoreLayout.md`).
    public static func digest(_ hashes: [String: [UInt8]]) -> String {
        let ordered = hashes.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        return Data(SHA512.hash(data: ordered.flatMap { Array($0.key.utf8) + $0.value })).base64EncodedString()
    }

    /// `bytes` as lowercase hexadecimal, two digits per byte, as `tern inspect` shows hashes.
    public static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// The property part every attribute and relationship hash starts from.
    private static func property(_ name: String, isOptional: Bool, isTransient: Bool, modifier: String?) -> [UInt8] {
        sha256(Array(name.utf8) + [isOptional ? 1 : 0, isTransient ? 1 : 0] + Array((modifier ?? "").utf8))
    }

    private static func littleEndian(_ value: UInt32) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian, Array.init)
    }

    private static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: bytes))
    }
}

extension ObjectModel {
    /// Entity name → Core Data's version hash, for every entity (abstract ones and subentities
    /// included): `NSStoreModelVersionHashes` of a store this version writes.
    public var versionHashes: [String: [UInt8]] {
        var hashes: [String: [UInt8]] = [:]
        for entity in entities { hashes[entity.name] = VersionHash.of(entity, in: self) }
        return hashes
    }

    /// Whether this version's hashes are `stored` (entity → hex, as a store's metadata holds
    /// them), hashing entity by entity and stopping at the first that differs: recognising a
    /// store among a long history costs an entity per version, not every property of every one.
    public func hasVersionHashes(_ stored: [String: String]) -> Bool {
        guard entities.count == stored.count else { return false }
        for entity in entities {
            guard let hash = stored[entity.name], hash == VersionHash.hex(VersionHash.of(entity, in: self)) else { return false }
        }
        return true
    }

    /// Core Data's `versionChecksum` of the version.
    public var versionChecksum: String {
        VersionHash.checksum(versionHashes)
    }
}
