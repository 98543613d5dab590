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

/// Compiled models (`.mom`, `.momd`) decode to the model their Xcode sources describe: checked
/// against what Apple's compiler wrote for every fixture, by Tern's version hashes and the store
/// layout, and refused clearly when they are not models.
@Suite("Compiled models: .mom and .momd")
struct CompiledModelTests {
    /// The fixture bundles: compiled, and the Xcode source they were compiled from.
    static let bundles = [
        (
            "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd",
            "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld"
        ),
        (
            "alemar11__CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3.momd",
            "alemar11__CoreDataPlus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld"
        ),
    ]

    /// Per entity, Tern's version hash; and the tables a store of the version has.
    private static func fingerprint(_ version: ObjectModel) -> (hashes: [String: String], tables: [String]) {
        (
            version.versionHashes.mapValues(VersionHash.hex),
            StoreLayout(model: version).createTableStatements.sorted()
        )
    }

    /// Uniqueness constraints in a canonical order: neither Core Data nor Xcode keeps one.
    private static func constraints(_ entity: Entity) -> [String] {
        entity.uniquenessConstraints.map { $0.sorted().joined(separator: ",") }.sorted()
    }

    @Test("every .mom of the fixtures equals its Xcode version: entities, hashes, tables, identifiers, constraints, indexes", arguments: bundles)
    func equalsSource(compiled: String, source: String) throws {
        let momd = try ModelLoader.load(Fixtures.path(compiled))
        let xcode = try ModelLoader.load(Fixtures.path(source))
        #expect(momd.versions.map(\.versionName) == xcode.versions.map(\.versionName))
        #expect(momd.currentVersionName == xcode.currentVersionName)
        for version in xcode.versions {
            let decoded = try #require(momd.version(named: version.versionName))
            #expect(decoded.entities.map(\.name) == version.entities.map(\.name))
            let (hashes, tables) = Self.fingerprint(decoded)
            let (expectedHashes, expectedTables) = Self.fingerprint(version)
            #expect(hashes == expectedHashes, "\(version.versionName)")
            #expect(tables == expectedTables, "\(version.versionName)")
            #expect(decoded.versionIdentifiers == version.versionIdentifiers)
            for entity in version.entities {
                let other = try #require(decoded.entity(named: entity.name))
                #expect(Self.constraints(other) == Self.constraints(entity), "\(entity.name)")
                #expect(other.fetchIndexes.map(\.properties) == entity.fetchIndexes.map(\.properties), "\(entity.name)")
                #expect(other.renamingIdentifier == entity.renamingIdentifier, "\(entity.name)")
                for attribute in entity.attributes {
                    let decodedAttribute = try #require(other.attributes.first { $0.name == attribute.name })
                    #expect(decodedAttribute.defaultValue == attribute.defaultValue, "\(entity.name).\(attribute.name)")
                    #expect(decodedAttribute.valueTransformerName == attribute.valueTransformerName, "\(entity.name).\(attribute.name)")
                    #expect(decodedAttribute.validation == attribute.validation, "\(entity.name).\(attribute.name)")
                }
            }
        }
    }

    @Test("a single .mom loads as a one-version model named after the file")
    func singleMom() throws {
        let model = try ModelLoader.load(Fixtures.path("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd/SampleModel2.mom"))
        #expect(model.versions.map(\.versionName) == ["SampleModel2"])
        #expect(model.current.entity(named: "LuxuryCar")?.parent == "SportCar")
        #expect(model.current.entity(named: "LuxuryCar")?.renamingIdentifier == "ExpensiveSportCar")
    }

