import Foundation

/// Turns an `NSKeyedArchiver` archive of an `NSExpression` (how Xcode stores value expressions
/// in `.xcmappingmodel` files) back into expression text Tern parses.
///
/// Handles the classes value expressions are made of: constants, variables, key paths, function
/// expressions (`FUNCTION($manager, …)` and built-in functions) and aggregates. Anything else is
/// reported by class name rather than guessed.
public enum ArchivedExpression {
    /// An archive that is unreadable, or holds an expression class Tern does not translate.
    public struct Unsupported: Error, CustomStringConvertible {
        /// What could not be read, naming the archived class when there is one.
        public let description: String

        package init(description: String) { self.description = description }
    }

    /// Public so the keyed-archive fuzzer reaches it: any bytes give expression text or an error.
    public static func text(from bytes: [UInt8]) throws -> String {
        let archive: KeyedArchive
        do {
            archive = try KeyedArchive(bytes)
        } catch {
            throw Unsupported(description: "the value expression is not a readable archive: \(error)")
        }
        do {
            return try Reader(archive: archive).expression(archive.root, depth: 0)
        } catch let malformed as KeyedArchive.Malformed {
            throw Unsupported(description: malformed.description)
        }
    }

    /// The text of an expression archived inside another archive (a compiled model's derived
    /// attribute), at object `uid`.
    package static func text(in archive: KeyedArchive, object uid: Int) throws -> String {
        do {
            return try Reader(archive: archive).expression(uid, depth: 0)
        } catch let malformed as KeyedArchive.Malformed {
            throw Unsupported(description: malformed.description)
        }
    }

    private struct Reader {
        let archive: KeyedArchive

        func object(_ uid: Int) throws -> PropertyListValue { try archive.object(uid) }
        func resolve(_ value: PropertyListValue?) throws -> PropertyListValue? { try archive.resolve(value) }
        func className(_ object: PropertyListValue) throws -> String { try archive.className(object) }

        func expression(_ uid: Int, depth: Int) throws -> String {
            guard depth < 64 else { throw Unsupported(description: "the value expression is nested too deeply") }
            let node = try object(uid)
            switch try className(node) {
            case "NSConstantValueExpression":
                return try constant(try resolve(node["NSConstantValue"]))
            case "NSVariableExpression":
                guard let name = try resolve(node["NSVariable"])?.string else { throw Unsupported(description: "a variable without a name") }
                return "$" + name
            case "NSSelfExpression":
                return "SELF"
            case "NSKeyPathSpecifierExpression":
                guard let path = try resolve(node["NSKeyPath"])?.string else { throw Unsupported(description: "a key path without keys") }
                return path.split(separator: ".").map { ExpressionText.reservedWords.contains($0.uppercased()) ? "#\($0)" : String($0) }.joined(separator: ".")
            case "NSKeyPathExpression", "NSFunctionExpression":
                return try function(node, depth: depth)
            case "NSAggregateExpression":
                let items = try list(node["NSCollection"], depth: depth)
                return "{" + items.joined(separator: ", ") + "}"
            case let name:
                throw Unsupported(description: "\(name) value expressions cannot be imported")
            }
        }

        func function(_ node: PropertyListValue, depth: Int) throws -> String {
            guard let selector = try resolve(node["NSSelectorName"])?.string else {
                throw Unsupported(description: "a function expression without a selector")
            }
            let arguments = try list(node["NSArguments"], depth: depth)
            guard case .uid(let operandUID)? = node["NSOperand"] else {
                return "\(selector)(\(arguments.joined(separator: ", ")))"
            }
            let operandNode = try object(operandUID)
            // A key path on the evaluated object itself: just the path (`pages`).
            if ["valueForKey:", "valueForKeyPath:"].contains(selector), arguments.count == 1, try className(operandNode) == "NSSelfExpression" {
                return arguments[0]
            }
            if selector == "valueForKeyPath:", arguments.count == 1 {
                return try expression(operandUID, depth: depth + 1) + "." + arguments[0]
            }
            if try className(operandNode) == "NSVariableExpression" || selector.contains("Instances") {
                let receiver = try expression(operandUID, depth: depth + 1)
                return "FUNCTION(\(([receiver, literal(selector)] + arguments).joined(separator: ", ")))"
            }
            // Built-in functions (add:to:, uppercase:, …) have a utility class as their operand.
            return "\(selector)(\(arguments.joined(separator: ", ")))"
        }

        func list(_ value: PropertyListValue?, depth: Int) throws -> [String] {
            guard let container = try resolve(value) else { return [] }
            guard case .array(let items)? = container["NS.objects"] else {
                throw Unsupported(description: "expected an array of expressions")
            }
            return try items.map { item in
                guard case .uid(let uid) = item else { throw Unsupported(description: "expected an archived expression") }
                return try expression(uid, depth: depth + 1)
            }
        }

        func constant(_ value: PropertyListValue?) throws -> String {
            switch value {
            case nil, .null?: return "nil"
            case .bool(let flag)?: return flag ? "YES" : "NO"
            case .integer(let number)?: return String(number)
            case .real(let number)?: return "\(number)"
            case .string(let text)?: return literal(text)
            case .dictionary?:
                if let text = try resolve(value?["NS.string"])?.string { return literal(text) }
                if case .string(let name)? = try resolve(value?["$class"])?["$classname"] {
                    throw Unsupported(description: "constant values of class \(name) cannot be imported")
                }
                throw Unsupported(description: "an unreadable constant value")
            default:
                throw Unsupported(description: "an unreadable constant value")
            }
        }

        func literal(_ text: String) -> String {
            ExpressionText.literal(text)
        }
    }
}
