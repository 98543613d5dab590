import Foundation
import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore
import TernGenerate
import TernSQLite

@Suite("Inferred (lightweight) mappings")
struct MappingInferenceTests {
    private func expression(_ model: MappingModel, _ mapping: String, _ property: String) -> String? {
        let entity = model.entityMapping(named: mapping)
        return (entity?.attributeMappings ?? []).first { $0.name == property }?.valueExpression
            ?? (entity?.relationshipMappings ?? []).first { $0.name == property }?.valueExpression
    }

    @Test(
        "every consecutive version pair of every fixture model infers, and the result validates",
        arguments: [
            FixtureStore.wibosco, FixtureStore.sampleModel, FixtureStore.sampleModel3, FixtureStore.bookmarks, FixtureStore.bookMigration,
            "JohnEstropia__CoreStore/Demo/Sources/Demos/Advanced/EvolutionDemo/Advanced.EvolutionDemo.V1.xcdatamodeld",
        ])
    func fixturePairs(_ path: String) throws {
        let model = try ModelLoader.load(Fixtures.path(path))
        for (source, destination) in zip(model.versions, model.versions.dropFirst()) {
            let mapping = try MappingInference.infer(from: source, to: destination)
            _ = try mapping.validate(source: source, destination: destination)
            #expect(mapping.sourceVersion == source.versionName)
        }
    }

