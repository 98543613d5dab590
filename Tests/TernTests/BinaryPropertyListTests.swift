import Foundation
import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore

/// Core Data's store metadata and the keyed archives of Xcode mapping models are binary property
/// lists: hostile ones must decode or be refused, never crash (found by `scripts/fuzz 360 plist`).
@Suite("Binary property lists")
struct BinaryPropertyListTests {
    /// `bplist00`, one object (`object`, at offset 8), its one-byte offset table and the trailer.
    static func plist(_ object: [UInt8]) -> [UInt8] {
        let table = 8 + object.count
        func big(_ value: Int) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        return Array("bplist00".utf8) + object + [8] + [0, 0, 0, 0, 0, 0, 1, 1] + big(1) + big(0) + big(table)
    }

    /// `bytes`, a binary property list in which `by` bytes were inserted inside the object at
    /// `at`, with its offset table and trailer moved to match.
    static func reoffset(_ bytes: [UInt8], from at: Int, by: Int) -> [UInt8] {
        var bytes = bytes
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        func read(_ position: Int, _ size: Int) -> Int { bytes[position..<position + size].reduce(0) { $0 << 8 | Int($1) } }
        func write(_ value: Int, _ position: Int, _ size: Int) {
            for index in 0..<size { bytes[position + index] = UInt8(truncatingIfNeeded: value >> ((size - 1 - index) * 8)) }
        }
        let table = read(trailer + 24, 8) + by
        for object in 0..<read(trailer + 8, 8) {
            let entry = table + object * offsetSize
            if read(entry, offsetSize) > at { write(read(entry, offsetSize) + by, entry, offsetSize) }
        }
        write(table, trailer + 24, 8)
        return bytes
    }

