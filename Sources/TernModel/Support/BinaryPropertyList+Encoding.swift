/// Writing `bplist00`, in bytes that depend only on the value.
///
/// Foundation's writer lays a dictionary out in its hash order, which Swift seeds per process: two
/// runs of one migration wrote `Z_METADATA` differently, so no two stores were ever the same file.
/// This writer sorts every dictionary's keys and shares no objects, so equal values are equal bytes;
/// readers, Core Data's among them, do not depend on the order of keys.
extension BinaryPropertyList {
    /// The binary property list of `value`.
    public static func encode(_ value: PropertyListValue) -> [UInt8] {
        // Objects are numbered breadth first: a container's children are numbered before it is written.
        var nodes: [PropertyListValue] = [value]
        var children: [[Int]] = []
        var next = 0
        while next < nodes.count {
            let items = nodes[next].writtenChildren
            children.append(Array(nodes.count..<nodes.count + items.count))
            nodes += items
            next += 1
        }
        // Sized by the count, not the largest number: Core Foundation's reader refuses a list
        // whose count its references could not write (256 objects take 2-byte references).
        let referenceSize = byteCount(for: UInt64(nodes.count))

        var bytes = Array("bplist00".utf8)
        var offsets: [UInt64] = []
        offsets.reserveCapacity(nodes.count)
        for (index, node) in nodes.enumerated() {
            offsets.append(UInt64(bytes.count))
            bytes += node.writtenObject(children: children[index], referenceSize: referenceSize)
        }
        let tableOffset = UInt64(bytes.count)
        let offsetSize = byteCount(for: tableOffset)
        for offset in offsets {
            bytes += bigEndian(offset, size: offsetSize)
        }
        bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        bytes += bigEndian(UInt64(nodes.count), size: 8) + bigEndian(0, size: 8) + bigEndian(tableOffset, size: 8)
        return bytes
    }

    /// A type marker with its count: in the low nibble when it fits, else as an integer object after it.
    fileprivate static func marker(_ type: UInt8, count: Int) -> [UInt8] {
        count < 15 ? [type | UInt8(count)] : [type | 0x0F] + integer(Int64(count))
    }

    /// An integer object; negative ones take eight bytes, as Core Foundation writes them.
    fileprivate static func integer(_ value: Int64) -> [UInt8] {
        let size = value < 0 ? 8 : byteCount(for: UInt64(value))
        return [0x10 | UInt8(size.trailingZeroBitCount)] + bigEndian(UInt64(bitPattern: value), size: size)
    }

    /// The fewest of 1, 2, 4 or 8 bytes that hold `value`.
    fileprivate static func byteCount(for value: UInt64) -> Int {
        [1, 2, 4].first { value < UInt64(1) << UInt64($0 * 8) } ?? 8
    }

    fileprivate static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> UInt64($0 * 8)) }
    }
}

extension PropertyListValue {
    /// The objects this one refers to, in the order written: a dictionary's sorted keys, then their values.
    fileprivate var writtenChildren: [PropertyListValue] {
        switch self {
        case .array(let items): items
        case .dictionary(let entries): entries.keys.sorted().map(PropertyListValue.string) + entries.sorted { $0.key < $1.key }.map(\.value)
        default: []
        }
    }

    fileprivate func writtenObject(children: [Int], referenceSize: Int) -> [UInt8] {
        let references = children.flatMap { BinaryPropertyList.bigEndian(UInt64($0), size: referenceSize) }
        switch self {
        case .null: return [0x00]
        case .bool(let value): return [value ? 0x09 : 0x08]
        case .integer(let value): return BinaryPropertyList.integer(value)
        case .unsignedInteger(let value) where value <= UInt64(Int64.max): return BinaryPropertyList.integer(Int64(value))
        case .unsignedInteger(let value): return [0x14] + BinaryPropertyList.bigEndian(0, size: 8) + BinaryPropertyList.bigEndian(value, size: 8)
        case .real(let value): return [0x23] + BinaryPropertyList.bigEndian(value.bitPattern, size: 8)
        case .date(let value): return [0x33] + BinaryPropertyList.bigEndian(value.bitPattern, size: 8)
        case .data(let bytes): return BinaryPropertyList.marker(0x40, count: bytes.count) + bytes
        case .string(let text):
            if text.utf8.allSatisfy({ $0 < 0x80 }) {
                return BinaryPropertyList.marker(0x50, count: text.utf8.count) + Array(text.utf8)
            }
            let units = Array(text.utf16)
            return BinaryPropertyList.marker(0x60, count: units.count) + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        case .uid(let value):
            let size = BinaryPropertyList.byteCount(for: UInt64(max(value, 0)))
            return [0x80 | UInt8(size - 1)] + BinaryPropertyList.bigEndian(UInt64(max(value, 0)), size: size)
        case .array(let items): return BinaryPropertyList.marker(0xA0, count: items.count) + references
        case .dictionary(let entries): return BinaryPropertyList.marker(0xD0, count: entries.count) + references
        }
    }
}