    @Test("renames through elementID: wibosco color → hexColor, Bookmarks favoriteFolder → favoriteFolders, ExpensiveSportCar → LuxuryCar")
    func renames() throws {
        let wibosco = try ModelLoader.load(Fixtures.path(FixtureStore.wibosco))
        let first = try MappingInference.infer(from: wibosco.versions[0], to: wibosco.versions[1])
        #expect(expression(first, "PostToPost", "hexColor") == "$source.color")
        #expect(first.entityMapping(named: "PostToPost")?.type == .transform)

        let bookmarks = try ModelLoader.load(Fixtures.path(FixtureStore.bookmarks))
        let step = try MappingInference.infer(from: bookmarks.versions[2], to: bookmarks.versions[3])
        #expect(
            expression(step, "BookmarkEntityToBookmarkEntity", "favoriteFolders")
                == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "BookmarkEntityToBookmarkEntity", $source.favoriteFolder)"#
        )

        let cars = try ModelLoader.load(Fixtures.path(FixtureStore.sampleModel))
        let renamed = try MappingInference.infer(from: cars.versions[0], to: cars.versions[1])
        #expect(renamed.entityMapping(named: "ExpensiveSportCarToLuxuryCar")?.sourceEntity == "ExpensiveSportCar")
        #expect(
            expression(renamed, "PersonToPerson", "cars")
                == #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "cars", $source.cars)"#)
    }

    @Test("a rename chain: renamed in v2 and again in v3 still maps v1 → v3 through v2")
    func renameChain() throws {
        let v1 = ObjectModel(versionName: "1", entities: [Entity(name: "Book", attributes: [Attribute(name: "title", type: .string)])])
        let v2 = ObjectModel(
            versionName: "2",
            entities: [
                Entity(
                    name: "Publication", renamingIdentifier: "Book",
                    attributes: [Attribute(name: "name", type: .string, renamingIdentifier: "title")])
            ])
        let v3 = ObjectModel(
            versionName: "3",
            entities: [
                Entity(
                    name: "Title", renamingIdentifier: "Publication",
                    attributes: [Attribute(name: "heading", type: .string, renamingIdentifier: "name")])
            ])
        let chained = try MappingInference.infer(from: v1, to: v3, through: [v2])
        #expect(chained.entityMappings.map(\.name) == ["BookToTitle"])
        #expect(expression(chained, "BookToTitle", "heading") == "$source.title")
        let direct = try MappingInference.infer(from: v1, to: v3)
        #expect(direct.entityMappings.map(\.type) == [.add, .remove])
        let bookStore = try ModelLoader.load(Configs.path("bookstore"))
        let oneToThree = try MappingInference.infer(from: bookStore.versions[0], to: bookStore.versions[2], through: [bookStore.versions[1]])
        #expect(oneToThree.entityMapping(named: "BookToPublication")?.sourceEntity == "Book")
    }

    @Test("optional → non-optional takes the default for nils; without a default it is refused")
    func optionality() throws {
        let v1 = ObjectModel(
            versionName: "1", entities: [Entity(name: "Book", attributes: [Attribute(name: "price", type: .double), Attribute(name: "title", type: .string)])])
        let v2 = ObjectModel(
            versionName: "2",
            entities: [
                Entity(
                    name: "Book",
                    attributes: [
                        Attribute(name: "price", type: .double, isOptional: false, defaultValue: .real(9.5)),
                        Attribute(name: "title", type: .string, isOptional: false, defaultValue: .text("Untitled \"draft\"")),
                    ])
            ])
        let mapping = try MappingInference.infer(from: v1, to: v2)
        #expect(expression(mapping, "BookToBook", "price") == "ifNil:($source.price, 9.5)")
        #expect(expression(mapping, "BookToBook", "title") == #"ifNil:($source.title, "Untitled \"draft\"")"#)
        _ = try mapping.validate(source: v1, destination: v2)
        let strict = ObjectModel(
            versionName: "3",
            entities: [Entity(name: "Book", attributes: [Attribute(name: "price", type: .double, isOptional: false), Attribute(name: "title", type: .string)])])
        let failure = try #require(throws: InferenceFailure.self) { try MappingInference.infer(from: v1, to: strict) }
        #expect(
            failure.reasons == [
                "entity Book, attribute price: becomes non-optional without a default value (one an expression can spell) for the objects that have none"
            ])
    }

    @Test("properties move up and down a hierarchy; an entity moves out of one; to-one ↔ to-many and ordering change")
    func hierarchyAndRelationships() throws {
        let v1 = ObjectModel(
            versionName: "1",
            entities: [
                Entity(name: "Vehicle", attributes: [Attribute(name: "wheels", type: .integer16)]),
                Entity(
                    name: "Car", parent: "Vehicle", attributes: [Attribute(name: "seats", type: .integer16)],
                    relationships: [Relationship(name: "owner", destination: "Person", inverse: "cars")]),
                Entity(name: "Bike", parent: "Vehicle"),
                Entity(name: "Person", relationships: [Relationship(name: "cars", destination: "Car", inverse: "owner", isToMany: true)]),
            ])
        let v2 = ObjectModel(
            versionName: "2",
            entities: [
                Entity(name: "Vehicle", attributes: [Attribute(name: "wheels", type: .integer32), Attribute(name: "seats", type: .integer16)]),
                Entity(name: "Car", parent: "Vehicle", relationships: [Relationship(name: "owner", destination: "Person", inverse: "cars", isToMany: true)]),
                Entity(name: "Bike"),
                Entity(name: "Person", relationships: [Relationship(name: "cars", destination: "Car", inverse: "owner", isToMany: true, isOrdered: true)]),
            ])
        let mapping = try MappingInference.infer(from: v1, to: v2)
        #expect(expression(mapping, "CarToCar", "seats") == "$source.seats")
        #expect(expression(mapping, "VehicleToVehicle", "seats") == nil)
        #expect(expression(mapping, "VehicleToVehicle", "wheels") == "$source.wheels")
        #expect(mapping.entityMapping(named: "BikeToBike")?.type == .transform)
        #expect(expression(mapping, "CarToCar", "owner")?.contains("\"PersonToPerson\", $source.owner") == true)
        _ = try mapping.validate(source: v1, destination: v2)
    }

    @Test(
        "a renaming identifier that matches no source entity makes a new entity, as Core Data's inference pairs entities by renaming identifier alone: the old one's objects are removed, links into them dropped, nothing refused"
    )
    func identifierMatchingNothing() throws {
        let pet = { (identifier: String?) in
            Entity(
                name: "Pet", renamingIdentifier: identifier, attributes: [Attribute(name: "name", type: .string)],
                relationships: [Relationship(name: "owner", destination: "Person", inverse: "pets")])
        }
        let person = Entity(name: "Person", relationships: [Relationship(name: "pets", destination: "Pet", inverse: "owner", isToMany: true)])
        let v1 = ObjectModel(versionName: "1", entities: [person, pet(nil)])
        let v2 = ObjectModel(versionName: "2", entities: [person, pet("Critter")])
        let mapping = try MappingInference.infer(from: v1, to: v2)
        #expect(mapping.entityMapping(named: "Pet")?.type == .add)
        #expect(mapping.entityMapping(named: "Remove_Pet")?.type == .remove)
        #expect(mapping.entityMapping(named: "PersonToPerson")?.relationshipMappings.first { $0.name == "pets" }?.valueExpression == nil)
        _ = try mapping.validate(source: v1, destination: v2)
        // Required, the relationship would leave existing objects without one: refused.
        let strict = ObjectModel(
            versionName: "3",
            entities: [
                Entity(name: "Person", relationships: [Relationship(name: "pets", destination: "Pet", inverse: "owner", isToMany: true, minCount: 1)]),
                pet("Critter"),
            ])
        let failure = try #require(throws: InferenceFailure.self) { try MappingInference.infer(from: v1, to: strict) }
        #expect(
            failure.reasons == [
                "entity Person, relationship pets: required, but no object of Pet becomes an object of this version: existing objects would have none"
            ])
    }

    @Test("what cannot be inferred is refused with every reason, naming entity and property")
    func refusals() throws {
        let v1 = ObjectModel(
            versionName: "1",
            entities: [
                Entity(name: "Book", attributes: [Attribute(name: "isbn", type: .string)], relationships: [Relationship(name: "shelf", destination: "Shelf")]),
                Entity(name: "Shelf"),
                Entity(name: "Magazine"),
            ])
        let v2 = ObjectModel(
            versionName: "2",
            entities: [
                Entity(name: "Item", isAbstract: true),
                Entity(
                    name: "Book", parent: "Item",
                    attributes: [Attribute(name: "isbn", type: .integer64), Attribute(name: "pages", type: .integer32, isOptional: false)],
                    relationships: [Relationship(name: "shelf", destination: "Box"), Relationship(name: "library", destination: "Shelf", isOptional: false)]),
                Entity(name: "Magazine", parent: "Item"),
                Entity(name: "Shelf"),
                Entity(name: "Box"),
            ])
        let failure = try #require(throws: InferenceFailure.self) { try MappingInference.infer(from: v1, to: v2) }
        #expect(
            failure.reasons.contains(
                "entity Item: its tree would merge entities from separate source trees (Book, Magazine), which lightweight migration cannot do"))
        #expect(failure.reasons.contains("entity Book, attribute isbn: type changed from String to Integer 64, which cannot be inferred"))
        #expect(failure.reasons.contains("entity Book, attribute pages: new non-optional attribute with no default value"))
        #expect(failure.reasons.contains("entity Book, relationship shelf: now points to Box, which no object of Shelf becomes"))
        #expect(failure.reasons.contains("entity Book, relationship library: new required relationship: existing objects would have none"))
        #expect(failure.reasons.count == 5)
    }
}

