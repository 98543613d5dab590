import Foundation
import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
import TernMapping
import TernModel
import TernStore
import TernGenerate
import TernSQLite
import TernTesting

/// The route a migration takes is Core Data's: the app's mapping model for the pair, else its
/// mapping models where they lie on the way (by content), else one inferred mapping — and no
/// order of version names enters it.
@Suite("Core Data's route between versions")
struct VersionRouteTests {
    /// Cyface's 13 versions are named `CyfaceModel`, `2` … `13`: by name, the first sorts last.
    /// It ships mapping models for 3 → 4, 7 → 8 and 10 → 11.
    static let cyface = URL(fileURLWithPath: Fixtures.path("../apps/cyface-de__ios-backend/DataCapturing/Sources/DataCapturing"))
    static let cyfaceModel = cyface.appendingPathComponent("Model/CyfaceModel.xcdatamodeld").path

    private static func hops(_ steps: [MigrationStep]) -> [String] {
        steps.map { "\($0.source.versionName) → \($0.destination.versionName)\($0.isInferred ? "" : " (mapping)")" }
    }

    private static func route(from: String, to: String, _ choice: RouteChoice = .coreData) throws -> (steps: [String], reason: String) {
        let model = try ModelLoader.load(cyfaceModel)
        let (steps, reason) = try MigrationPlanner.chain(
            in: model, from: from, to: to, mappingFiles: MigrationPlanner.mappingFiles(for: model), choice: choice, now: 0)
        return (hops(steps), reason)
    }

