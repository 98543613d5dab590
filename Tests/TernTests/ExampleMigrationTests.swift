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
@testable import TernExamples
import TernSQLite

@Suite("The examples in configs/ migrate as documented")
struct ExampleMigrationTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    private func generateAndMigrate(_ config: String, version: String, rows: Int = 300) throws -> (
        source: Connection, migrated: Connection, report: StoreMigration.Report
    ) {
        let model = try ModelLoader.load(Configs.path(config))
        let path = directory.path("\(config).sqlite")
        _ = try DataGenerator.generate(model: model.version(named: version)!, at: path, rows: rows, seed: 9)
        let output = directory.path("\(config)-migrated.sqlite")
        let migration = StoreMigration(store: path, model: model, options: MigrationOptions(batchSize: 64, registry: .builtIn))
        let report = try migration.runBlocking(try migration.plan(), output: output)
        #expect(try VersionMatch.find(in: model, storeAt: output).verdict == .compatible(version: model.currentVersionName, evidence: .appleHashes))
        return (try Connection(path: path, configuration: .init(mode: .readOnly)), try Connection(path: output, configuration: .init(mode: .readOnly)), report)
    }

    @Test("the guide's Recipes: chefs, recipes and ingredients carry over with their links; cuisines start empty")
    func recipes() throws {
        let (source, migrated, _) = try generateAndMigrate("recipes", version: "CoreRecipes 1")
        for query in [
            "SELECT Z_PK, ZNAME, ZDIRECTIONS, ZCHEF FROM ZRECIPE ORDER BY Z_PK", "SELECT Z_PK, ZNAME, ZTRAINING FROM ZCHEF ORDER BY Z_PK",
            "SELECT Z_PK, ZNAME, ZAMOUNT, ZRECIPE FROM ZINGREDIENT ORDER BY Z_PK",
        ] {
            #expect(try rows(source, query) == rows(migrated, query))
        }
        #expect(try migrated.scalar("SELECT count(*) FROM ZCUISINE") == .integer(0))
    }

    @Test("the 004 Event split: two mapping models run as two passes into one store")
    func eventSplit() throws {
        let (source, migrated, report) = try generateAndMigrate("events", version: "Events 1")
        #expect(report.plan.steps.count == 1)
        #expect(report.plan.steps[0].passes.count == 2)
        #expect(report.steps[0].mappings.map(\.name) == ["EventToEventDateString", "EventToEventTimestamp"])
        // Dates sit in a NUMERIC-affinity column (whole seconds stored as integers); doubles are reals.
        #expect(
            try rows(source, "SELECT CAST(ZTIMESTAMP AS REAL) FROM ZEVENT ORDER BY Z_PK")
                == rows(migrated, "SELECT ZTIMESTAMP FROM ZEVENTTIMESTAMP ORDER BY Z_PK"))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let expected = try rows(source, "SELECT ZTIMESTAMP FROM ZEVENT ORDER BY Z_PK").map { text -> String in
            text == "NULL" ? "NULL" : "'\(formatter.string(from: Date(timeIntervalSinceReferenceDate: Double(text)!)))'"
        }
        #expect(try rows(migrated, "SELECT ZPRINTEDDATE FROM ZEVENTDATESTRING ORDER BY Z_PK") == expected)
    }

    @Test("a plan file lists the passes and cuts one mapping into two by predicates: the same objects as the default passes")
    func planFile() throws {
        let model = try ModelLoader.load(Configs.path("events"))
        let path = directory.path("events.sqlite")
        _ = try DataGenerator.generate(model: model.versions[0], at: path, rows: 700, seed: 4)
        let plan = Configs.path("events") + "/plans/split-by-date.yaml"
        let planned = StoreMigration(store: path, model: model, options: MigrationOptions(batchSize: 50, registry: .builtIn))
        let steps = try planned.plan(mappingFiles: [plan]).steps
        #expect(steps[0].passes.count == 3)
        #expect(steps[0].passes[2].model.entityMappings[0].filterPredicate == #"timeStamp >= CAST(600000000, "NSDate") OR timeStamp == nil"#)
        _ = try planned.runBlocking(try planned.plan(mappingFiles: [plan]), output: directory.path("planned.sqlite"))
        _ = try StoreMigration(store: path, model: model, options: MigrationOptions(registry: .builtIn)).runBlocking(
            try StoreMigration(store: path, model: model, options: MigrationOptions(registry: .builtIn)).plan(), output: directory.path("default.sqlite"))
        let planStore = try Connection(path: directory.path("planned.sqlite"), configuration: .init(mode: .readOnly))
        let defaultStore = try Connection(path: directory.path("default.sqlite"), configuration: .init(mode: .readOnly))
        for query in ["SELECT ZTIMESTAMP FROM ZEVENTTIMESTAMP ORDER BY 1", "SELECT ZPRINTEDDATE FROM ZEVENTDATESTRING ORDER BY Z_PK"] {
            let planned = try rows(planStore, query)
            #expect(planned.count == 700)
            #expect(planned == (try rows(defaultStore, query)))
        }
    }

    @Test("bad plan files: an unknown key, no passes, a missing mapping file — each named")
    func badPlanFiles() throws {
        let model = try ModelLoader.load(Configs.path("events"))
        func plan(_ text: String) throws -> String {
            let path = directory.path("plan-\(UUID().uuidString).yaml")
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        let unknown = try plan("source: Events 1\ndestination: Events 2\npasses:\n  - mapping: a.yaml\n    filtre: x > 1\n")
        #expect(throws: TernError.self) { try MigrationPlanner.chain(in: model, from: "Events 1", to: "Events 2", mappingFiles: [], overriding: [unknown]) }
        let empty = try plan("source: Events 1\ndestination: Events 2\npasses: []\n")
        let noPasses = try #require(throws: TernError.self) {
            try MigrationPlanner.chain(in: model, from: "Events 1", to: "Events 2", mappingFiles: [], overriding: [empty])
        }
        #expect(noPasses.description.contains("a plan needs at least one pass"))
        let missing = try plan("source: Events 1\ndestination: Events 2\npasses:\n  - mapping: nowhere.yaml\n")
        let notFound = try #require(throws: TernError.self) {
            try MigrationPlanner.chain(in: model, from: "Events 1", to: "Events 2", mappingFiles: [], overriding: [missing])
        }
        #expect(notFound.description.contains("nowhere.yaml"))
    }

    @Test("filter predicates split one entity across passes; later passes link to objects of earlier ones")
    func filteredPasses() throws {
        let bookStore = try ModelLoader.load(Configs.path("bookstore"))
        let (v1, v2) = (bookStore.versions[0], bookStore.versions[1])
        let source = directory.path("split.sqlite")
        _ = try DataGenerator.generate(model: v1, at: source, rows: 400, seed: 2)
        func pass(_ bookFilter: String, pages: Bool) throws -> ValidatedMapping {
            var mappings = [
                EntityMapping(
                    name: "CheapBooks", type: .transform, sourceEntity: "Book", destinationEntity: "Book", filterPredicate: bookFilter,
                    attributeMappings: [
                        PropertyMapping(name: "title", valueExpression: "$source.title"), PropertyMapping(name: "price", valueExpression: "$source.price"),
                    ])
            ]
            if pages {
                mappings.append(
                    EntityMapping(
                        name: "PageToPage", type: .copy, sourceEntity: "Page", destinationEntity: "Page",
                        attributeMappings: [PropertyMapping(name: "text", valueExpression: "$source.text")],
                        relationshipMappings: [
                            PropertyMapping(
                                name: "book",
                                valueExpression: #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "book", $source.book)"#
                            )
                        ]))
            }
            return try MappingModel(sourceVersion: v1.versionName, destinationVersion: v2.versionName, entityMappings: mappings).validate(
                source: v1, destination: v2)
        }
        let step = MigrationStep(
            source: v1, destination: v2, passes: [try pass("price < 50", pages: false), try pass("price >= 50", pages: true)],
            isInferred: false, origins: ["cheap", "dear"])
        let output = directory.path("split-out.sqlite")
        let report = try StepRunner.run(
            step.planned(with: .builtIn), from: source, to: output, options: MigrationOptions(batchSize: 33, registry: .builtIn))
        let old = try Connection(path: source, configuration: .init(mode: .readOnly))
        let new = try Connection(path: output, configuration: .init(mode: .readOnly))
        #expect(
            report.mappings.map(\.selected) == [
                Int(try old.scalar("SELECT count(*) FROM ZBOOK WHERE ZPRICE < 50")!.int64!),
                Int(try old.scalar("SELECT count(*) FROM ZBOOK WHERE ZPRICE >= 50")!.int64!), 400,
            ])
        // Each page points at the new book made from its old book, whichever pass made it.
        #expect(
            try rows(old, "SELECT p.ZTEXT, b.ZTITLE FROM ZPAGE p LEFT JOIN ZBOOK b ON b.Z_PK = p.ZBOOK ORDER BY p.Z_PK")
                == rows(new, "SELECT p.ZTEXT, b.ZTITLE FROM ZPAGE p LEFT JOIN ZBOOK b ON b.Z_PK = p.ZBOOK ORDER BY p.Z_PK"))
        #expect(try new.scalar("SELECT count(*) FROM ZBOOK") == .integer(400))
    }
}

@Suite("The Events example's date text")
struct PrintedDateTests {
    @Test("matches DateFormatter with the POSIX locale in UTC, for dates across four centuries")
    func matchesDateFormatter() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        var seconds = -3_000_000_000.5
        while seconds < 3_000_000_000 {
            #expect(EventsExample.PrintedDatePolicy.printed(seconds) == formatter.string(from: Date(timeIntervalSinceReferenceDate: seconds)), "\(seconds)")
            seconds += 12_345_678.9
        }
    }
}
