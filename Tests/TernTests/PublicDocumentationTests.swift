import Foundation
import Testing

/// Every public declaration of the library products says what it is and what it guarantees: a
/// `///` comment right above it (above its attributes). Conformances whose meaning the protocol
/// gives (`description`, `==`, `hash(into:)`, Codable's and the literal initialisers) need none.
@Suite("Public declarations are documented")
struct PublicDocumentationTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    static let documentedByTheirProtocol = [
        "public var description", "public var debugDescription", "public static func ==", "public func hash(into",
        "public init(from decoder", "public func encode(to encoder", "public init(stringLiteral", "public init(integerLiteral",
        "public init(floatLiteral", "public init(nilLiteral", "public init(booleanLiteral",
    ]

    /// "File:line: declaration" for each public declaration without a doc comment.
    static func undocumented(in directory: URL) throws -> [String] {
        var found: [String] = []
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)!.compactMap { $0 as? URL }.filter {
            $0.pathExtension == "swift"
        }
        for file in files.sorted(by: { $0.path < $1.path }) {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            for (index, line) in lines.enumerated() {
                // An attribute on the declaration's own line (`@discardableResult public func`) is not part of it.
                let declaration = line.hasPrefix("@") ? line.split(separator: " ").drop { $0.hasPrefix("@") }.joined(separator: " ") : line
                guard declaration.hasPrefix("public ") || declaration.hasPrefix("open "),
                    !documentedByTheirProtocol.contains(where: declaration.hasPrefix)
                else { continue }
                var above = index - 1
                while above >= 0, lines[above].hasPrefix("@") { above -= 1 }
                if above < 0 || !lines[above].hasPrefix("///") {
                    found.append("\(file.lastPathComponent):\(index + 1): \(declaration.prefix(100))")
                }
            }
        }
        return found
    }

    @Test("the check finds an undocumented declaration, and takes a comment above attributes as documenting it")
    func findsUndocumented() throws {
        let directory = try TemporaryDirectory()
        try """
        /// Documented.
        public struct A {}
        public struct B {}
        /// Documented, attributes between.
        @discardableResult
        public func c() -> Int { 0 }
        @discardableResult public func d() -> Int { 0 }
        """.write(toFile: directory.path("Sample.swift"), atomically: true, encoding: .utf8)
        #expect(try Self.undocumented(in: directory.url) == ["Sample.swift:3: public struct B {}", "Sample.swift:7: public func d() -> Int { 0 }"])
    }

    @Test(
        "no public declaration of the library products lacks a doc comment",
        arguments: [
            "Tern", "TernPlanning", "TernDurability", "TernExecution", "TernSQLite", "TernLoop", "TernTesting", "TernCommands", "TernFleet", "TernBench",
            "TernExamples", "TernGenerate",
        ])
    func documented(target: String) throws {
        let missing = try Self.undocumented(in: Self.sources.appendingPathComponent(target))
        #expect(missing.isEmpty, "\(missing.count) undocumented in \(target):\n\(missing.joined(separator: "\n"))")
    }
}