    @Test("the first version, named after the model, migrates to the current one through the app's three mapping models and nothing else")
    func cyfaceFirstToCurrent() throws {
        let (steps, reason) = try Self.route(from: "CyfaceModel", to: "13")
        #expect(
            steps == [
                "CyfaceModel → 3", "3 → 4 (mapping)", "4 → 7", "7 → 8 (mapping)", "8 → 10", "10 → 11 (mapping)", "11 → 13",
            ])
        #expect(reason.contains("lie on the way"))
    }

    @Test("a mapping model that does not lie on the way is not taken: 5 → 6 is one inferred mapping, as Core Data infers it")
    func mappingOffTheWay() throws {
        let (steps, reason) = try Self.route(from: "5", to: "6")
        #expect(steps == ["5 → 6"])
        #expect(reason.contains("none of the app's lies on the way") && reason.contains("3 → 4"), "\(reason)")
        #expect(try Self.route(from: "3", to: "4").steps == ["3 → 4 (mapping)"])
    }

    @Test(
        "step by step goes through every version between, by content, keeping the app's mapping models; one that adds what the next removes is a detour, taken only when named"
    )
    func cyfaceStepByStep() throws {
        let (steps, _) = try Self.route(from: "CyfaceModel", to: "13", .stepByStep)
        // Version 9 adds directionsCount and rotationsCount, which 10 removes: by content it
        // does not lie between 8 and 13.
        #expect(
            steps == [
                "CyfaceModel → 2", "2 → 3", "3 → 4 (mapping)", "4 → 5", "5 → 6", "6 → 7", "7 → 8 (mapping)", "8 → 10",
                "10 → 11 (mapping)", "11 → 12", "12 → 13",
            ])
        #expect(try Self.route(from: "8", to: "10", .through(["9"])).steps == ["8 → 9", "9 → 10"])
    }

    @Test("--through names the versions to pass, each leg by Core Data's route")
    func through() throws {
        #expect(try Self.route(from: "CyfaceModel", to: "3", .through(["2"])).steps == ["CyfaceModel → 2", "2 → 3"])
        let error = try #require(throws: TernError.self) { try Self.route(from: "CyfaceModel", to: "3", .through(["nope"])) }
        #expect(error.message.contains("no version nope"))
    }

    @Test("a version named later migrates to one named earlier: names carry no order (no 'downgrade' refusal)")
    func namesCarryNoOrder() throws {
        let folder = try TemporaryDirectory()
        let model = try folder.model([
            "model.yaml": "name: N\ncurrent: A\nversions: [z.yaml, a.yaml]\n",
            "z.yaml": "version: Z\nentities:\n  P:\n    attributes: { name: string }\n",
            "a.yaml": "version: A\nentities:\n  P:\n    attributes: { name: string, age: integer32 }\n",
        ])
        let (steps, reason) = try MigrationPlanner.chain(in: model, from: "Z", to: "A", mappingFiles: [], now: 0)
        #expect(Self.hops(steps) == ["Z → A"])
        #expect(reason.hasPrefix("Core Data's: no mapping model from Z to A"))
    }

    /// V1 {a}, V2 {a, b}, V3 {a, b, c}, V4 {a, b, c, d}: the review's case.
    private static func growing() throws -> (VersionedModel, TemporaryDirectory) {
        let folder = try TemporaryDirectory()
        var files = ["model.yaml": "name: G\ncurrent: G 4\nversions: [v1.yaml, v2.yaml, v3.yaml, v4.yaml]\n"]
        for version in 1...4 {
            let attributes = ["a", "b", "c", "d"].prefix(version).map { "\($0): string" }.joined(separator: ", ")
            files["v\(version).yaml"] = "version: G \(version)\nentities:\n  E:\n    attributes: { \(attributes) }\n"
        }
        return (try folder.model(files), folder)
    }

    @Test("a mapping model from an older version is not reached by stepping back: an inferred hop never drops what both ends keep")
    func neverBackwards() throws {
        let (model, folder) = try Self.growing()
        defer { withExtendedLifetime(folder) {} }
        var old = try MappingInference.infer(from: model.version(named: "G 1")!, to: model.version(named: "G 4")!)
        old.sourceVersion = "G 1"
        old.destinationVersion = "G 4"
        let (steps, _) = try MigrationPlanner.chain(in: model, from: "G 2", to: "G 4", mappingFiles: [], models: [old], now: 0)
        #expect(Self.hops(steps) == ["G 2 → G 4"])
        #expect(
            Self.hops(try MigrationPlanner.chain(in: model, from: "G 1", to: "G 4", mappingFiles: [], models: [old], now: 0).steps) == ["G 1 → G 4 (mapping)"])
    }

    @Test("step by step never passes through a version that lacks a property both ends have")
    func stagedKeepsWhatBothEndsHave() throws {
        let folder = try TemporaryDirectory()
        let model = try folder.model([
            "model.yaml": "name: S\ncurrent: S 3\nversions: [v1.yaml, v2.yaml, v3.yaml]\n",
            "v1.yaml": "version: S 1\nentities:\n  E:\n    attributes: { name: string }\n",
            "v2.yaml": "version: S 2\nentities:\n  E:\n    attributes: { name: { type: string, optional: false, default: x }, score: integer16 }\n",
            "v3.yaml": "version: S 3\nentities:\n  E:\n    attributes: { name: string, score: integer32 }\n",
        ])
        let (steps, _) = try MigrationPlanner.chain(in: model, from: "S 2", to: "S 3", mappingFiles: [], choice: .stepByStep, now: 0)
        #expect(Self.hops(steps) == ["S 2 → S 3"])
    }

    @Test("an intermediate version Core Data never infers through does not stop the one inferred mapping from the source to the target")
    func unmatchedRenamingIdentifierInBetween() throws {
        // Version 2 gives P an attribute whose renaming identifier matches nothing in version
        // 1: inferring 1 → 2 alone is fine, but Tern once refused such hops; Core Data infers
        // 1 → 3 directly and never looks at 2.
        let folder = try TemporaryDirectory()
        let model = try folder.model([
            "model.yaml": "name: R\ncurrent: R 3\nversions: [v1.yaml, v2.yaml, v3.yaml]\n",
            "v1.yaml": "version: R 1\nentities:\n  P:\n    attributes: { name: string }\n",
            "v2.yaml": "version: R 2\nentities:\n  Q:\n    renamingIdentifier: Nothing\n    attributes: { name: string }\n",
            "v3.yaml": "version: R 3\nentities:\n  P:\n    attributes: { name: string, age: integer32 }\n",
        ])
        let (steps, _) = try MigrationPlanner.chain(in: model, from: "R 1", to: "R 3", mappingFiles: [], now: 0)
        #expect(Self.hops(steps) == ["R 1 → R 3"])
    }
}