    @Test("not a model: garbage, a truncated archive, an archive of something else, a bundle without VersionInfo.plist — each named, never a crash")
    func badInput() throws {
        let directory = try TemporaryDirectory()
        let real = try Data(
            contentsOf: URL(fileURLWithPath: Fixtures.path("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd/SampleModel.mom")))
        let cases: [(String, Data, String)] = [
            ("garbage.mom", Data("not a model at all, not even a property list".utf8), "not a readable compiled model: not a readable binary property list"),
            ("truncated.mom", real.prefix(real.count / 2), "not a readable compiled model"),
            (
                "expression.mom",
                try Data(
                    contentsOf: URL(
                        fileURLWithPath: Fixtures.path("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd/VersionInfo.plist"))),
                "not a readable compiled model: not an NSKeyedArchiver archive"
            ),
        ]
        for (name, bytes, message) in cases {
            let path = directory.path(name)
            try bytes.write(to: URL(fileURLWithPath: path))
            let error = try #require(throws: TernError.self) { try ModelLoader.load(path) }
            #expect(error.kind == .badInput && error.path == path, "\(name)")
            #expect(error.message.hasPrefix(message), "\(name): \(error.message)")
        }
        // Every byte flipped in turn in the first kilobyte: an error or a model, never a crash.
        for offset in stride(from: 0, to: min(real.count, 1024), by: 7) {
            var bytes = [UInt8](real)
            bytes[offset] ^= 0xFF
            _ = try? CompiledModelReader.decode(bytes, versionName: "flipped")
        }

        // An entity that is its own superentity (a cycle through the archive's references).
        let cyclic = directory.path("cyclic.mom")
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        python.arguments = [
            "-c",
            """
            import plistlib, sys
            d = plistlib.load(open(sys.argv[1], 'rb')); objects = d['$objects']
            for i, o in enumerate(objects):
                if isinstance(o, dict) and 'NSSuperentity' in o and objects[o['NSEntityName'].data] == 'Car':
                    o['NSSuperentity'] = plistlib.UID(i)
            plistlib.dump(d, open(sys.argv[2], 'wb'), fmt=plistlib.FMT_BINARY)
            """, Fixtures.path("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd/SampleModel.mom"), cyclic,
        ]
        try python.run()
        python.waitUntilExit()
        let cycle = try #require(throws: TernError.self) { try ModelLoader.load(cyclic) }
        #expect(cycle.message.contains("Car") && cycle.message.contains("cycle"), "\(cycle.message)")

        // Two entities, each the other's superentity (Car above SportCar, and SportCar made Car's):
        // refused naming both, not a stack overflow in a walk down the tree.
        let twoCycle = directory.path("two-cycle.mom")
        let second = Process()
        second.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        second.arguments = [
            "-c",
            """
            import plistlib, sys
            d = plistlib.load(open(sys.argv[1], 'rb')); objects = d['$objects']
            index = {objects[o['NSEntityName'].data]: i for i, o in enumerate(objects) if isinstance(o, dict) and 'NSEntityName' in o and 'NSProperties' in o}
            objects[index['Car']]['NSSuperentity'] = plistlib.UID(index['SportCar'])
            objects[index['SportCar']]['NSSuperentity'] = plistlib.UID(index['Car'])
            plistlib.dump(d, open(sys.argv[2], 'wb'), fmt=plistlib.FMT_BINARY)
            """, Fixtures.path("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd/SampleModel.mom"), twoCycle,
        ]
        try second.run()
        second.waitUntilExit()
        #expect(second.terminationStatus == 0)
        let pair = try #require(throws: TernError.self) { try ModelLoader.load(twoCycle) }
        #expect(pair.message.contains("inheritance cycle through") && pair.message.contains("Car") && pair.message.contains("SportCar"), "\(pair.message)")

        let bundle = directory.url.appendingPathComponent("Two.momd")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        for name in ["A.mom", "B.mom"] { try real.write(to: bundle.appendingPathComponent(name)) }
        let noInfo = try #require(throws: TernError.self) { try ModelLoader.load(bundle.path) }
        #expect(noInfo.message == "several versions and no VersionInfo.plist with NSManagedObjectModel_CurrentVersionName naming the current one")
    }
}

/// The model a store carries in `Z_MODELCACHE`, read for every fixture store that has one.
@Suite("The model a store carries: Z_MODELCACHE")
struct StoreModelCacheTests {
    /// Each store with a cache, and the Xcode version that wrote it where its source is a fixture.
    static let stores: [(store: String, source: String?, version: String?)] = [
        (
            "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite",
            "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld", "SampleModel"
        ),
        (
            "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite",
            "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld", "SampleModel2"
        ),
        (
            "alemar11__CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite",
            "alemar11__CoreDataPlus/Tests/Resources/SampleModel3/SampleModel3.xcdatamodeld", "SampleModel3"
        ),
        ("alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite", nil, nil),
        (
            "duckduckgo__BrowserServicesKit/Tests/BookmarksTests/Resources/Bookmarks_V3.sqlite",
            "duckduckgo__BrowserServicesKit/Sources/Bookmarks/BookmarksModel.xcdatamodeld", "BookmarksModel 3"
        ),
        (
            "duckduckgo__BrowserServicesKit/Tests/BookmarksTests/Resources/Bookmarks_V4.sqlite",
            "duckduckgo__BrowserServicesKit/Sources/Bookmarks/BookmarksModel.xcdatamodeld", "BookmarksModel 4"
        ),
        (
            "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_1.sqlite",
            "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld",
            "CoreDataMigration_Example"
        ),
        (
            "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_2.sqlite",
            "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld",
            "CoreDataMigration_Example 2"
        ),
        (
            "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_3.sqlite",
            "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld",
            "CoreDataMigration_Example 3"
        ),
    ]