@Suite("Mapping models: import, validation, both executions")
struct MappingModelTests {
    static let bookStore = try! ModelLoader.load(Configs.path("bookstore"))

    @Test(
        "every .xcmappingmodel fixture imports and validates against its models",
        arguments: [
            (
                "JohnEstropia__CoreStore/Demo/Sources/Demos/Advanced/EvolutionDemo/Advanced.EvolutionDemo.V2.FromV1.xcmappingmodel",
                "JohnEstropia__CoreStore/Demo/Sources/Demos/Advanced/EvolutionDemo/Advanced.EvolutionDemo.V1.xcdatamodeld", "Advanced.EvolutionDemo.V1",
                "Advanced.EvolutionDemo.V2"
            ),
            (
                "alemar11__CoreDataPlus/Tests/Resources/SampleModel/MappingModels/V2toV3.xcmappingmodel", FixtureStore.sampleModel, "SampleModel2",
                "SampleModel3"
            ),
            (
                "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-Example/CoreData/Migration/Mappings/Migration2to3ModelMapping.xcmappingmodel",
                FixtureStore.wibosco, "CoreDataMigration_Example 2", "CoreDataMigration_Example 3"
            ),
            ("hwaxxer__BookMigration/BookMigration/Model1_to_Model2.xcmappingmodel", FixtureStore.bookMigration, "Model1", "Model2"),
            ("hwaxxer__BookMigration/BookMigration/Model2_to_Model3.xcmappingmodel", FixtureStore.bookMigration, "Model2", "Model3"),
            ("hwaxxer__BookMigration/BookMigration/Model2_to_Model3_User.xcmappingmodel", FixtureStore.bookMigration, "Model2", "Model3"),
        ])
    func xcodeFixtures(mapping: String, model: String, from: String, to: String) throws {
        let versioned = try ModelLoader.load(Fixtures.path(model))
        let imported = try XcodeMappingReader.read(at: Fixtures.root.appendingPathComponent(mapping))
        #expect(imported.sourceModelName == from)
        #expect(imported.destinationModelName == to)
        let validated = try MappingLoader.load(Fixtures.path(mapping), source: versioned.version(named: from)!, destination: versioned.version(named: to)!)
        #expect(!validated.entities.isEmpty)
    }

