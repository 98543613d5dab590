import Foundation
import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore

/// Keys that are not plain names are refused before Yams reads the file: Yams sorts duplicated
/// complex keys by comparing them recursively, exponential in their depth (a fuzzer's 2.6 KB
/// mapping file took minutes). No file Tern writes or documents uses them.
@Suite("YAML with complex keys is refused before parsing, naming the line")
struct YAMLComplexKeysTests {
    @Test("every YAML file in configs/ and the fuzz seeds' shapes pass: no false alarm")
    func noFalseAlarms() throws {
        let root = URL(fileURLWithPath: Configs.path(""))
        let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)!.compactMap { $0 as? URL }.filter { $0.pathExtension == "yaml" }
        #expect(files.count > 20)
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(YAMLComplexKeys.first(in: text) == nil, "\(file.path)")
        }
        let shapes = [
            "a: { b: [1, 2], c: 'x ? y' }\n",
            "note: \"what? : no\" # a comment with ? and [a]: b\n",
            "text: |\n  ? not a key\n  [a]: neither\nnext: 1\n",
            "list:\n  - a\n  - 'it''s ? fine'\n",
            "expression: FUNCTION($source, \"a\") ? x\n",
            "url: http://host:80/path?q=1\n",
        ]
        for text in shapes { #expect(YAMLComplexKeys.first(in: text) == nil, "\(text)") }
    }

    @Test(
        "explicit and flow-collection keys are found, at their line and column",
        arguments: [
            ("? a\n: b\n", 1, 1),
            ("x: 1\ny:\n  ? [a]\n  : b\n", 3, 3),
            ("- ? a\n", 1, 3),
            ("x: { ? a : b }\n", 1, 6),
            ("[a, b]: c\n", 1, 7),
            ("x:\n  {a: 1}: c\n", 2, 9),
        ])
    func found(text: String, line: Int, column: Int) {
        let position = YAMLComplexKeys.first(in: text)
        #expect(position?.line == line && position?.column == column, "\(text): \(String(describing: position))")
    }

    @Test("the fuzzer's mapping file of nested explicit keys fails at once with the file and line")
    func nestedExplicitKeys() throws {
        let found = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpora/mapping-yaml/regression-nested-complex-keys")
        let directory = try TemporaryDirectory()
        let file = directory.path("mapping.yaml")
        try FileManager.default.copyItem(atPath: found.path, toPath: file)
        let model = ObjectModel(versionName: "A", entities: [Entity(name: "Book", attributes: [Attribute(name: "title", type: .string)])])
        let error = try #require(throws: TernError.self) { try MappingLoader.load(file, source: model, destination: model) }
        #expect(error.kind == .badInput)
        #expect(error.path == file)
        #expect(error.message.contains("line 1, column 1"), "\(error.message)")
    }
}