    @Test("each cache decodes to a model whose layout is the store's schema, and equals its Xcode version where that is a fixture", arguments: stores)
    func decodes(store: String, source: String?, version: String?) throws {
        let directory = try TemporaryDirectory()
        let path = try Fixtures.copy(
            [store] + (FileManager.default.fileExists(atPath: Fixtures.path(store + "-wal")) ? [store + "-wal"] : []), into: directory.url)
        let cached = try #require(try StoreModelCache.read(storeAt: path, versionName: "cached"))
        let reader = try ReadOnlyStore(path: path)  // kept: a WAL store is read from a private copy it removes
        let schema = try withExtendedLifetime(reader) { try LayoutSignature(connection: try reader.connect()) }
        #expect(
            LayoutSignature(layout: StoreLayout(model: cached)).differences(from: schema).isEmpty,
            "\(LayoutSignature(layout: StoreLayout(model: cached)).differences(from: schema))")
        guard let source, let version else { return }
        let xcode = try #require(try ModelLoader.load(Fixtures.path(source)).version(named: version))
        #expect(cached.versionHashes == xcode.versionHashes)
    }

    @Test("a store without a cache gives nil; a damaged cache is an error naming the store and Z_MODELCACHE")
    func missingAndDamaged() throws {
        let directory = try TemporaryDirectory()
        let old = try Fixtures.copy(["hwaxxer__BookMigration/BookMigration/Model1.sqlite"], into: directory.url)
        #expect(try StoreModelCache.read(storeAt: old, versionName: "x") == nil)
        let path = try Fixtures.copy(["alemar11__CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite"], into: directory.url)
        let connection = try Connection(path: path)
        try connection.execute("UPDATE Z_MODELCACHE SET Z_CONTENT = substr(Z_CONTENT, 1, length(Z_CONTENT) / 2)")
        try connection.close()
        let error = try #require(throws: TernError.self) { try StoreModelCache.read(storeAt: path, versionName: "x") }
        #expect(error.path == path && error.message.hasPrefix("Z_MODELCACHE: the cached model cannot be inflated"), "\(error)")
    }
}

/// A store Tern migrates with a `.momd` carries Core Data's own version hashes, so Core Data's
/// compatibility check passes; they are the hashes Tern computes without the plist too.
@Suite("Stores that Core Data opens: Apple's hashes in the migrated store")
struct AppleHashesTests {
    @Test("SampleModel_V1 migrated to SampleModel3 with the .momd: its hashes are VersionInfo.plist's for version 3, and both kinds of check recognise it")
    func migratedWithMomd() async throws {
        let directory = try TemporaryDirectory()
        let store = try Fixtures.copy(["alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite"], into: directory.url)
        let bundle = Fixtures.path("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd")
        let model = try ModelLoader.load(bundle)
        // The V2toV3.cdm beside the .momd is the step's mapping, as in the app's bundle; its
        // policy is the app's, given here by its port.
        let migration = StoreMigration(store: store, model: model, options: MigrationOptions(registry: FixturePolicies.registry))
        let plan = try migration.plan(to: "SampleModel3")
        #expect(plan.steps.last?.origins.first?.hasSuffix("V2toV3.cdm") == true)
        let apple = try VersionMatch.appleHashes(versionInfoAt: bundle + "/VersionInfo.plist")
        #expect(plan.targetAppleHashes == apple["SampleModel3"])
        let output = directory.path("Out.sqlite")
        _ = try await migration.run(plan, output: output)

        let metadata = try StoreMetadata.read(storeAt: output)
        #expect(metadata.versionHashes == apple["SampleModel3"])
        let version = try #require(model.version(named: "SampleModel3"))
        #expect(metadata.versionHashes == version.versionHashes.mapValues(VersionHash.hex), "the plist's hashes are the ones Tern computes")
        #expect(
            try VersionMatch.find(in: model, storeAt: output, appleHashes: apple).verdict
                == .migrationNeeded(from: "SampleModel3", to: "SampleModel", evidence: .appleHashes))
        #expect(try VersionMatch.find(in: model, storeAt: output).verdict == .migrationNeeded(from: "SampleModel3", to: "SampleModel", evidence: .appleHashes))
    }
}

