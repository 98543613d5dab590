import Foundation
import FoundationXML

/// A strict well-formedness pass. On Linux `XMLParser.parse()` can return true after an error, so
/// the first reported error and its position are captured by the delegate.
final class WellFormedness: NSObject, XMLParserDelegate {
    private var problem: String?

    /// "line L, column C: reason" for the first error, or nil for well-formed XML.
    static func check(_ data: Data) -> String? {
        // FoundationXML's XMLDocument dereferences a null document for empty data (found by fuzzing).
        guard !data.isEmpty else { return "line 1, column 1: the file is empty" }
        let parser = XMLParser(data: data)
        let delegate = WellFormedness()
        parser.delegate = delegate
        let finished = parser.parse()
        if delegate.problem == nil, !finished || parser.parserError != nil {
            delegate.problem = "line \(parser.lineNumber), column \(parser.columnNumber): not well-formed"
        }
        return delegate.problem
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        guard problem == nil else { return }
        let code = (parseError as NSError).code
        problem = "line \(parser.lineNumber), column \(parser.columnNumber): not well-formed (XML parser error \(code))"
    }
}
