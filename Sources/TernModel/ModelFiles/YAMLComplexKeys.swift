/// Finds mapping keys that are not scalars (`? key` or `[a, b]: value`) before Yams reads a
/// file. Tern's formats never use them, and Yams sorts duplicated complex keys by comparing them
/// recursively, twice per level: a 2.6 KB file of nested duplicates took minutes (found by
/// fuzzing). Refusing them up front bounds the parse and names the line at fault.
package enum YAMLComplexKeys {
    /// The line and column (1-based) of the first non-scalar mapping key, or nil.
    package static func first(in text: String) -> (line: Int, column: Int)? {
        var scanner = Scanner()
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if let column = scanner.scan(Array(line.utf8)) { return (index + 1, column + 1) }
        }
        return nil
    }

    /// A line-by-line tokenizer that knows just enough YAML to tell indicators from scalar text:
    /// quoted scalars (which may span lines), block scalars, comments and flow punctuation.
    private struct Scanner {
        private enum Quote { case single, double }
        private var quote: Quote?
        /// Inside a block scalar (`|`, `>`): lines indented deeper than this are its text.
        private var blockIndent: Int?

        mutating func scan(_ line: [UInt8]) -> Int? {
            let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t")
            let indent = line.prefix { $0 == space || $0 == tab }.count
            if let block = blockIndent {
                if indent > block || line.allSatisfy({ $0 == space || $0 == tab || $0 == UInt8(ascii: "\r") }) { return nil }
                blockIndent = nil
            }
            var tokenStart = quote == nil
            var closedFlow = false  // the last token was `]` or `}`
            var index = quote == nil ? indent : 0
            func isBlank(_ at: Int) -> Bool { at >= line.count || [space, tab, UInt8(ascii: "\r")].contains(line[at]) }
            while index < line.count {
                let byte = line[index]
                if let open = quote {
                    if open == .double, byte == UInt8(ascii: "\\") { index += 2; continue }
                    if open == .double, byte == UInt8(ascii: "\"") { quote = nil }
                    if open == .single, byte == UInt8(ascii: "'") {
                        if index + 1 < line.count, line[index + 1] == UInt8(ascii: "'") { index += 2; continue }
                        quote = nil
                    }
                    index += 1
                    continue
                }
                switch byte {
                case space, tab, UInt8(ascii: "\r"):
                    break
                case UInt8(ascii: "#") where index == 0 || isBlank(index - 1):
                    return nil
                case UInt8(ascii: "\"") where tokenStart: quote = .double; tokenStart = false; closedFlow = false
                case UInt8(ascii: "'") where tokenStart: quote = .single; tokenStart = false; closedFlow = false
                case UInt8(ascii: "?") where tokenStart && isBlank(index + 1):
                    return index
                case UInt8(ascii: ":") where isBlank(index + 1) || [UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}")].contains(line[index + 1]):
                    if closedFlow { return index }
                    tokenStart = true; closedFlow = false
                case UInt8(ascii: "-") where tokenStart && isBlank(index + 1):
                    closedFlow = false
                case UInt8(ascii: "|") where tokenStart, UInt8(ascii: ">") where tokenStart:
                    blockIndent = indent
                    return nil
                case UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: ","):
                    tokenStart = true; closedFlow = false
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    tokenStart = false; closedFlow = true
                default:
                    tokenStart = false; closedFlow = false
                }
                index += 1
            }
            return nil
        }
    }
}
