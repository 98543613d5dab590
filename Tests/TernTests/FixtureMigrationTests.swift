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

/// Real Core Data stores migrated to their models' later versions, checked row by row.
@Suite("Migrating the real Core Data stores")
struct FixtureMigrationTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Copies the fixture store (and its -wal) away, migrates it with `--out`, and opens both.
    /// The returned `reader` owns the snapshot `source` may read from: keep it while reading.
    private func migrate(_ store: String, withWAL: Bool = false, model path: String, to target: String? = nil) throws -> (
        source: Connection, migrated: Connection, report: StoreMigration.Report, reader: ReadOnlyStore
    ) {
        let files = withWAL ? [store, store + "-wal"] : [store]
        let copy = try Fixtures.copy(files, into: directory.url)
        let before = try Data(contentsOf: URL(fileURLWithPath: copy))
        let model = try ModelLoader.load(Fixtures.path(path))
        let migration = StoreMigration(store: copy, model: model, options: MigrationOptions(batchSize: 3, registry: FixturePolicies.registry))
        let output = directory.path("migrated.sqlite")
        let report = try migration.runBlocking(try migration.plan(to: target), output: output)
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == before)
        let reader = try ReadOnlyStore(path: copy)
        let migrated = try Connection(path: output, configuration: .init(mode: .readOnly))
        #expect(try migrated.scalar("PRAGMA integrity_check") == .text("ok"))
        #expect(
            try VersionMatch.find(in: model, storeAt: output).verdict
                == (target ?? model.currentVersionName == model.currentVersionName
                    ? .compatible(version: model.currentVersionName, evidence: .appleHashes)
                    : .migrationNeeded(from: target!, to: model.currentVersionName, evidence: .appleHashes)))
        return (try reader.connect(), migrated, report, reader)
    }

    @Test("wibosco store 1 → model 4: color renamed hexColor, content moved into a section by the policy, softDeleted defaulted")
    func wibosco() throws {
        let (source, migrated, report, _) = try migrate(
            "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_1.sqlite",
            model: FixtureStore.wibosco)
        #expect(report.plan.steps.map(\.isInferred) == [true, false, true])
        #expect(
            try rows(source, "SELECT Z_PK, ZPOSTID, ZCOLOR, ZDATE FROM ZPOST ORDER BY Z_PK")
                == rows(migrated, "SELECT Z_PK, ZPOSTID, ZHEXCOLOR, ZDATE FROM ZPOST ORDER BY Z_PK"))
        #expect(
            try rows(source, "SELECT Z_PK, substr(ZCONTENT, 1, 4) || '...', ZCONTENT, 0 FROM ZPOST WHERE ZCONTENT IS NOT NULL ORDER BY Z_PK")
                == rows(migrated, "SELECT ZPOST, ZTITLE, ZBODY, ZINDEX FROM ZSECTION ORDER BY ZPOST"))
        #expect(try migrated.scalar("SELECT count(*) FROM ZPOST WHERE ZSOFTDELETED IS NOT 0") == .integer(0))
        #expect(try migrated.scalar("SELECT count(*) FROM ZPOST") == .integer(10))
    }

    @Test("CoreDataPlus SampleModel V1 → V3: ExpensiveSportCar renamed LuxuryCar, makers become shared Maker objects")
    func sampleModel() throws {
        let (source, migrated, report, _) = try migrate(
            "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite",
            model: FixtureStore.sampleModel, to: "SampleModel3")
        #expect(report.plan.steps.map(\.isInferred) == [true, false])
        // Policy mappings give cars new keys; each car (by its unique plate) keeps its entity, model
        // and owner, and its maker name is now a Maker object.
        #expect(
            try rows(
                source,
                "SELECT c.ZNUMBERPLATE, p.Z_NAME, c.ZMODEL, c.ZOWNER, c.ZMAKER FROM ZCAR c JOIN Z_PRIMARYKEY p ON p.Z_ENT = c.Z_ENT ORDER BY c.ZNUMBERPLATE"
            )
            .map { $0.replacingOccurrences(of: "'ExpensiveSportCar'", with: "'LuxuryCar'") }
                == rows(
                    migrated,
                    "SELECT c.ZNUMBERPLATE, p.Z_NAME, c.ZMODEL, c.ZOWNER, m.ZNAME FROM ZCAR c JOIN Z_PRIMARYKEY p ON p.Z_ENT = c.Z_ENT LEFT JOIN ZMAKER m ON m.Z_PK = c.ZCREATEDBY ORDER BY c.ZNUMBERPLATE"
                ))
        #expect(try migrated.scalar("SELECT count(*) FROM ZCAR") == .integer(125))
        #expect(try migrated.scalar("SELECT count(*) FROM ZMAKER") == source.scalar("SELECT count(DISTINCT ZMAKER) FROM ZCAR"))
        #expect(try migrated.scalar("SELECT count(*) FROM ZMAKER") == .integer(10))
        #expect(
            try rows(source, "SELECT Z_PK, ZFIRSTNAME, ZLASTNAME FROM ZPERSON ORDER BY Z_PK")
                == rows(migrated, "SELECT Z_PK, ZFIRSTNAME, ZLASTNAME FROM ZPERSON ORDER BY Z_PK"))
    }

    @Test(
        "a compiled mapping model (.cdm, what an app ships) equals the .xcmappingmodel it came from: the same mappings, the same refusal of its app policy, the same migrated store once the policy is given"
    )
    func compiledMapping() throws {
        let base = "alemar11__CoreDataPlus/Tests/Resources/SampleModel"
        let model = try ModelLoader.load(Fixtures.path(FixtureStore.sampleModel))
        let (v2, v3) = (try #require(model.version(named: "SampleModel2")), try #require(model.version(named: "SampleModel3")))
        let compiled = try MappingLoader.read(Fixtures.path(base + "/Fixtures/V2toV3.cdm"), source: v2, destination: v3)
        let xml = try MappingLoader.read(Fixtures.path(base + "/MappingModels/V2toV3.xcmappingmodel"), source: v2, destination: v3)
        #expect(compiled.entityMappings.map(\.name) == xml.entityMappings.map(\.name))
        for (a, b) in zip(compiled.entityMappings, xml.entityMappings) {
            #expect(a.type == b.type && a.sourceEntity == b.sourceEntity && a.destinationEntity == b.destinationEntity && a.policy == b.policy, "\(a.name)")
            #expect(a.attributeMappings == b.attributeMappings, "\(a.name)")
            #expect(a.relationshipMappings == b.relationshipMappings, "\(a.name)")
        }
        // Planned and run through each: the policy is the app's, refused by name without it; with
        // the port registered, the same store.
        var stores: [[String: [String]]] = []
        for mapping in [base + "/Fixtures/V2toV3.cdm", base + "/MappingModels/V2toV3.xcmappingmodel"] {
            let folder = directory.url.appendingPathComponent(UUID().uuidString)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let copy = try Fixtures.copy([base + "/Fixtures/SampleModel_V1.sqlite"], into: folder)
            let refused = StoreMigration(store: copy, model: model)
            _ = try requireUnderlying(TernError.self) { _ = try refused.plan(to: "SampleModel3", mappingFiles: [Fixtures.path(mapping)]) }
            let migration = StoreMigration(store: copy, model: model, options: MigrationOptions(registry: FixturePolicies.registry))
            let plan = try migration.plan(to: "SampleModel3", mappingFiles: [Fixtures.path(mapping)])
            #expect(plan.steps.last?.origins == [Fixtures.path(mapping)])
            let output = copy + ".out"
            _ = try migration.runBlocking(plan, output: output)
            stores.append(try StoreContent.dump(output, model: v3, appValues: true))
        }
        #expect(stores[0] == stores[1])
        // Beside a .momd, as an app bundle keeps them, the .cdm is found without being named.
        let momd = try ModelLoader.load(Fixtures.path(base + "/Fixtures/SampleModel.momd"))
        #expect(MigrationPlanner.mappingFiles(for: momd) == [Fixtures.path(base + "/Fixtures/V2toV3.cdm")])

        // An app bundle given as the model: its .momd is read and its .cdm found, at the top
        // (iOS) or in Contents/Resources (macOS).
        for resources in ["", "Contents/Resources/"] {
            let app = directory.url.appendingPathComponent("Sample-\(resources.isEmpty ? "ios" : "macos").app")
            try FileManager.default.createDirectory(at: app.appendingPathComponent(resources), withIntermediateDirectories: true)
            for file in ["SampleModel.momd", "V2toV3.cdm"] {
                try FileManager.default.copyItem(atPath: Fixtures.path(base + "/Fixtures/" + file), toPath: app.path + "/" + resources + file)
            }
            let bundled = try ModelLoader.load(app.path)
            #expect(bundled.versions == momd.versions && bundled.currentVersionName == momd.currentVersionName)
            #expect(MigrationPlanner.mappingFiles(for: bundled).map { URL(fileURLWithPath: $0).lastPathComponent } == ["V2toV3.cdm"])
            try FileManager.default.createDirectory(at: app.appendingPathComponent("store"), withIntermediateDirectories: true)
            let copy = try Fixtures.copy([base + "/Fixtures/SampleModel_V1.sqlite"], into: app.appendingPathComponent("store"))
            let refusal = try requireUnderlying(TernError.self) { _ = try StoreMigration(store: copy, model: bundled).plan(to: "SampleModel3") }
            #expect(refusal.message.contains("names the migration policy REPLACE_AT_RUNTIME.V2to3MakerPolicy, which is not registered"), "\(refusal.message)")
        }
        let two = directory.url.appendingPathComponent("Two.app")
        try FileManager.default.createDirectory(at: two, withIntermediateDirectories: true)
        for name in ["A.momd", "B.momd"] {
            try FileManager.default.copyItem(atPath: Fixtures.path(base + "/Fixtures/SampleModel.momd"), toPath: two.path + "/" + name)
        }
        let several = try #require(throws: TernError.self) { try ModelLoader.load(two.path) }
        #expect(several.message.contains("several compiled models (A.momd, B.momd)"), "\(several.message)")
        // One at the top and one in Contents/Resources are several too; a .momd file is no model.
        let both = directory.url.appendingPathComponent("Both.app")
        try FileManager.default.createDirectory(at: both.appendingPathComponent("Contents/Resources"), withIntermediateDirectories: true)
        for name in ["A.momd", "Contents/Resources/B.momd"] {
            try FileManager.default.copyItem(atPath: Fixtures.path(base + "/Fixtures/SampleModel.momd"), toPath: both.path + "/" + name)
        }
        #expect(
            try #require(throws: TernError.self) { try ModelLoader.load(both.path) }.message.contains(
                "several compiled models (A.momd, Contents/Resources/B.momd)"))
        let file = directory.url.appendingPathComponent("File.app")
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: file.path + "/X.momd", contents: Data("x".utf8))
        let notModel = try #require(throws: TernError.self) { try ModelLoader.load(file.path) }
        #expect(notModel.kind == .badInput && notModel.message.hasPrefix("not a compiled model"), "\(notModel)")
    }

    @Test("CoreDataPlus SampleModel3 V1 → v3 through v2, inferred")
    func sampleModel3() throws {
        let (source, migrated, report, _) = try migrate(
            "alemar11__CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite",
            model: FixtureStore.sampleModel3, to: "SampleModel3_v3")
        #expect(report.plan.steps.map { "\($0.source.versionName) → \($0.destination.versionName)" } == ["SampleModel3 → SampleModel3_v3"])
        #expect(try migrated.scalar("SELECT count(*) FROM ZUSER") == source.scalar("SELECT count(*) FROM ZUSER"))
        #expect(try migrated.scalar("SELECT count(*) FROM ZUSER") == .integer(12))
    }

    @Test("DuckDuckGo Bookmarks V3 → V6, rows only in the -wal: folders, ordered children and favourites arrive in order")
    func bookmarks() throws {
        let (source, migrated, report, reader) = try migrate(
            "duckduckgo__BrowserServicesKit/Tests/BookmarksTests/Resources/Bookmarks_V3.sqlite", withWAL: true,
            model: FixtureStore.bookmarks)
        defer { withExtendedLifetime(reader) {} }  // its snapshot holds the source's -wal rows
        #expect(report.plan.steps.map { "\($0.source.versionName) → \($0.destination.versionName)" } == ["BookmarksModel 3 → BookmarksModel 6"])
        #expect(
            try rows(source, "SELECT Z_PK, ZUUID, ZTITLE, ZURL, ZISFOLDER, ZPARENT FROM ZBOOKMARKENTITY ORDER BY Z_PK")
                == rows(migrated, "SELECT Z_PK, ZUUID, ZTITLE, ZURL, ZISFOLDER, ZPARENT FROM ZBOOKMARKENTITY ORDER BY Z_PK"))
        #expect(try migrated.scalar("SELECT count(*) FROM ZBOOKMARKENTITY") == .integer(10))
        // Children keep their order under their parent.
        #expect(
            try rows(source, "SELECT ZPARENT, Z_PK FROM ZBOOKMARKENTITY WHERE ZPARENT IS NOT NULL ORDER BY ZPARENT, Z_FOK_PARENT")
                == rows(migrated, "SELECT ZPARENT, Z_PK FROM ZBOOKMARKENTITY WHERE ZPARENT IS NOT NULL ORDER BY ZPARENT, Z_FOK_PARENT"))
        // The to-one favoriteFolder became the many-to-many favoriteFolders; favourites keep their order.
        #expect(
            try rows(
                source, "SELECT ZFAVORITEFOLDER, Z_PK FROM ZBOOKMARKENTITY WHERE ZFAVORITEFOLDER IS NOT NULL ORDER BY ZFAVORITEFOLDER, Z_FOK_FAVORITEFOLDER")
                == rows(migrated, "SELECT Z_1FAVORITEFOLDERS, Z_1FAVORITES FROM Z_1FAVORITES ORDER BY Z_1FAVORITEFOLDERS, Z_FOK_1FAVORITES"))
        #expect(try !rows(migrated, "SELECT * FROM Z_1FAVORITES").isEmpty)
    }

    @Test("BookMigration Model1 → Model3 with its three mapping models: authors and users become many-to-many, file URLs become File objects")
    func bookMigration() throws {
        let (source, migrated, report, _) = try migrate("hwaxxer__BookMigration/BookMigration/Model1.sqlite", model: FixtureStore.bookMigration)
        #expect(report.plan.steps.map { $0.passes.count } == [1, 2])
        #expect(try rows(source, "SELECT ZTITLE FROM ZBOOK ORDER BY Z_PK") == rows(migrated, "SELECT ZTITLE FROM ZBOOK ORDER BY Z_PK"))
        // One Author per distinct name, linked to that author's books.
        #expect(
            try rows(source, "SELECT ZTITLE, ZAUTHORNAME FROM ZBOOK ORDER BY ZTITLE")
                == rows(
                    migrated,
                    "SELECT b.ZTITLE, a.ZNAME FROM ZBOOK b JOIN Z_1BOOKS j ON j.Z_2BOOKS = b.Z_PK JOIN ZAUTHOR a ON a.Z_PK = j.Z_1AUTHORS ORDER BY b.ZTITLE"))
        #expect(try migrated.scalar("SELECT count(*) FROM ZAUTHOR") == .integer(3))
        // Each file URL moved into a File of its book, byte for byte.
        #expect(try migrated.scalar("SELECT count(*) FROM ZFILE") == source.scalar("SELECT count(*) FROM ZBOOK WHERE ZFILEURL IS NOT NULL"))
        #expect(
            try rows(source, "SELECT ZTITLE, hex(ZFILEURL) FROM ZBOOK ORDER BY ZTITLE")
                == rows(migrated, "SELECT b.ZTITLE, hex(f.ZFILEURL) FROM ZFILE f JOIN ZBOOK b ON b.Z_PK = f.ZBOOK ORDER BY b.ZTITLE"))
        #expect(try migrated.scalar("SELECT count(*) FROM ZUSER") == .integer(3))
    }
    /// The fixture migrations above, by their store, model and target.
    static let cases: [(store: String, withWAL: Bool, model: String, target: String?)] = [
        (
            "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_1.sqlite", false,
            FixtureStore.wibosco, nil
        ),
        ("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite", false, FixtureStore.sampleModel, "SampleModel3"),
        ("alemar11__CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite", false, FixtureStore.sampleModel3, "SampleModel3_v3"),
        ("duckduckgo__BrowserServicesKit/Tests/BookmarksTests/Resources/Bookmarks_V3.sqlite", true, FixtureStore.bookmarks, nil),
        ("hwaxxer__BookMigration/BookMigration/Model1.sqlite", false, FixtureStore.bookMigration, nil),
    ]

    /// Migrates the fixture case `index` two ways; expects the same content from both, and some.
    private func expectSameContent(_ index: Int, _ first: MigrationOptions, _ second: MigrationOptions) throws {
        let fixture = Self.cases[index]
        let files = fixture.withWAL ? [fixture.store, fixture.store + "-wal"] : [fixture.store]
        let copy = try Fixtures.copy(files, into: directory.url)
        let model = try ModelLoader.load(Fixtures.path(fixture.model))
        let contents = try [first, second].enumerated().map { number, options in
            let migration = StoreMigration(store: copy, model: model, options: options)
            let plan = try migration.plan(to: fixture.target)
            let output = directory.path("way-\(number).sqlite")
            _ = try migration.runBlocking(plan, output: output)
            return try StoreContent.dump(output, model: model.version(named: plan.targetVersion)!)
        }
        #expect(contents[0].values.contains { !$0.isEmpty })
        for key in Set(contents[0].keys).union(contents[1].keys).sorted() {
            #expect(contents[0][key] == contents[1][key], "\(key)")
        }
    }

    @Test("every real store migrates to the same content by Core Data's route and step by step", arguments: 0..<5)
    func coreDataRouteEqualsStepByStep(_ index: Int) throws {
        var stepByStep = MigrationOptions(batchSize: 2, workers: 2, registry: FixturePolicies.registry)
        stepByStep.route = .stepByStep
        try expectSameContent(index, MigrationOptions(batchSize: 2, workers: 2, registry: FixturePolicies.registry), stepByStep)
    }

    @Test("every real store migrates to the same content with every mapping forced through Swift", arguments: 0..<5)
    func forcedSwift(_ index: Int) throws {
        try expectSameContent(
            index, MigrationOptions(batchSize: 2, workers: 2, registry: FixturePolicies.registry),
            MigrationOptions(batchSize: 2, workers: 2, registry: FixturePolicies.registry.sendingEveryMappingThroughSwift()))
    }
}
