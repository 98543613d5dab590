/// An `NSKeyedArchiver` archive read from a binary property list: its objects, references
/// between them (UIDs), class names and Foundation's collections. Every reference is checked, so
/// a malformed or hostile archive throws rather than reading out of bounds; the readers built on
/// it (value expressions, compiled models) bound their own depth.
package struct KeyedArchive {
    /// What is wrong with the archive, in words.
    package struct Malformed: Error, CustomStringConvertible {
        package let description: String

        package init(description: String) { self.description = description }
    }

    let objects: [PropertyListValue]
    /// The UID of the archive's root object (`$top.root`).
    package let root: Int

    package init(_ bytes: [UInt8]) throws {
        let archive: PropertyListValue
        do {
            archive = try BinaryPropertyList.decode(bytes)
        } catch {
            throw Malformed(description: "not a readable binary property list: \(error)")
        }
        guard case .array(let objects)? = archive["$objects"], case .uid(let root)? = archive["$top"]?["root"] else {
            throw Malformed(description: "not an NSKeyedArchiver archive (no $objects and $top.root)")
        }
        self.objects = objects
        self.root = root
    }

    /// The object a UID names.
    package func object(_ uid: Int) throws -> PropertyListValue {
        guard uid >= 0, uid < objects.count else { throw Malformed(description: "archive reference \(uid) out of range") }
        return objects[uid]
    }

    /// `value` with a reference followed; nil and `$null` stay nil.
    package func resolve(_ value: PropertyListValue?) throws -> PropertyListValue? {
        guard case .uid(let uid)? = value else { return value }
        let resolved = try object(uid)
        if case .string("$null") = resolved { return nil }
        return resolved
    }

    /// The class an archived object was written as.
    package func className(_ object: PropertyListValue) throws -> String {
        guard let classValue = try resolve(object["$class"]), let name = classValue["$classname"]?.string else {
            throw Malformed(description: "an archived object has no class")
        }
        return name
    }

    /// The text of an `NSString` (a plain string, or an archived `NS.string`/`NS.bytes` object).
    package func string(_ value: PropertyListValue?) throws -> String? {
        switch try resolve(value) {
        case .string(let text)?: return text
        case let object? where object["NS.string"] != nil: return try string(object["NS.string"])
        case let object?:
            if case .data(let bytes)? = object["NS.bytes"] { return String(decoding: bytes, as: UTF8.self) }
            return nil
        case nil: return nil
        }
    }

    /// The members of an archived `NSArray` or `NSSet` (`NS.objects`), each resolved.
    package func array(_ value: PropertyListValue?) throws -> [PropertyListValue] {
        guard let container = try resolve(value) else { return [] }
        guard case .array(let items)? = container["NS.objects"] else {
            throw Malformed(description: "expected an archived array or set")
        }
        return try items.compactMap { try resolve($0) }
    }

    /// The entries of an archived `NSDictionary` with string keys: `NS.keys` and `NS.objects`, or
    /// Core Data's `NSKnownKeysDictionary1` (keys in its `searchMapping`, empty slots skipped).
    package func dictionary(_ value: PropertyListValue?) throws -> [(key: String, value: PropertyListValue)] {
        guard let container = try resolve(value) else { return [] }
        var keys: [PropertyListValue], values: [PropertyListValue]
        if case .array(let keyList)? = container["NS.keys"], case .array(let valueList)? = container["NS.objects"] {
            (keys, values) = (keyList, valueList)
        } else if case .array(let keyList)? = try resolve(try resolve(container["searchMapping"])?["keys"])?["NS.objects"],
            case .array(let valueList)? = try resolve(container["values"])?["NS.objects"]
        {
            let empty = try string(container["emptyToken"])
            let filled = try zip(keyList, valueList).filter { try empty == nil || string($0.1) != empty }
            (keys, values) = (filled.map(\.0), filled.map(\.1))
        } else {
            throw Malformed(description: "expected an archived dictionary")
        }
        guard keys.count == values.count else { throw Malformed(description: "an archived dictionary with \(keys.count) keys and \(values.count) values") }
        return try zip(keys, values).map { key, value in
            guard let name = try string(key) else { throw Malformed(description: "a dictionary key that is not a string") }
            guard let resolved = try resolve(value) else { return (name, .null) }
            return (name, resolved)
        }
    }
}
