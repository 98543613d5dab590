import Foundation

/// A value of a binary property list, keeping `NSKeyedArchiver`'s UIDs, which Foundation's
/// decoder on Linux hands back as an opaque private type.
public indirect enum PropertyListValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// An integer above `Int64.max`, which Core Foundation writes in 16 bytes.
    case unsignedInteger(UInt64)
    case real(Double)
    case date(Double)
    case data([UInt8])
    case string(String)
    case uid(Int)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    /// The value for `key` when this is a dictionary that has it; nil otherwise.
    public subscript(key: String) -> PropertyListValue? {
        if case .dictionary(let entries) = self { return entries[key] }
        return nil
    }

    /// The text when this is a string; nil otherwise.
    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}

/// Decodes the `bplist00` format. Every offset and count is checked: malformed input throws,
/// it never reads out of bounds.
public enum BinaryPropertyList {
    /// Input that is not a well-formed binary property list.
    public struct Malformed: Error, CustomStringConvertible {
        /// What is wrong with the input ("bad trailer", "truncated", …).
        public let description: String
    }

    /// The top object of `data`. Throws `Malformed` for anything that is not a well-formed `bplist00`.
    public static func decode(_ data: [UInt8]) throws -> PropertyListValue {
        var (decoder, top) = try decoder(for: data)
        return try decoder.object(top, depth: 0)
    }

    /// The entries of `data`'s top dictionary, each value decoded on its own: one that is
    /// malformed (an integer beyond 64 bits, say) does not hide the others — a store's metadata
    /// holds keys Tern reads and keys it only carries. Throws `Malformed` when the top object is
    /// not a well-formed dictionary of string keys.
    public static func dictionaryEntries(_ data: [UInt8]) throws -> [String: Result<PropertyListValue, Malformed>] {
        var (decoder, top) = try decoder(for: data)
        return try decoder.entries(of: top)
    }

    /// A decoder of `data` and its top object's number, once the trailer is checked.
    private static func decoder(for data: [UInt8]) throws -> (Decoder, Int) {
        guard data.count >= 40, data.starts(with: Array("bplist00".utf8)) else {
            throw Malformed(description: "not a binary property list")
        }
        let trailer = data.count - 32
        let offsetSize = Int(data[trailer + 6])
        let referenceSize = Int(data[trailer + 7])
        let objectCount = try integer(data, at: trailer + 8, size: 8)
        let top = try integer(data, at: trailer + 16, size: 8)
        let tableOffset = try integer(data, at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize), objectCount > 0, objectCount < data.count,
            top < objectCount, tableOffset >= 8, tableOffset + objectCount * offsetSize <= trailer
        else {
            throw Malformed(description: "bad trailer")
        }
        return (Decoder(data: data, offsetSize: offsetSize, referenceSize: referenceSize, objectCount: objectCount, tableOffset: tableOffset), top)
    }

    static func integer(_ data: [UInt8], at offset: Int, size: Int) throws -> Int {
        guard offset >= 0, size > 0, size <= 8, offset + size <= data.count else { throw Malformed(description: "truncated") }
        var value: UInt64 = 0
        for byte in data[offset..<offset + size] { value = value << 8 | UInt64(byte) }
        guard value <= UInt64(Int.max) else { throw Malformed(description: "number too large") }
        return Int(value)
    }

    private struct Decoder {
        let data: [UInt8]
        let offsetSize: Int
        let referenceSize: Int
        let objectCount: Int
        let tableOffset: Int
        /// Objects decoded so far. A tree whose containers are each referred to once decodes
        /// fewer objects than it has bytes; input that shares containers to decode more (a
        /// "billion laughs") is refused.
        var decoded = 0

        func offset(of object: Int) throws -> Int {
            guard object >= 0, object < objectCount else { throw Malformed(description: "object \(object) out of range") }
            let offset = try BinaryPropertyList.integer(data, at: tableOffset + object * offsetSize, size: offsetSize)
            guard offset >= 8, offset < tableOffset else { throw Malformed(description: "bad object offset") }
            return offset
        }

        /// A count stored in the marker's low nibble, or after it as an integer object.
        func count(at offset: Int) throws -> (count: Int, start: Int) {
            let low = Int(data[offset] & 0x0F)
            guard low == 0x0F else { return (low, offset + 1) }
            guard offset + 1 < data.count, data[offset + 1] & 0xF0 == 0x10 else { throw Malformed(description: "bad count") }
            let size = 1 << Int(data[offset + 1] & 0x0F)
            return (try integer(at: offset + 2, size: size), offset + 2 + size)
        }

        /// Bytes of an object: objects lie between the header and the offset table.
        func bytes(_ start: Int, _ count: Int) throws -> ArraySlice<UInt8> {
            guard start >= 8, count >= 0, count <= tableOffset, start <= tableOffset - count else { throw Malformed(description: "truncated object") }
            return data[start..<start + count]
        }

