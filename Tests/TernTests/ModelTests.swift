import Foundation
import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore
import TernSQLite

@Suite("Models load from every fixture and from configs/")
struct ModelLoadingTests {
    @Test("wibosco: four versions, v4 current, color renamed hexColor by elementID")
    func wibosco() throws {
        let model = try ModelLoader.load(
            Fixtures.path("wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"))
        #expect(
            model.versions.map(\.versionName) == [
                "CoreDataMigration_Example", "CoreDataMigration_Example 2", "CoreDataMigration_Example 3", "CoreDataMigration_Example 4",
            ])
        #expect(model.currentVersionName == "CoreDataMigration_Example 4")
        let v2 = try #require(model.versions[1].entity(named: "Post"))
        #expect(v2.attribute(named: "hexColor")?.renamingIdentifier == "color")
        #expect(model.versions[0].entity(named: "Post")?.attribute(named: "color") != nil)
        let v3 = model.versions[2]
        #expect(v3.entity(named: "Post")?.attribute(named: "content") == nil)
        #expect(v3.entity(named: "Post")?.relationship(named: "sections")?.isToMany == true)
        #expect(v3.entity(named: "Section")?.relationship(named: "post")?.inverse == "sections")
        #expect(v3.entity(named: "Post")?.relationship(named: "sections")?.deleteRule == .cascade)
        #expect(model.versions[3].entity(named: "Post")?.relationship(named: "sections")?.deleteRule == .nullify)
    }

    @Test("CoreDataPlus SampleModel: three-level inheritance, an entity renamed by elementID, many-to-many in v3")
    func sampleModel() throws {
        let model = try ModelLoader.load(Fixtures.path("alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld"))
        #expect(model.versions.map(\.versionName) == ["SampleModel", "SampleModel2", "SampleModel3"])
        #expect(model.versions.map(\.versionIdentifiers) == [["1"], ["2"], ["3"]])
        let v1 = model.versions[0]
        #expect(v1.lineage(of: "ExpensiveSportCar").map(\.name) == ["ExpensiveSportCar", "SportCar", "Car"])
        #expect(v1.entityNumbers == ["Car": 1, "SportCar": 2, "ExpensiveSportCar": 3, "Person": 4])
        #expect(v1.entity(named: "Car")?.attribute(named: "currentDrivingSpeed")?.isTransient == true)
        #expect(v1.entity(named: "Person")?.attribute(named: "id")?.type == .uuid)
        #expect(v1.entity(named: "Car")?.attribute(named: "color")?.type == .transformable)
        #expect(v1.entity(named: "Person")?.uniquenessConstraints == [["firstName", "lastName"]])
        let v2 = model.versions[1]
        #expect(v2.entity(named: "LuxuryCar")?.renamingIdentifier == "ExpensiveSportCar")
        let v3 = model.versions[2]
        let previousOwners = try #require(v3.entity(named: "Car")?.relationship(named: "previousOwners"))
        #expect(previousOwners.isToMany && previousOwners.inverse == "previousCars")
        #expect(v3.entity(named: "Person")?.relationship(named: "previousCars")?.isToMany == true)
    }

    @Test("DuckDuckGo Bookmarks: hash modifiers, ordered self-referencing to-many, a to-one turned many-to-many")
    func bookmarks() throws {
        let model = try ModelLoader.load(Fixtures.path("duckduckgo__BrowserServicesKit/Sources/Bookmarks/BookmarksModel.xcdatamodeld"))
        #expect(model.versions.count == 6)
        #expect(model.currentVersionName == "BookmarksModel 6")
        let v4 = try #require(model.version(named: "BookmarksModel 4")?.entity(named: "BookmarkEntity"))
        #expect(v4.attribute(named: "uuid")?.versionHashModifier == "3")
        #expect(v4.relationship(named: "children")?.isOrdered == true)
        #expect(v4.relationship(named: "favoriteFolders")?.renamingIdentifier == "favoriteFolder")
        #expect(v4.relationship(named: "favorites")?.isOrdered == true)
        #expect(v4.fetchIndexes.map(\.name).sorted() == ["byIsPendingDeletion", "byURL", "byUUID"])
        let v3 = try #require(model.version(named: "BookmarksModel 3")?.entity(named: "BookmarkEntity"))
        #expect(v3.relationship(named: "favoriteFolder")?.isToMany == false)
    }

    @Test(
        "BookMigration, CoreStore, MagicalRecord, mogenerator and SampleModel3 load with their entities",
        arguments: [
            ("hwaxxer__BookMigration/BookMigration/Model.xcdatamodeld", "Model3", ["Author", "Book", "File", "User"]),
            (
                "JohnEstropia__CoreStore/Demo/Sources/Demos/Advanced/EvolutionDemo/Advanced.EvolutionDemo.V1.xcdatamodeld", "Advanced.EvolutionDemo.V1",
                ["Creature"]
            ),
            ("JohnEstropia__CoreStore/CoreStoreTests/Model.xcdatamodeld", "Model", ["TestEntity1AAA", "TestEntity2"]),
            ("alemar11__CoreDataPlus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld", "SampleModel3", ["User"]),
            (
                "rentzsch__mogenerator/test/test.xcdatamodel", "test",
                [
                    "Child", "ConcreteEntityWithCustomClass1", "ConcreteEntityWithCustomClass2", "EntitySansCustomClass", "EntitySansCustomClass2",
                    "EntityWithBaseClass", "Human", "Parent", "Uncle",
                ]
            ),
        ])
    func otherFixtures(path: String, current: String, entities: [String]) throws {
        let model = try ModelLoader.load(Fixtures.path(path))
        #expect(model.currentVersionName == current)
        #expect(model.current.entities.map(\.name) == entities)
    }

    @Test("MagicalRecord: abstract entity, to-many without inverse, every scalar type, user info")
    func magicalRecord() throws {
        let model = try ModelLoader.load(Fixtures.path("magicalpanda__MagicalRecord/Tests/Fixtures/TestModel.xcdatamodeld")).current
        #expect(model.entity(named: "AbstractRelatedEntity")?.isAbstract == true)
        #expect(model.entity(named: "ConcreteRelatedEntity")?.parent == "AbstractRelatedEntity")
        let toMany = try #require(model.entity(named: "SingleEntityRelatedToManyMappedEntitiesUsingMappedPrimaryKey")?.relationship(named: "mappedEntities"))
        #expect(toMany.isToMany && toMany.inverse == nil)
        #expect(model.entity(named: "MappedEntity")?.userInfo == ["relatedByAttribute": "mapped"])
        let types = Set(model.entity(named: "SingleEntityWithNoRelationships")?.attributes.map(\.type) ?? [])
        #expect(types.isSuperset(of: [.integer16, .integer32, .integer64, .decimal, .double, .float, .boolean, .date, .string, .transformable]))
        #expect(
            model.entity(named: "SingleEntityRelatedToMappedEntityWithSecondaryMappings")?.attribute(named: "notImportedAttribute")?.defaultValue == .integer(1)
        )
    }

    @Test("configs/bookstore: five versions, Book renamed Publication, author split")
    func bookStore() throws {
        let model = try ModelLoader.load(Configs.path("bookstore"))
        #expect(model.versions.map(\.versionName) == (1...5).map { "BookStore \($0)" })
        #expect(model.currentVersionName == "BookStore 5")
        #expect(model.versions[0].entity(named: "Book")?.attribute(named: "price")?.defaultValue == .real(10))
        #expect(model.versions[2].entity(named: "Publication")?.renamingIdentifier == "Book")
        #expect(model.versions[3].entity(named: "Publication")?.attribute(named: "author") == nil)
        #expect(model.versions[4].entity(named: "Publication")?.attribute(named: "synopsis")?.type == .string)
    }

    @Test(
        "a Boolean's YES left on an Integer 32 (its type changed in Xcode): loaded as Xcode's compiler reads it, the number it starts with (0), with a warning naming file, entity and attribute; a Boolean keeps YES as 1; YAML stays strict"
    )
    func integerDefaultAsXcodeReadsIt() throws {
        let directory = try TemporaryDirectory()
        let version = directory.url.appendingPathComponent("Flags.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try Data(
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Flag" syncable="YES">
                    <attribute name="count" attributeType="Integer 32" defaultValueString="YES" usesScalarValueType="YES"/>
                    <attribute name="level" attributeType="Integer 16" defaultValueString="NO" usesScalarValueType="YES"/>
                    <attribute name="on" attributeType="Boolean" defaultValueString="YES" usesScalarValueType="YES"/>
                </entity>
            </model>
            """.utf8
        ).write(to: version.appendingPathComponent("contents"))
        let model = try ModelLoader.load(version.path)
        let flag = try #require(model.current.entity(named: "Flag"))
        #expect(flag.attribute(named: "count")?.defaultValue == .integer(0))
        #expect(flag.attribute(named: "level")?.defaultValue == .integer(0))
        #expect(flag.attribute(named: "on")?.defaultValue == .integer(1))
        #expect(model.warnings.count == 2)
        #expect(
            model.warnings.first?.description.contains("contents: entity Flag, attribute count: defaultValueString \"YES\" is not an integer; read as 0")
                == true,
            "\(model.warnings)")
        #expect(throws: TernError.self) {
            try directory.model([
                "model.yaml": "name: F\ncurrent: F 1\nversions: [v1.yaml]\n",
                "v1.yaml": "version: F 1\nentities:\n  Flag:\n    attributes: { count: { type: integer32, default: \"YES\" } }\n",
            ])
        }
    }
}

enum Configs {
    static func path(_ relative: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("configs").appendingPathComponent(relative).path
    }
}