    @Test("archived expressions decode: a renaming key path, a constant, the manager functions, user info and policies")
    func xcodeDetails() throws {
        let creature = try XcodeMappingReader.read(
            at: Fixtures.root.appendingPathComponent(
                "JohnEstropia__CoreStore/Demo/Sources/Demos/Advanced/EvolutionDemo/Advanced.EvolutionDemo.V2.FromV1.xcmappingmodel")
        ).model
        let mapping = try #require(creature.entityMapping(named: "CreatureToCreature"))
        #expect(mapping.type == .custom)
        #expect(mapping.policy == "Advanced_EvolutionDemo_V2_FromV1MigrationPolicy")
        #expect(mapping.attributeMappings.first { $0.name == "numberOfFlippers" }?.valueExpression == "$source.numberOfFlagella")
        #expect(mapping.attributeMappings.first { $0.name == "hasHead" }?.valueExpression == "YES")

        let imported = try XcodeMappingReader.read(
            at: Fixtures.root.appendingPathComponent("alemar11__CoreDataPlus/Tests/Resources/SampleModel/MappingModels/V2toV3.xcmappingmodel"))
        let cars = imported.model
        #expect(cars.entityMappings.map(\.name) == ["CarToCar", "LuxuryCarToLuxuryCar", "PersonToPerson", "SportCarToSportCar", "Maker"])
        #expect(cars.entityMapping(named: "Maker")?.type == .add)
        #expect(cars.entityMapping(named: "PersonToPerson")?.type == .copy)
        // previousOwners has an expression in the file; owner's is one Xcode generates when compiling.
        #expect(
            cars.entityMapping(named: "CarToCar")?.relationshipMappings.first { $0.name == "previousOwners" }?.valueExpression
                == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.owner)"#)
        #expect(cars.entityMapping(named: "CarToCar")?.relationshipMappings.first { $0.name == "owner" }?.valueExpression == nil)
        let versions = try ModelLoader.load(Fixtures.path(FixtureStore.sampleModel))
        let resolved = imported.resolvingDefaults(source: versions.versions[1], destination: versions.versions[2])
        #expect(
            resolved.entityMapping(named: "CarToCar")?.relationshipMappings.first { $0.name == "owner" }?.valueExpression
                == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.owner)"#)
        #expect(
            resolved.entityMapping(named: "PersonToPerson")?.relationshipMappings.first { $0.name == "cars" }?.valueExpression
                == #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "cars", $source.cars)"#)
        #expect(resolved.entityMapping(named: "CarToCar")?.relationshipMappings.first { $0.name == "createdBy" }?.valueExpression == nil)

        let books = try XcodeMappingReader.read(
            at: Fixtures.root.appendingPathComponent("hwaxxer__BookMigration/BookMigration/Model1_to_Model2.xcmappingmodel")
        ).model
        #expect(books.entityMapping(named: "BookToBook")?.userInfo == ["modelVersion": "2"])
        #expect(books.entityMapping(named: "BookToBook")?.policy == "MHWBookToBookPolicy")
    }

    @Test("the BookStore mappings and the seed examples compile both ways and agree on a generated store")
    func bookStoreMappings() throws {
        let directory = try TemporaryDirectory()
        for (file, from, to) in [("v3-to-v4.yaml", 2, 3), ("v4-to-v5.yaml", 3, 4)] {
            let source = Self.bookStore.versions[from]
            let validated = try MappingLoader.load(Configs.path("bookstore/sql/\(file)"), source: source, destination: Self.bookStore.versions[to])
            let path = directory.path("\(from).sqlite")
            _ = try DataGenerator.generate(model: source, at: path, rows: 200, seed: 5)
            let connection = try Connection(path: path)
            try SQLCompiler.prepare(connection)
            let layout = StoreLayout(model: source)
            for entity in validated.entities {
                for (property, compiled) in entity.attributes {
                    try expectBothWaysAgree(compiled, connection: connection, layout: layout, what: "\(entity.mapping.name).\(property)")
                }
            }
            if file == "v3-to-v4.yaml" {
                let split = try #require(validated.entities.first { $0.mapping.name == "PublicationToPublication" })
                let firstName = try #require(split.attributes["firstName"])
                let author = try ExpressionBinder.expression("$source.author", entity: "Publication", model: source)
                let pairs = try zip(values(author, connection, layout), values(firstName, connection, layout))
                for (full, first) in pairs {
                    guard let full = full.text else { #expect(first == .null); continue }
                    #expect(first.text == String(full.split(separator: " ", maxSplits: 1).first ?? ""))
                }
                #expect(split.relationships["pages"] == .entityMapping("PageToPage", sourceRelationship: "pages"))
            }
        }
        // The lightweight steps (v1 → v2 adds author, v2 → v3 renames Book), inferred, compile both ways too.
        for from in [0, 1] {
            let source = Self.bookStore.versions[from]
            let inferred = try MappingInference.infer(from: source, to: Self.bookStore.versions[from + 1])
            let validated = try inferred.validate(source: source, destination: Self.bookStore.versions[from + 1])
            let path = directory.path("inferred-\(from).sqlite")
            _ = try DataGenerator.generate(model: source, at: path, rows: 200, seed: 6)
            let connection = try Connection(path: path)
            try SQLCompiler.prepare(connection)
            for entity in validated.entities {
                for (property, compiled) in entity.attributes {
                    try expectBothWaysAgree(compiled, connection: connection, layout: StoreLayout(model: source), what: "\(entity.mapping.name).\(property)")
                }
            }
        }
        // The Programming Guide's examples.
        let model = ObjectModel(
            versionName: "seed",
            entities: [
                Entity(
                    name: "Reading", attributes: [Attribute(name: "amount", type: .double), Attribute(name: "temperature", type: .double)],
                    relationships: [Relationship(name: "trades", destination: "Trade", isToMany: true)]),
                Entity(name: "Trade"),
            ])
        for text in ["$source.amount", "($source.temperature - 32.0) / 1.8"] {
            _ = try ExpressionBinder.expression(text, entity: "Reading", model: model)
        }
        let seed = MappingModel(
            sourceVersion: "seed", destinationVersion: "seed",
            entityMappings: [
                EntityMapping(
                    name: "ReadingToReading", type: .transform, sourceEntity: "Reading", destinationEntity: "Reading",
                    attributeMappings: [PropertyMapping(name: "amount", valueExpression: "($source.temperature - 32.0) / 1.8")],
                    relationshipMappings: [
                        PropertyMapping(
                            name: "trades",
                            valueExpression:
                                #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "TradeToTrade", $source.trades)"#)
                    ]),
                EntityMapping(name: "TradeToTrade", type: .copy, sourceEntity: "Trade", destinationEntity: "Trade"),
            ])
        let validated = try seed.validate(source: model, destination: model)
        #expect(validated.entities[0].relationships["trades"] == .entityMapping("TradeToTrade", sourceRelationship: "trades"))
    }

    private func values(_ compiled: CompiledExpression, _ connection: Connection, _ layout: StoreLayout) throws -> [SQLiteValue] {
        var compiler = SQLCompiler(layout: layout)
        let fragment = compiler.sql(compiled, alias: "s")
        let table = layout.entities[compiled.entity]!.table
        let statement = try connection.prepare("SELECT \(fragment.sql) FROM \(quoteIdentifier(table)) s ORDER BY s.Z_PK")
        try statement.bind(fragment.arguments)
        var rows = statement.rows()
        var result: [SQLiteValue] = []
        while let row = try rows.next() { result.append(row.value(at: 0)) }
        return result
    }

    private func expectBothWaysAgree(_ compiled: CompiledExpression, connection: Connection, layout: StoreLayout, what: String) throws {
        let sql = try values(compiled, connection, layout)
        var compiler = SQLCompiler(layout: layout)
        let columns = compiled.inputs.isEmpty ? "1" : compiled.inputs.map { compiler.sql($0, alias: "s") }.joined(separator: ", ")
        let statement = try connection.prepare("SELECT \(columns) FROM \(quoteIdentifier(layout.entities[compiled.entity]!.table)) s ORDER BY s.Z_PK")
        var rows = statement.rows()
        var swift: [SQLiteValue] = []
        let program = ExpressionProgram(compiled)
        while let row = try rows.next() { swift.append(try program.evaluate(compiled.inputs.isEmpty ? [] : row.values)) }
        #expect(sql.count == 200)
        #expect(zip(sql, swift).allSatisfy { ExpressionDifferentialTests.same($0, $1) }, "\(what) differs")
    }

    @Test("mapping errors name the entity mapping and property")
    func errors() throws {
        let v3 = Self.bookStore.versions[2]
        let v4 = Self.bookStore.versions[3]
        let bad = MappingModel(
            sourceVersion: nil, destinationVersion: nil,
            entityMappings: [
                EntityMapping(
                    name: "PublicationToPublication", type: .transform, sourceEntity: "Publication", destinationEntity: "Publication",
                    attributeMappings: [
                        PropertyMapping(name: "price", valueExpression: "$source.title"),
                        PropertyMapping(name: "subtitle", valueExpression: "$source.title"),
                        PropertyMapping(name: "firstName", valueExpression: "$source.autor"),
                    ],
                    relationshipMappings: [
                        PropertyMapping(
                            name: "pages",
                            valueExpression: #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PageMapping", $source.pages)"#)
                    ]),
                EntityMapping(name: "Ghost", type: .copy, sourceEntity: "Ghost", destinationEntity: "Page"),
            ])
        let error = try #require(throws: TernError.self) { try bad.validate(source: v3, destination: v4) }
        #expect(
            error.message.contains(
                "entity mapping PublicationToPublication, attribute price: $source.title gives a string, but Publication.price holds a number"))
        #expect(error.message.contains("entity mapping PublicationToPublication, attribute subtitle: Publication has no attribute subtitle"))
        #expect(
            error.message.contains(
                "entity mapping PublicationToPublication, attribute firstName: $source.autor: 1:1: entity Publication has no property autor (it has: author, category, pages, price, title)"
            ))
        #expect(error.message.contains("entity mapping PublicationToPublication, relationship pages: no entity mapping named PageMapping"))
        #expect(error.message.contains("entity mapping Ghost: source entity Ghost is not in BookStore 3"))
    }

    @Test("Tern's mapping files round-trip through YAML; unknown keys are refused")
    func yamlRoundTrip() throws {
        let inferred = try MappingInference.infer(from: Self.bookStore.versions[0], to: Self.bookStore.versions[1])
        let directory = try TemporaryDirectory()
        let path = directory.path("inferred.yaml")
        try MappingLoader.yaml(inferred).write(toFile: path, atomically: true, encoding: .utf8)
        let reloaded = try MappingLoader.load(path, source: Self.bookStore.versions[0], destination: Self.bookStore.versions[1])
        #expect(reloaded.model == inferred)
        let typo = directory.path("typo.yaml")
        try "entityMappings:\n  - name: A\n    type: copy\n    sorce: Book\n".write(toFile: typo, atomically: true, encoding: .utf8)
        let error = try #require(throws: TernError.self) {
            try MappingLoader.load(typo, source: Self.bookStore.versions[0], destination: Self.bookStore.versions[1])
        }
        #expect(error.message.contains("unknown key sorce in an entity mapping"))
    }
}