        /// A big-endian integer inside the objects.
        func integer(at offset: Int, size: Int) throws -> Int {
            _ = try bytes(offset, size)
            return try BinaryPropertyList.integer(data, at: offset, size: size)
        }

        /// The dictionary at `index`, its keys decoded (or the whole refused) and each value on its own.
        mutating func entries(of index: Int) throws -> [String: Result<PropertyListValue, Malformed>] {
            let offset = try offset(of: index)
            guard data[offset] >> 4 == 0xD else { throw Malformed(description: "not a dictionary") }
            let (count, start) = try count(at: offset)
            guard count <= objectCount else { throw Malformed(description: "dictionary too long") }
            var entries: [String: Result<PropertyListValue, Malformed>] = [:]
            for position in 0..<count {
                let key = try object(try integer(at: start + position * referenceSize, size: referenceSize), depth: 1)
                guard case .string(let name) = key else { throw Malformed(description: "a dictionary key is not a string") }
                do {
                    entries[name] = .success(try object(try integer(at: start + (count + position) * referenceSize, size: referenceSize), depth: 1))
                } catch let malformed as Malformed {
                    entries[name] = .failure(malformed)
                }
            }
            return entries
        }

        mutating func object(_ index: Int, depth: Int) throws -> PropertyListValue {
            guard depth < 512 else { throw Malformed(description: "nested too deeply") }
            decoded += 1
            guard decoded <= data.count else { throw Malformed(description: "containers shared to decode more objects than the input has bytes") }
            let offset = try offset(of: index)
            let marker = data[offset]
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x00: return .null
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                default: throw Malformed(description: "unknown marker \(marker)")
                }
            case 0x1:
                // 1, 2 or 4 bytes unsigned, 8 signed, or 16: Core Foundation's way of writing an
                // unsigned value above Int64.max (the high half zero), or a sign-extended one.
                let size = 1 << Int(marker & 0x0F)
                guard size <= 16 else { throw Malformed(description: "an integer of \(size) bytes") }
                let raw = try bytes(offset + 1, size)
                func number(_ bytes: ArraySlice<UInt8>) -> UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }
                guard size == 16 else {
                    let value = number(raw)
                    return .integer(size == 8 ? Int64(bitPattern: value) : Int64(value))
                }
                let (high, low) = (number(raw.prefix(8)), number(raw.suffix(8)))
                switch (high, Int64(bitPattern: low)) {
                case (0, let signed) where signed >= 0: return .integer(signed)
                case (0, _): return .unsignedInteger(low)
                case (.max, let signed) where signed < 0: return .integer(signed)
                default: throw Malformed(description: "an integer beyond 64 bits")
                }
            case 0x2, 0x3:
                let size = marker >> 4 == 0x3 ? 8 : 1 << Int(marker & 0x0F)
                let raw = try bytes(offset + 1, size)
                var value: UInt64 = 0
                for byte in raw { value = value << 8 | UInt64(byte) }
                let number: Double = size == 4 ? Double(Float(bitPattern: UInt32(value))) : (size == 8 ? Double(bitPattern: value) : 0)
                return marker >> 4 == 0x3 ? .date(number) : .real(number)
            case 0x4:
                let (count, start) = try count(at: offset)
                return .data(Array(try bytes(start, count)))
            case 0x5:
                let (count, start) = try count(at: offset)
                return .string(String(decoding: try bytes(start, count), as: UTF8.self))
            case 0x6:
                let (count, start) = try count(at: offset)
                let raw = try bytes(start, count * 2)
                let units = stride(from: raw.startIndex, to: raw.endIndex, by: 2).map { UInt16(raw[$0]) << 8 | UInt16(raw[$0 + 1]) }
                return .string(String(decoding: units, as: UTF16.self))
            case 0x8:
                return .uid(try integer(at: offset + 1, size: Int(marker & 0x0F) + 1))
            case 0xA:
                let (count, start) = try count(at: offset)
                guard count <= objectCount else { throw Malformed(description: "array too long") }
                return .array(try (0..<count).map { try object(try integer(at: start + $0 * referenceSize, size: referenceSize), depth: depth + 1) })
            case 0xD:
                let (count, start) = try count(at: offset)
                guard count <= objectCount else { throw Malformed(description: "dictionary too long") }
                var entries: [String: PropertyListValue] = [:]
                for position in 0..<count {
                    let key = try object(try integer(at: start + position * referenceSize, size: referenceSize), depth: depth + 1)
                    guard case .string(let name) = key else { throw Malformed(description: "a dictionary key is not a string") }
                    entries[name] = try object(try integer(at: start + (count + position) * referenceSize, size: referenceSize), depth: depth + 1)
                }
                return .dictionary(entries)
            default:
                throw Malformed(description: "unknown marker \(marker)")
            }
        }
    }
}
