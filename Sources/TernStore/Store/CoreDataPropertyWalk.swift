import TernModel

/// The order in which Core Data meets an entity's stored properties when it pairs each
/// many-to-many with its inverse — which decides, for a reflexive many-to-many (both sides on one
/// entity), which side names the join table: the side met first.
///
/// The order is a hash order. Core Data keeps private copies of two old CoreFoundation
/// dictionaries (10.5's, which grows, and 10.4's, of fixed size) so that a model lays out the same
/// tables on every OS: the entity's keys go into a 10.5 dictionary — `_ent`, `_pk`, `_opt`, the
/// stored attributes in the order a 10.5 dictionary of all attributes holds them, then the stored
/// relationships likewise (a to-one preceded by its foreign key `_Z<NAME>`, and `_Z<n>_<NAME>`
/// where its destination has subentities) — and are copied in that dictionary's slot order into a
/// 10.4 dictionary sized for them, whose slot order is the walk. So adding one attribute can flip
/// which side names the table. Reproduces every row of `fixtures/observations/
/// reflexive-many-to-many.md` (one real entity over 80 versions); reconstructed from the public
/// decompilation of `NSSQLEntity -_generateInverseRelationshipsAndMore` and `NSSQLManyToMany
/// -_setInverseManyToMany:`, and CoreFoundation's `CFDictionary.c` bucket tables.
enum CoreDataPropertyWalk {
    /// The keys of `entity` (inherited properties included) in the order Core Data walks them,
    /// or nil for an entity too large for the 10.4 dictionary's table.
    static func order(of entity: String, in model: ObjectModel, numbers: [String: Int]) -> [String]? {
        let attributes = model.allAttributes(of: entity)
        let relationships = model.allRelationships(of: entity)
        let attributeOrder = LeopardDictionary(attributes.map(\.name)).keys
        let relationshipOrder = LeopardDictionary(relationships.map(\.name)).keys
        let stored = Set(attributes.filter { !$0.isTransient }.map(\.name))
        var keys = ["_ent", "_pk", "_opt"] + attributeOrder.filter(stored.contains)
        let byName = Dictionary(relationships.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for name in relationshipOrder {
            guard let relationship = byName[name], !relationship.isTransient else { continue }
            if !relationship.isToMany {
                keys.append("_Z" + name.uppercased())
                if !model.children(of: relationship.destination).isEmpty, let number = numbers[relationship.destination] {
                    keys.append("_Z\(number)_" + name.uppercased())
                }
            }
            keys.append(name)
        }
        let walk = LeopardDictionary(keys).keys
        return TigerDictionary(walk)?.keys
    }

    /// 10.4's string hash (`__CFStrHashCharacters`, 32 bits): the whole string up to 23
    /// characters, else its first 8 and last 16.
    static func tigerHash(_ name: String) -> UInt32 {
        let units = Array(name.utf16).map(UInt32.init)
        let count = units.count
        var result = UInt32(truncatingIfNeeded: count)
        func four(_ at: Int) {
            result = result &* 67_503_105 &+ units[at] &* 16_974_593 &+ units[at + 1] &* 66_049 &+ units[at + 2] &* 257 &+ units[at + 3]
        }
        if count > 23 {
            for start in [0, 4, count - 16, count - 12, count - 8, count - 4] { four(start) }
        } else {
            var at = 0
            while at + 4 <= count {
                four(at)
                at += 4
            }
            while at < count {
                result = result &* 257 &+ units[at]
                at += 1
            }
        }
        return result &+ (result << UInt32(count & 31))
    }

    /// 10.5's string hash (the same characters' hash, whole strings up to 96 characters) mixed as
    /// its dictionary mixes it before taking the low bits.
    static func leopardHash(_ name: String) -> UInt32 {
        let units = Array(name.utf16.prefix(96)).map(UInt32.init)
        let count = units.count
        var result = UInt32(truncatingIfNeeded: count)
        var at = 0
        while at + 4 <= count {
            result = result &* 67_503_105 &+ units[at] &* 16_974_593 &+ units[at + 1] &* 66_049 &+ units[at + 2] &* 257 &+ units[at + 3]
            at += 4
        }
        while at < count {
            result = result &* 257 &+ units[at]
            at += 1
        }
        let h = result &+ (result << UInt32(count & 31))
        let a = (1_264_676_453 &- h) ^ ((h &- 1) << 8)
        let b = (2 &- h &- a) ^ (a >> 13)
        let c = (h &- 1 &- a &- b) ^ (b >> 12)
        let d = (a &- b &- c) ^ (c << 16)
        let e = (b &- c &- d) ^ (d >> 5)
        let f = (c &- d &- e) ^ (e >> 3)
        let g = (d &- e &- f) ^ (f << 10)
        return (e &- f &- g) ^ (g >> 15)
    }

    /// 10.5's dictionary: buckets a power of two (4, 8, 16, …), linear probing, grown when full
    /// by inserting the old keys again in their slot order.
    struct LeopardDictionary {
        private var slots: [String?] = []
        private var capacity = 3
        private var used = 0

        init(_ keys: [String]) {
            for key in keys { insert(key) }
        }

        var keys: [String] { slots.compactMap { $0 } }

        private static func bitLength(_ value: Int) -> Int { value == 0 ? 0 : Int.bitWidth - value.leadingZeroBitCount }

        private func slot(of key: String) -> Int {
            var at = Int(leopardHash(key) & UInt32(slots.count - 1))
            while let held = slots[at], held != key { at = (at + 1) % slots.count }
            return at
        }

        private mutating func insert(_ key: String) {
            if slots.isEmpty || used == capacity {
                let old = slots.compactMap { $0 }
                capacity = 3 << Self.bitLength(used / 3)
                slots = Array(repeating: nil, count: 4 << Self.bitLength((capacity - 1) / 3))
                for held in old { slots[slot(of: held)] = held }
            }
            let at = slot(of: key)
            if slots[at] == nil {
                slots[at] = key
                used += 1
            }
        }
    }

    /// 10.4's dictionary, made for a known count and never grown: the prime bucket count of
    /// `CFDictionary.c`'s table for the first capacity that holds the keys, linear probing.
    struct TigerDictionary {
        static let capacities = [4, 8, 17, 29, 47, 76, 123, 199, 322, 521, 843, 1364, 2207, 3571]
        static let buckets = [5, 11, 23, 41, 67, 113, 199, 317, 521, 839, 1361, 2207, 3571, 5779]
        private var slots: [String?]

        init?(_ keys: [String]) {
            guard let size = Self.capacities.firstIndex(where: { $0 >= keys.count }).map({ Self.buckets[$0] }) else { return nil }
            slots = Array(repeating: nil, count: size)
            for key in keys {
                var at = Int(tigerHash(key) % UInt32(size))
                while let held = slots[at], held != key { at = (at + 1) % size }
                slots[at] = key
            }
        }

        var keys: [String] { slots.compactMap { $0 } }
    }
}