    @Test(
        "integers of 1 to 8 bytes decode; of 16, Core Foundation's unsigned values above Int64.max stay themselves and sign-extended ones negative, and wider ones are refused"
    )
    func integers() throws {
        #expect(try BinaryPropertyList.decode(Self.plist([0x10, 0x2A])) == .integer(42))
        #expect(try BinaryPropertyList.decode(Self.plist([0x13] + [UInt8](repeating: 0xFF, count: 8))) == .integer(-1))
        // A 128-bit integer with its high bits set made `Int64(_:)` trap.
        #expect(try BinaryPropertyList.decode(Self.plist([0x14] + [UInt8](repeating: 0xFF, count: 16))) == .integer(-1))
        #expect(try BinaryPropertyList.decode(Self.plist([0x14] + [UInt8](repeating: 0, count: 15) + [7])) == .integer(7))
        // UInt64.max as Foundation writes it: carried negative before.
        let largest = [0x14] + [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0xFF, count: 8)
        #expect(try BinaryPropertyList.decode(Self.plist(largest)) == .unsignedInteger(.max))
        #expect(Array(BinaryPropertyList.encode(.unsignedInteger(.max))[8..<25]) == largest)
        let read = try PropertyListSerialization.propertyList(from: Data(BinaryPropertyList.encode(.array([.unsignedInteger(.max)]))), format: nil)
        #expect(((read as? [Any])?.first as? NSNumber)?.uint64Value == .max)
        #expect(throws: BinaryPropertyList.Malformed.self) {
            try BinaryPropertyList.decode(Self.plist([0x14] + [UInt8](repeating: 0, count: 7) + [1] + [UInt8](repeating: 0, count: 8)))
        }
        // An unsigned value that fits is written as the integer it is.
        #expect(try BinaryPropertyList.decode(BinaryPropertyList.encode(.unsignedInteger(42))) == .integer(42))
        // A dictionary's entries decode one by one: a malformed value hides no other.
        var entries = BinaryPropertyList.encode(.dictionary(["a": .integer(1), "b": .string("kept")]))
        let marker = try #require(entries.indices.first { entries[$0] == 0x10 && entries[$0 + 1] == 1 })
        entries.replaceSubrange(marker...marker + 1, with: [0x14] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 1])
        let decoded = try BinaryPropertyList.dictionaryEntries(Self.reoffset(entries, from: marker, by: 15))
        #expect(throws: BinaryPropertyList.Malformed.self) { try decoded["a"]?.get() }
        #expect(try decoded["b"]?.get() == .string("kept"))
    }

    @Test("the fuzzer's crash: Core Data metadata with an integer marker of 16 bytes decodes or is refused")
    func fuzzerCrash() {
        let bytes = [UInt8](
            Data(
                base64Encoded:
                    "YnBsaXN0MDDYAQIDBAUGBwgJCwwNDg8SE18QHk5TU3RvcmVNb2RlbFZlcnNpb25JZGVudGlmaWVyc1tOU1N0b3JlVHlwZV8QEl9OU0F1dG9WYWN1dW1MZXZlbF8QH05TU3RvcmVNb2RlbFZlcnNpb25IYXNoZXNEaWdlc3RfEB5OU1N0b3JlTW9kZWxWZXJzaW9uQ2hlY2tzdW1LZXlfEBlOU1N0b3FlTW9kZWxWZXJzaW9uSGFzaFNBdXRvVmFjdXVtTGV2ZWxfEB9OU1N0b3JlTW9kZWxWZXJzaW9uSGFzaGVzRGlnZXN0XxAeTlNTdG9yZU1vZGVsVmVyc2lvbkNoZWNrc3VtS2V5XxAZTlNTdG9xZU1vZGVsVmVyc2lzVmVyc2lvbqEIUFZTUUxpdGVRMdEMDVRQb3N0TxAgWiT3tl9Hwzxb1UYD5NDf74LhY7UYlpKbwLZ8ciIfE0URA2IQAwgVNoKCgoKCgoKCgoKCaXPVRgPk0N/vguFjtRiWkpvAtnxyIh8TRREDYhADCBU2goKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCQldzk7beIkxh/GA4ZIRMtfj2EQU1EAMACAAZADoARgBbAH0AngC6ANoA/QD/AQABBwEJAWQBkwGWAaUByAHLAAAAAAAAAgEAAAAAAAAAFAAAAAAAAAAAAAAAAAAAAc0="
            )!)
        _ = try? BinaryPropertyList.decode(bytes)
    }

    @Test("an integer of 32 bytes or more, a truncated object and a bad trailer are refused as malformed")
    func malformed() {
        for bytes in [
            Self.plist([0x15] + [UInt8](repeating: 0xFF, count: 32)), Self.plist([0x13, 0x01]), Array(Self.plist([0x10, 0x2A]).dropLast(3)),
            Array("bplist00".utf8),
        ] {
            #expect(throws: BinaryPropertyList.Malformed.self) { try BinaryPropertyList.decode(bytes) }
        }
    }

    @Test("the metadata of every real store in the fixtures decodes")
    func fixtures() throws {
        let stores = try FileManager.default.subpathsOfDirectory(atPath: Fixtures.root.path).filter { $0.hasSuffix(".sqlite") }
        #expect(stores.count >= 5)
        for store in stores {
            let metadata = try StoreMetadata.read(storeAt: Fixtures.root.appendingPathComponent(store).path)
            #expect(!metadata.versionHashes.isEmpty, "\(store)")
        }
    }

    /// The `Z_PLIST` of every real store in the fixtures, Core Data's and other apps'.
    static func fixtureMetadata() throws -> [(store: String, bytes: [UInt8])] {
        let stores = try FileManager.default.subpathsOfDirectory(atPath: Fixtures.root.path).filter { $0.hasSuffix(".sqlite") }
        return try stores.compactMap { store in
            let reader = try ReadOnlyStore(path: Fixtures.root.appendingPathComponent(store).path)
            let connection = try reader.connect()
            defer { withExtendedLifetime(reader) {} }
            guard let bytes = try connection.scalar("SELECT Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")?.blob else { return nil }
            return (store, bytes)
        }
    }

    @Test("every real store's metadata, written again, reads back equal, in Tern's decoder and in Foundation's")
    func roundTrip() throws {
        let metadata = try Self.fixtureMetadata()
        #expect(metadata.count >= 5)
        for (store, bytes) in metadata {
            let value = try BinaryPropertyList.decode(bytes)
            let written = BinaryPropertyList.encode(value)
            #expect(try BinaryPropertyList.decode(written) == value, "\(store)")
            let original = try PropertyListSerialization.propertyList(from: Data(bytes), format: nil) as? NSDictionary
            let again = try PropertyListSerialization.propertyList(from: Data(written), format: nil) as? NSDictionary
            #expect(original != nil && original == again, "\(store)")
        }
    }

    @Test("equal values are equal bytes, however their dictionaries were built")
    func deterministic() throws {
        let keys = (0..<300).map { "key\($0)" }
        var forwards: [String: PropertyListValue] = [:]
        for key in keys { forwards[key] = .data(Array(key.utf8)) }
        var backwards: [String: PropertyListValue] = [:]
        backwards.reserveCapacity(4096)
        for key in keys.reversed() { backwards[key] = .data(Array(key.utf8)) }
        #expect(Array(forwards.keys) != Array(backwards.keys), "the two dictionaries iterate alike; the test shows nothing")
        let values: [PropertyListValue] = [
            .integer(-1), .integer(70_000), .real(2.5), .date(1), .bool(true), .null, .string("Zoë"), .uid(3), .array([.string("a")]),
        ]
        let sample = PropertyListValue.dictionary(["hashes": .dictionary(forwards), "values": .array(values)])
        let same = PropertyListValue.dictionary(["values": .array(values), "hashes": .dictionary(backwards)])
        #expect(BinaryPropertyList.encode(sample) == BinaryPropertyList.encode(same))
        #expect(try BinaryPropertyList.decode(BinaryPropertyList.encode(sample)) == sample)
    }

    @Test("at 255, 256, 65,535 and 65,536 objects the references are wide enough for Foundation's reader")
    func referenceWidths() throws {
        for objects in [255, 256, 65_535, 65_536] {
            let value = PropertyListValue.array((1..<objects).map { .integer(Int64($0)) })
            let read = try PropertyListSerialization.propertyList(from: Data(BinaryPropertyList.encode(value)), format: nil) as? [Any]
            #expect(read?.count == objects - 1, "\(objects) objects")
        }
    }

    @Test("containers shared to decode exponentially many objects (a billion laughs) are refused")
    func billionLaughs() {
        // Object k is an array referring to object k + 1 twice; the last is an empty array:
        // 2^40 objects to decode from 40 arrays.
        let depth = 40
        var objects: [[UInt8]] = (0..<depth).map { [0xA2, UInt8($0 + 1), UInt8($0 + 1)] }
        objects.append([0xA0])
        var bytes = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(bytes.count))
            bytes += object
        }
        let table = bytes.count
        func big(_ value: Int) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        bytes += offsets + [0, 0, 0, 0, 0, 0, 1, 1] + big(objects.count) + big(0) + big(table)
        #expect(throws: BinaryPropertyList.Malformed.self) { try BinaryPropertyList.decode(bytes) }
    }
}
