import Foundation
import FoundationXML

/// A strict well-formedness pass. On Linux `XMLParser.parse()` can return true after an error, so
/// the first reported error and its position are captured by the delegate.
package final class WellFormedness: NSObject, XMLParserDelegate {
    private var problem: String?

    /// "line L, column C: reason" for the first error, or nil for well-formed XML.
    package static func check(_ data: Data) -> String? {
        // FoundationXML on Linux crashes on some inputs (all found by fuzzing): XMLDocument
        // dereferences a null document for empty data or a lone NUL, its parser traps on a name
        // that is not UTF-8 and reads a null pointer for a processing instruction without data.
        // None of them reaches it. Xcode writes its models and mapping models in UTF-8, with no
        // NUL (XML allows none) and no processing instruction but the leading declaration.
        guard !data.isEmpty else { return "line 1, column 1: the file is empty" }
        if let offset = firstInvalidUTF8(in: data) { return position(of: offset, in: data) + ": not UTF-8 (byte \(offset))" }
        if let offset = data.firstIndex(of: 0) { return position(of: offset, in: data) + ": a NUL byte, which XML does not allow" }
        if let offset = processingInstruction(in: data) {
            return position(of: offset, in: data) + ": a processing instruction, which Xcode never writes (only <?xml …?> may start the file)"
        }
        let parser = XMLParser(data: data)
        let delegate = WellFormedness()
        parser.delegate = delegate
        let finished = parser.parse()
        if delegate.problem == nil, !finished || parser.parserError != nil {
            delegate.problem = "line \(parser.lineNumber), column \(parser.columnNumber): not well-formed"
        }
        return delegate.problem
    }

    /// "line L, column C" of the byte at `offset` (columns counted in bytes).
    private static func position(of offset: Int, in data: Data) -> String {
        let before = data.prefix(offset)
        let line = before.count { $0 == UInt8(ascii: "\n") } + 1
        let column = offset - (before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0) + 1
        return "line \(line), column \(column)"
    }

    /// The offset of the first `<?` that is not the XML declaration at the start (after a
    /// byte-order mark), or nil.
    private static func processingInstruction(in data: Data) -> Int? {
        let bytes = [UInt8](data)
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "<"), bytes[index + 1] == UInt8(ascii: "?") {
                let declaration =
                    index == start && bytes[index...].starts(with: Array("<?xml".utf8))
                    && bytes.count > index + 5 && [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")].contains(bytes[index + 5])
                if !declaration { return index }
            }
            index += 1
        }
        return nil
    }

    /// The offset of the first byte that does not belong to valid UTF-8, or nil.
    private static func firstInvalidUTF8(in data: Data) -> Int? {
        var decoder = UTF8()
        var bytes = data.makeIterator()
        var consumed = 0
        while true {
            switch decoder.decode(&bytes) {
            case .scalarValue(let scalar): consumed += UTF8.width(scalar)
            case .emptyInput: return nil
            case .error: return consumed
            }
        }
    }

    package func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        guard problem == nil else { return }
        let code = (parseError as NSError).code
        problem = "line \(parser.lineNumber), column \(parser.columnNumber): not well-formed (XML parser error \(code))"
    }
}
