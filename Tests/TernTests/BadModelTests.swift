import Foundation
import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore

@Suite("Bad models give clear errors naming the file, entity and property")
struct BadModelTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Writes an Xcode model version with `body` inside <model> and loads it.
    private func loadXcode(_ body: String) throws -> VersionedModel {
        let bundle = directory.url.appendingPathComponent("Bad.xcdatamodel")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try Data(
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">\(body)</model>
            """.utf8
        ).write(to: bundle.appendingPathComponent("contents"))
        return try ModelLoader.load(bundle.path)
    }

    private func loadYAML(_ text: String) throws -> VersionedModel {
        let file = directory.url.appendingPathComponent("bad.yaml")
        try Data(text.utf8).write(to: file)
        return try ModelLoader.load(file.path)
    }

    private func failure(_ body: () throws -> VersionedModel) throws -> TernError {
        try #require(throws: TernError.self) { _ = try body() }
    }

    @Test("malformed XML")
    func malformedXML() throws {
        let error = try failure { try loadXcode("<entity name=\"Book\"><attribute name=\"x\" ") }
        #expect(error.kind == .badInput)
        #expect(error.path?.hasSuffix("Bad.xcdatamodel/contents") == true)
        #expect(error.message.contains("malformed XML"))
    }

    @Test("an empty Xcode model or mapping file is malformed XML, not a crash (FoundationXML dereferences null for empty data; found by fuzzing)")
    func emptyXML() throws {
        let bundle = directory.url.appendingPathComponent("Empty.xcdatamodel")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try Data().write(to: bundle.appendingPathComponent("contents"))
        let error = try failure { try ModelLoader.load(bundle.path) }
        #expect(error.kind == .badInput && error.message.contains("the file is empty"), "\(error)")

        let mapping = directory.url.appendingPathComponent("Empty.xcmappingmodel")
        try FileManager.default.createDirectory(at: mapping, withIntermediateDirectories: true)
        try Data().write(to: mapping.appendingPathComponent("xcmapping.xml"))
        let model = ObjectModel(versionName: "m", entities: [Entity(name: "A", attributes: [Attribute(name: "x", type: .string)])])
        #expect(throws: TernError.self) { try MappingLoader.load(mapping.path, source: model, destination: model) }
    }

    @Test("bytes that are not UTF-8 in a name are malformed XML naming line and column, not a trap in FoundationXML's parser (found by fuzzing)")
    func notUTF8() throws {
        let bundle = directory.url.appendingPathComponent("Bytes.xcdatamodel")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<model type=\"com.apple.IDECoreDataModeler.DataModel\">\n<entity name=\"Book\" inver"
        try (Data(text.utf8) + Data([0xFF, 0xFF]) + Data("seEntity=\"x\"/></model>".utf8)).write(to: bundle.appendingPathComponent("contents"))
        let error = try failure { try ModelLoader.load(bundle.path) }
        #expect(error.kind == .badInput && error.message.contains("line 3, column 26: not UTF-8"), "\(error)")

        let mapping = directory.url.appendingPathComponent("Bytes.xcmappingmodel")
        try FileManager.default.createDirectory(at: mapping, withIntermediateDirectories: true)
        try
            (Data("<?xml version=\"1.0\"?><database><object type=\"X\" id=\"1\"><attribute name=\"a\" typ".utf8) + Data([0xF4])
            + Data("=\"string\">x</attribute></object></database>".utf8))
            .write(to: mapping.appendingPathComponent("xcmapping.xml"))
        let model = ObjectModel(versionName: "m", entities: [Entity(name: "A", attributes: [Attribute(name: "x", type: .string)])])
        #expect(throws: TernError.self) { try MappingLoader.load(mapping.path, source: model, destination: model) }
    }

    @Test(
        "a lone NUL, a processing instruction with no data: malformed XML, not a crash in FoundationXML (found by fuzzing)",
        arguments: [Data([0]), Data("<?x?>\n<model/>".utf8), Data("<?xml version=\"1.0\"?>\n<model><?pi?></model>".utf8)])
    func foundationXMLCrashes(contents: Data) throws {
        let bundle = directory.url.appendingPathComponent("Odd.xcdatamodel")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try contents.write(to: bundle.appendingPathComponent("contents"))
        let error = try failure { try ModelLoader.load(bundle.path) }
        #expect(error.kind == .badInput && error.message.contains("malformed XML"), "\(error)")
    }

    @Test("an unknown attribute type names the entity, attribute and the known types")
    func unknownAttributeType() throws {
        let error = try failure { try loadXcode(#"<entity name="Book"><attribute name="cover" attributeType="Picture"/></entity>"#) }
        #expect(error.message.contains("entity Book, attribute cover: unknown attributeType \"Picture\""))
        #expect(error.message.contains("Integer 16"))
    }

    @Test("a dangling relationship names the missing destination")
    func danglingRelationship() throws {
        let error = try failure { try loadXcode(#"<entity name="Book"><relationship name="shelf" maxCount="1" destinationEntity="Shelf"/></entity>"#) }
        #expect(error.message.contains("entity Book, relationship shelf: destination entity Shelf does not exist"))
    }

    @Test("an inverse that does not point back")
    func inverseMismatch() throws {
        let error = try failure {
            try loadXcode(
                """
                <entity name="Book"><relationship name="pages" toMany="YES" destinationEntity="Page" inverseName="owner" inverseEntity="Page"/></entity>
                <entity name="Page"><relationship name="owner" maxCount="1" destinationEntity="Shelf" inverseName="pages" inverseEntity="Shelf"/></entity>
                <entity name="Shelf"><relationship name="pages" toMany="YES" destinationEntity="Page" inverseName="owner" inverseEntity="Page"/></entity>
                """)
        }
        #expect(error.message.contains("entity Book, relationship pages: inverse Page.owner points to Shelf, not back to Book"))
    }

    @Test("a to-many that is its own inverse is refused as unsupported, naming it (its join table's columns would clash)")
    func selfInverseToMany() throws {
        let error = try failure {
            try loadXcode(
                #"<entity name="Node"><relationship name="peers" toMany="YES" destinationEntity="Node" inverseName="peers" inverseEntity="Node"/></entity>"#)
        }
        #expect(error.message.contains("entity Node, relationship peers: a to-many that is its own inverse is not supported"))
        // A to-one that is its own inverse (a partner) is stored in one column, and fine.
        let partner = try loadXcode(
            #"<entity name="Node"><relationship name="partner" maxCount="1" destinationEntity="Node" inverseName="partner" inverseEntity="Node"/></entity>"#)
        #expect(partner.current.problems().isEmpty)
    }

    @Test("walks down the tree end in a model with a cycle of two entities or a self-parented one, and the cycle is reported (a stack overflow before)")
    func cycleWalks() {
        for parents in [("B", "A"), ("A", "B")] {
            let model = ObjectModel(
                versionName: "Cycle",
                entities: [
                    Entity(name: "A", parent: parents.0, relationships: [Relationship(name: "c", destination: "C", inverse: "a")]),
                    Entity(name: "B", parent: parents.1),
                    Entity(name: "C", relationships: [Relationship(name: "a", destination: "A", inverse: "c", isToMany: true)]),
                ])
            #expect(Set(model.descendants(of: "A").map(\.name)).isSubset(of: ["A", "B"]))
            #expect(model.entityNumbers.count <= 3)
            #expect(model.problems().contains { $0.contains("inheritance cycle") || $0.contains("its own parent") }, "\(model.problems())")
        }
    }

    @Test("an inheritance cycle")
    func inheritanceCycle() throws {
        let error = try failure { try loadXcode(#"<entity name="A" parentEntity="B"/><entity name="B" parentEntity="A"/>"#) }
        #expect(error.message.contains("entity A: inheritance cycle"))
    }

    @Test("duplicate entity and property names")
    func duplicates() throws {
        let entity = try failure { try loadXcode(#"<entity name="A"/><entity name="A"/>"#) }
        #expect(entity.message.contains("entity A: defined twice"))
        let property = try failure {
            try loadXcode(#"<entity name="A"><attribute name="x" attributeType="String"/><attribute name="x" attributeType="Date"/></entity>"#)
        }
        #expect(property.message.contains("entity A, property x: defined twice"))
        let inherited = try failure {
            try loadXcode(
                #"<entity name="A"><attribute name="x" attributeType="String"/></entity><entity name="B" parentEntity="A"><attribute name="x" attributeType="String"/></entity>"#
            )
        }
        #expect(inherited.message.contains("entity B, property x: already defined by a parent entity"))
    }

    @Test("bad defaults: text for a number, out of range for Integer 16")
    func badDefaults() throws {
        let text = try failure { try loadXcode(#"<entity name="A"><attribute name="n" attributeType="Integer 32" defaultValueString="many"/></entity>"#) }
        #expect(text.message.contains("entity A, attribute n: many is not an integer"))
        let range = try failure { try loadXcode(#"<entity name="A"><attribute name="n" attributeType="Integer 16" defaultValueString="70000"/></entity>"#) }
        #expect(range.message.contains("entity A, attribute n: default value 70000 is out of range for Integer 16"))
    }

    @Test("YAML: a syntax error carries line and column")
    func yamlSyntax() throws {
        let error = try failure { try loadYAML("entities:\n  Book:\n    attributes: [title\n") }
        #expect(error.message.contains("YAML syntax error"))
        #expect(error.message.contains("line") || error.message.contains("4:"))
    }

    @Test("YAML: an unknown key is refused, naming the allowed ones")
    func yamlUnknownKey() throws {
        let error = try failure { try loadYAML("entities:\n  Book:\n    attributes:\n      title: { type: string, optinal: false }\n") }
        #expect(error.message.contains("unknown key optinal in an attribute"))
        #expect(error.message.contains("entities.Book.attributes.title"))
    }

    @Test("YAML: an unknown attribute type")
    func yamlUnknownType() throws {
        let error = try failure { try loadYAML("entities:\n  Book:\n    attributes:\n      cover: picture\n") }
        #expect(error.kind == .badInput)
        #expect(error.message.contains("entities.Book.attributes.cover"))
    }

    @Test("a missing model is missingInput")
    func missing() throws {
        let error = try failure { try ModelLoader.load(directory.path("nothing.xcdatamodeld")) }
        #expect(error.kind == .missingInput)
    }
}
