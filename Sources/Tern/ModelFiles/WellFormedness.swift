import Foundation
import FoundationXML

/// A strict well-formedness pass. On Linux `XMLParser.parse()` can return true after an error, so
/// the first reported error and its position are captured by the delegate.
final class WellFormedness: NSObject, XMLParserDelegate {
    private var problem: String?

    /// "line L, column C: reason" for the first error, or nil for well-formed XML.
    static func check(_ data: Data) -> String? {
        // FoundationXML's XMLDocument dereferences a null document for empty data, and its parser
        // traps on a name that is not UTF-8 (both found by fuzzing): neither reaches them. Xcode
        // writes its models and mapping models in UTF-8.
        guard !data.isEmpty else { return "line 1, column 1: the file is empty" }
        if let offset = firstInvalidUTF8(in: data) {
            let before = data.prefix(offset)
            let line = before.count { $0 == UInt8(ascii: "\n") } + 1
            let column = offset - (before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0) + 1
            return "line \(line), column \(column): not UTF-8 (byte \(offset))"
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

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        guard problem == nil else { return }
        let code = (parseError as NSError).code
        problem = "line \(parser.lineNumber), column \(parser.columnNumber): not well-formed (XML parser error \(code))"
    }
}