extension AppleHashesTests {
    @Test("hashes of another model's version of the same name, or with an entity missing, are refused (65) before anything is written")
    func foreignHashesRefused() throws {
        let directory = try TemporaryDirectory()
        let store = try Fixtures.copy(["alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite"], into: directory.url)
        let bundle = Fixtures.path("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd")
        let migration = StoreMigration(store: store, model: try ModelLoader.load(bundle), options: MigrationOptions(registry: FixturePolicies.registry))
        var apple = try VersionMatch.appleHashes(versionInfoAt: bundle + "/VersionInfo.plist")
        let own = try #require(apple["SampleModel3"])
        apple["SampleModel3"] = ["User": own.values.first!]
        let foreign = try requireUnderlying(TernError.self) { _ = try migration.plan(to: "SampleModel3", appleHashes: apple) }
        #expect(foreign.kind == .badInput)
        #expect(
            foreign.message.contains("do not describe it: they name User, which it does not have; they lack Car, LuxuryCar, Maker, Person, SportCar"),
            "\(foreign.message)")
        apple["SampleModel3"] = own.filter { $0.key != "Maker" }
        let partial = try requireUnderlying(TernError.self) { _ = try migration.plan(to: "SampleModel3", appleHashes: apple) }
        #expect(partial.message.contains("they lack Maker"), "\(partial.message)")
        apple["SampleModel3"] = own
        #expect(try migration.plan(to: "SampleModel3", appleHashes: apple).targetAppleHashes == own)
    }
}

/// What a hostile review of the compiled-model and carried-model paths found, kept fixed.
@Suite("Versions told apart by their entities, not only their tables")
struct EntityNumberingTests {
    @Test("a version with the same tables but a subentity moved under another parent is not taken for the store's")
    func movedSubentity() throws {
        let directory = try TemporaryDirectory()
        let store = try Fixtures.copy(["alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite"], into: directory.url)
        let cached = try #require(try StoreModelCache.read(storeAt: store, versionName: "A"))
        let moved = ObjectModel(
            versionName: "B", versionIdentifiers: cached.versionIdentifiers,
            entities: cached.entities.map { entity in
                var entity = entity
                if entity.name == "ExpensiveSportCar" { entity.parent = "Car" }
                return entity
            })
        #expect(StoreLayout(model: moved).createTableStatements.sorted() == StoreLayout(model: cached).createTableStatements.sorted())

        let onlyMoved = VersionedModel(name: "M", versions: [moved], currentVersionName: "B", path: directory.path("m"))
        guard case .noMatch(_, let differences) = try VersionMatch.find(in: onlyMoved, storeAt: store).verdict else {
            Issue.record("the moved version was taken for the store's")
            return
        }
        #expect(differences.contains { $0.hasPrefix("Z_PRIMARYKEY numbers its entities otherwise") }, "\(differences)")
        let both = VersionedModel(name: "M", versions: [cached, moved], currentVersionName: "B", path: directory.path("m"))
        #expect(try VersionMatch.find(in: both, storeAt: store).verdict == .migrationNeeded(from: "A", to: "B", evidence: .appleHashes))
    }

    @Test(
        "an app's own Z… table (ZAPPSTUFF, no entity of Z_PRIMARYKEY's) is not a table of the model: recognised by schema all the same, kept by a step applied in place"
    )
    func appTableNamedLikeAnEntityTable() async throws {
        let directory = try TemporaryDirectory()
        let model = try ModelLoader.load(Configs.path("bookstore"))
        let store = directory.path("books.sqlite")
        _ = try DataGenerator.generate(model: model.versions[0], at: store, rows: 5, seed: 1)
        let connection = try Connection(path: store)
        try connection.execute("CREATE TABLE ZAPPSTUFF (Z_PK INTEGER PRIMARY KEY, ZX VARCHAR)")
        try connection.execute("INSERT INTO ZAPPSTUFF VALUES (1, 'kept')")
        var metadata = try StoreMetadata.read(from: connection, path: store)
        metadata.versionHashes = [:]  // a store without Core Data's hashes: recognised by its tables
        let match = VersionMatch.find(in: model, metadata: metadata, signature: try LayoutSignature(connection: connection))
        try connection.close()
        #expect(match.verdict == .migrationNeeded(from: "BookStore 1", to: "BookStore 5", evidence: .schema))
        let migration = StoreMigration(store: store, model: model)
        let plan = try migration.plan(to: "BookStore 2")
        _ = try await migration.run(plan)
        #expect(try Connection(path: store, configuration: .init(mode: .readOnly)).scalar("SELECT ZX FROM ZAPPSTUFF")?.text == "kept")
    }