/// Models Xcode compiles load as Core Data loads them.
@Suite("Models Xcode compiles")
struct XcodeQuirkTests {
    private static func model(attribute: String) throws -> (VersionedModel?, String?) {
        let folder = try TemporaryDirectory()
        let bundle = folder.url.appendingPathComponent("M.xcdatamodeld/M.xcdatamodel")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="P" representedClassName="P">
                <attribute name="name" optional="YES" attributeType="String"/>
                \(attribute)
            </entity>
        </model>
        """.write(to: bundle.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        do {
            return (try ModelLoader.load(folder.url.appendingPathComponent("M.xcdatamodeld").path), nil)
        } catch {
            return (nil, "\(error)")
        }
    }

    @Test("a transient attribute without a type (Xcode's Undefined) loads, hashed as Core Data hashes the entity, without it")
    func typelessTransient() throws {
        let (model, error) = try Self.model(attribute: #"<attribute name="cache" optional="YES" transient="YES"/>"#)
        let loaded = try #require(model, "\(error ?? "")")
        let (plain, _) = try Self.model(attribute: "")
        #expect(loaded.current.entity(named: "P")?.attribute(named: "cache")?.type == .undefined)
        #expect(loaded.current.versionHashes == plain?.current.versionHashes)
    }

    @Test(
        "a to-one whose inverse names another relationship as its own loads with a warning, as Core Data loads it: a to-one of its own, hashed with the inverse it names; its links migrate"
    )
    func unreciprocatedInverse() async throws {
        let folder = try TemporaryDirectory()
        let model = { (version: String, extra: String) in
            """
            version: \(version)
            entities:
              Image:
                attributes: { name: string\(extra) }
                relationships:
                  artist: { destination: Artist, inverse: thumbnail }
                  thumbnailOf: { destination: Artist, inverse: thumbnail }
              Artist:
                attributes: { name: string }
                relationships:
                  thumbnail: { destination: Image, inverse: thumbnailOf }
            """
        }
        let loaded = try folder.model([
            "model.yaml": "name: A\ncurrent: A 2\nversions: [v1.yaml, v2.yaml]\n", "v1.yaml": model("A 1", ""), "v2.yaml": model("A 2", ", size: integer32"),
        ])
        let image = try #require(loaded.current.entity(named: "Image"))
        #expect(image.relationship(named: "artist")?.inverse == nil && image.relationship(named: "artist")?.unreciprocatedInverse == "thumbnail")
        #expect(image.relationship(named: "thumbnailOf")?.inverse == "thumbnail")
        #expect(loaded.warnings(for: ["A 1"]).contains { $0.contains("relationship artist: its inverse Artist.thumbnail names thumbnailOf as its own") })
        // Hashed with the inverse it names, as Core Data hashes it.
        var renamed = image.relationship(named: "artist")!
        renamed.unreciprocatedInverse = nil
        #expect(VersionHash.of(renamed) != VersionHash.of(image.relationship(named: "artist")!))
        let store = try TestStore(model: loaded, version: "A 1") { store in
            let artist = try store.insert("Artist", ["name": .text("a")])
            _ = try store.insert("Image", ["name": .text("i")], relating: ["artist": artist])
        }
        let migrated = try await store.migrated()
        #expect(try migrated.objects("Image").count == 1)
        let connection = try Connection(path: migrated.path, configuration: .init(mode: .readOnly))
        #expect(try connection.scalar("SELECT count(*) FROM ZIMAGE WHERE ZARTIST IS NOT NULL") == .integer(1))
    }

    @Test("a stored attribute without a type is refused, naming it, as Xcode refuses it")
    func typelessStored() throws {
        let (model, error) = try Self.model(attribute: #"<attribute name="cache" optional="YES"/>"#)
        #expect(model == nil)
        #expect(error?.contains("attribute cache: a stored attribute needs a type") == true, "\(error ?? "")")
    }
}

@Suite("Model quirks are said once")
struct ModelWarningTests {
    @Test("a quirk every version repeats is one warning naming the versions; restricted to the versions a command uses, the others' are not said")
    func onceForTheVersionsUsed() {
        let quirk = "entity P, attribute on: defaultValueString \"YES\" is not an integer; read as 0, as Xcode's model compiler reads it"
        let model = VersionedModel(
            name: "M", versions: [], currentVersionName: "3", path: "/m",
            warnings: ["1", "2", "3", "4", "5"].map { ModelWarning(version: $0, file: "/m/\($0)/contents", message: quirk) }
                + [ModelWarning(version: "1", file: "/m/1/contents", message: "another")])
        #expect(model.warnings(for: nil) == ["\(quirk) (in 1, 2, 3 and 2 more versions of M)", "/m/1/contents: another"])
        #expect(model.warnings(for: ["3"]) == ["/m/3/contents: \(quirk)"])
        #expect(model.warnings(for: ["2", "3"]) == ["\(quirk) (in 2, 3 versions of M)"])
        #expect(model.warnings(for: ["9"]).isEmpty)
    }
}

/// Recognition when a store's metadata and its tables disagree: the tables are what is read.
@Suite("Metadata naming another version than the tables")
struct MetadataDisagreementTests {
    @Test(
        "hashes of an older version over the current version's tables: read as the current version, and a migration rewrites the metadata, never 'compatible'")
    func currentTablesOlderHashes() throws {
        let directory = try TemporaryDirectory()
        let model = try ModelLoader.load(Configs.path("bookstore"))
        let store = directory.path("books.sqlite")
        _ = try DataGenerator.generate(model: model.current, at: store, rows: 5, seed: 1)
        let connection = try Connection(path: store, configuration: .init(mode: .readOnly))
        var metadata = try StoreMetadata.read(from: connection, path: store)
        metadata.versionHashes = model.version(named: "BookStore 3")!.versionHashes.mapValues(VersionHash.hex)
        let match = VersionMatch.find(in: model, metadata: metadata, signature: try LayoutSignature(connection: connection))
        try connection.close()
        #expect(match.verdict == .migrationNeeded(from: "BookStore 5", to: "BookStore 5", evidence: .schema))
        #expect(match.metadataDisagrees)
        #expect(match.notes.first?.contains("carries BookStore 3's version hashes, but its tables are BookStore 5's") == true, "\(match.notes)")
    }
}