    @Test(
        "a store with Tern's own hashes needs migrating even with Core Data's tables (to get Core Data's hashes); join tables of neither rule are no version's, and check says an earlier Tern wrote it"
    )
    func earlierTernJoinTable() throws {
        let version = ObjectModel(
            versionName: "V",
            entities: [
                Entity(name: "Note", relationships: [Relationship(name: "tags", destination: "Tag", inverse: "notes", isToMany: true)]),
                Entity(name: "Tag", relationships: [Relationship(name: "notes", destination: "Note", inverse: "tags", isToMany: true)]),
            ])
        let model = VersionedModel(name: "M", versions: [version], currentVersionName: "V", path: "m")
        let layout = StoreLayout(model: version)
        var signature = LayoutSignature(layout: layout)
        #expect(signature.joinTables.keys.sorted() == ["Z_1TAGS"])
        var metadata = StoreMetadata(versionHashes: ["Note": "00"], versionIdentifiers: [], keys: [], entities: [])
        metadata.hashScheme = "tern.v1"
        metadata.versionName = "V"
        // Tern's own hashes, so the app would refuse it: migrated (copied) to Core Data's.
        #expect(VersionMatch.find(in: model, metadata: metadata, signature: signature).verdict == .migrationNeeded(from: "V", to: "V", evidence: .earlierTern))
        // The same columns under the other side's name, as Tern named it before.
        signature.joinTables = ["Z_2NOTES": signature.joinTables["Z_1TAGS"]!]
        guard case .noMatch(_, let differences) = VersionMatch.find(in: model, metadata: metadata, signature: signature).verdict else {
            Issue.record("a join table of another name was taken for the version's")
            return
        }
        #expect(
            differences.first?.hasPrefix(
                "the store was written by an earlier Tern (TernVersionHashScheme tern.v1, version V), but its tables are no version's layout") == true,
            "\(differences)")
        #expect(differences.contains { $0.hasPrefix("the store has no join table Z_1TAGS") }, "\(differences)")
    }

    @Test("a fetch index named like its one property is made once (Bookmarks' models have one)")
    func indexNamedLikeItsProperty() throws {
        let version = ObjectModel(
            versionName: "V",
            entities: [
                Entity(name: "Note", attributes: [Attribute(name: "title", type: .string)], fetchIndexes: [FetchIndex(name: "title", properties: ["title"])])
            ])
        let names = StoreLayout(model: version).indexStatements.map { $0.split(separator: " ")[2] }
        #expect(Set(names).count == names.count, "\(names)")
        let directory = try TemporaryDirectory()
        let connection = try StoreFile.create(at: directory.path("n.sqlite"), model: version)
        let writer = try ObjectWriter(connection: connection, layout: StoreLayout(model: version))
        try writer.insert("Note", ["title": "a"])
        try writer.finish()
    }

    @Test("a cache of another model is not taken for the store's, and the error says so")
    func cacheOfAnotherModel() throws {
        let directory = try TemporaryDirectory()
        let store = try Fixtures.copy(["alemar11__CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite"], into: directory.url)
        let other = try Fixtures.copy(["alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite"], into: directory.url)
        let blob = try Connection(path: other, configuration: .init(mode: .readOnly)).scalar("SELECT Z_CONTENT FROM Z_MODELCACHE")
        let connection = try Connection(path: store)
        try connection.execute("UPDATE Z_MODELCACHE SET Z_CONTENT = ?", try #require(blob))
        try connection.close()
        #expect(try StoreModelCache.model(ofStoreAt: store) == nil)
        let error = try requireUnderlying(MigrationError.self) {
            _ = try StoreMigration(store: store, model: ModelLoader.load(Configs.path("bookstore"))).plan()
        }
        #expect("\(error)".contains("the model the store carries (Z_MODELCACHE) does not match its tables and entities either"), "\(error)")
    }

    @Test("a store migrated in place no longer carries the old version's cached model")
    func cacheDroppedInPlace() async throws {
        let directory = try TemporaryDirectory()
        let store = try Fixtures.copy(["alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite"], into: directory.url)
        let model = try ModelLoader.load(Fixtures.path("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd"))
        let migration = StoreMigration(store: store, model: model)
        _ = try await migration.run(try migration.plan(to: "SampleModel2"))
        #expect(try StoreModelCache.read(storeAt: store, versionName: "x") == nil)
        #expect(try StoreModelCache.read(storeAt: StoreMigration.backupPath(for: store), versionName: "x") != nil)
    }
}
