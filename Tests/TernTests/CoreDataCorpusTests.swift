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

/// Ground truth: every store of `shared/fixtures/*/pairs.tsv` was written by Core Data with the
/// model version named beside it. Its schema and its `NSStoreModelVersionHashes` are what Core
/// Data does; Tern's layout and hashes of that version must equal them. The expected values are
/// read from the stores themselves, never written here.
@Suite("Core Data corpus: Tern's layout and hashes equal what Core Data wrote")
struct CoreDataCorpusTests {
    /// One line of a `pairs.tsv`: a store and the model version that wrote it.
    struct Pair: CustomTestStringConvertible, Sendable {
        var corpus: URL
        var repository: String
        var store: String
        var versionDirectory: String
        var version: String

        var storePath: String { corpus.appendingPathComponent(repository).appendingPathComponent(store).path }
        var versionPath: String { corpus.appendingPathComponent(repository).appendingPathComponent(versionDirectory).path }
        /// The `.xcdatamodeld` bundle holding the version, with its siblings.
        var bundlePath: String { URL(fileURLWithPath: versionPath).deletingLastPathComponent().path }
        var testDescription: String { "\(repository) \(URL(fileURLWithPath: store).lastPathComponent) [\(version)]" }
    }

    static let corpora = ["corpus", "coredata"].map { Fixtures.root.deletingLastPathComponent().appendingPathComponent($0) }

    static let pairs: [Pair] = corpora.flatMap { corpus -> [Pair] in
        let text = (try? String(contentsOf: corpus.appendingPathComponent("pairs.tsv"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 4 else { return nil }
            return Pair(corpus: corpus, repository: fields[0], store: fields[1], versionDirectory: fields[2], version: fields[3])
        }
    }

    /// Stores written by several models merged (`NSManagedObjectModel(byMerging:)`): one model
    /// alone describes only its part of them.
    static let mergedStores: Set<String> = Dictionary(grouping: pairs, by: \.storePath).filter { $0.value.count > 1 }.keys.reduce(into: []) { $0.insert($1) }

    @Test("the corpus is here: both pairs.tsv files, 25 pairs")
    func corpusPresent() {
        #expect(Self.pairs.count == 25)
    }

    @Test("Tern computes exactly the version hashes Core Data wrote", arguments: pairs)
    func hashes(_ pair: Pair) throws {
        let metadata = try StoreMetadata.read(storeAt: pair.storePath)
        let version = try #require(try ModelLoader.load(pair.versionPath).versions.first)
        let computed = version.versionHashes.mapValues(VersionHash.hex)
        if Self.mergedStores.contains(pair.storePath) {
            // One of the merged models: its entities' hashes are the store's for those entities.
            #expect(computed == metadata.versionHashes.filter { computed.keys.contains($0.key) })
            #expect(Set(computed.keys).isSubset(of: metadata.versionHashes.keys))
        } else {
            #expect(computed == metadata.versionHashes)
            if let checksum = metadata.checksum { #expect(version.versionChecksum == checksum) }
            if let digest = metadata.digest { #expect(VersionHash.digest(version.versionHashes) == digest) }
        }
    }

    @Test(
        "tern check recognises each store by Core Data's hashes, in the whole versioned model", arguments: pairs.filter { !mergedStores.contains($0.storePath) }
    )
    func recognised(_ pair: Pair) throws {
        let model = try ModelLoader.load(pair.bundlePath)
        let match = try VersionMatch.find(in: model, storeAt: pair.storePath)
        let expected: VersionMatch.Verdict =
            pair.version == model.currentVersionName
            ? .compatible(version: pair.version, evidence: .appleHashes)
            : .migrationNeeded(from: pair.version, to: model.currentVersionName, evidence: .appleHashes)
        #expect(match.verdict == expected)
    }

    @Test(
        "the layout Tern derives is the store's schema: tables, columns in order, declared types, indexes, constraints",
        arguments: pairs.filter { !mergedStores.contains($0.storePath) })
    func schema(_ pair: Pair) throws {
        let metadata = try StoreMetadata.read(storeAt: pair.storePath)
        let version = try #require(try ModelLoader.load(pair.versionPath).versions.first)
        let layout = StoreLayout(model: version, frameworkVersion: metadata.frameworkVersion)
        let expected = try Self.schema(of: pair.storePath)
        let derived = Self.derivedSchema(layout)
        let missing = expected.subtracting(derived).sorted(), extra = derived.subtracting(expected).sorted()
        #expect(missing.isEmpty, "Core Data wrote, Tern does not derive: \(missing)")
        #expect(extra.isEmpty, "Tern derives, Core Data did not write: \(extra)")
    }

    /// Stores whose carried model (`Z_MODELCACHE`) has a derived attribute, which no pair's
    /// Xcode model has: CoreDataPlus's `SampleModel2_V2.sqlite` (`Book.pagesCount = pages.@count`).
    static let derivedAttributeStores = ["coredata/alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite"]
        .map { Fixtures.root.deletingLastPathComponent().appendingPathComponent($0).path }

    @Test(
        "a derived attribute: Core Data's hash of it (its expression's text) and its triggers, from the model the store carries",
        arguments: derivedAttributeStores)
    func derivedAttribute(_ store: String) throws {
        let model = try #require(try StoreModelCache.model(ofStoreAt: store))
        #expect(model.entities.contains { $0.attributes.contains { $0.derivation != nil } })
        let stored = try StoreMetadata.read(storeAt: store).versionHashes
        let computed = model.versionHashes.mapValues(VersionHash.hex)
        #expect(computed == stored, "\(computed.filter { stored[$0.key] != $0.value }.keys.sorted())")
        let layout = StoreLayout(model: model)
        #expect(layout.untriggeredDerivations.isEmpty)
        #expect(layout.triggerStatements.count == 5)
        let (derived, written) = (Self.derivedSchema(layout), try Self.schema(of: store))
        #expect(derived == written, "\(derived.symmetricDifference(written).sorted())")
    }

    /// Each merged store with the model bundles of its pairs, in the order `pairs.tsv` lists them.
    static let mergedModels: [(store: String, bundles: [String], versions: [String])] = mergedStores.sorted().map { store in
        let parts = pairs.filter { $0.storePath == store }
        return (store, parts.map(\.bundlePath), parts.map(\.version))
    }

    @Test(
        "a store written by merged models: recognised by Core Data's hashes with its models merged, each part at the version that wrote it; its schema derived")
    func mergedStoreChecks() throws {
        #expect(!Self.mergedModels.isEmpty)
        for merged in Self.mergedModels {
            let model = try ModelLoader.load(merged.bundles, forStoreAt: merged.store)
            let match = try VersionMatch.find(in: model, storeAt: merged.store)
            let written = merged.versions.joined(separator: " + ")
            let expected: VersionMatch.Verdict =
                written == model.currentVersionName
                ? .compatible(version: written, evidence: .appleHashes)
                : .migrationNeeded(from: written, to: model.currentVersionName, evidence: .appleHashes)
            #expect(match.verdict == expected)
            let version = try #require(model.version(named: written))
            let metadata = try StoreMetadata.read(storeAt: merged.store)
            #expect(version.versionIdentifiers == metadata.versionIdentifiers.sorted())
            #expect(Self.derivedSchema(StoreLayout(model: version)) == (try Self.schema(of: merged.store)))
        }
    }

    @Test("a merged store made with the parts' oldest versions migrates to the versions that wrote a real one: Core Data's hashes and schema")
    func mergedStoreMigrates() async throws {
        var compared = 0
        for merged in Self.mergedModels {
            let parts = try merged.bundles.map { try ModelLoader.load($0) }
            // The parts a migration must advance first, so the real store's versions are a
            // step of the merge (the others stay at their oldest).
            let order = parts.indices.sorted { a, b in
                let (aMoves, bMoves) = (merged.versions[a] != parts[a].versions[0].versionName, merged.versions[b] != parts[b].versions[0].versionName)
                return aMoves && !bMoves || (aMoves == bMoves && a < b)
            }
            guard order.contains(where: { merged.versions[$0] != parts[$0].versions[0].versionName }) else { continue }
            let oldest = try VersionedModel.merging(order.map { parts[$0] })
            let directory = try TemporaryDirectory()
            let source = directory.path("old.sqlite")
            _ = try DataGenerator.generate(model: oldest.versions[0], at: source, rows: 20, seed: 7)
            let model = try ModelLoader.load(order.map { merged.bundles[$0] }, forStoreAt: source)
            #expect(model.versions[0].versionName == oldest.versions[0].versionName)
            let migration = StoreMigration(store: source, model: model)
            let plan = try migration.plan(to: order.map { merged.versions[$0] }.joined(separator: " + "))
            let output = directory.path("migrated.sqlite")
            _ = try await migration.run(plan, output: output)
            #expect(try StoreMetadata.read(storeAt: output).versionHashes == (try StoreMetadata.read(storeAt: merged.store)).versionHashes)
            #expect(try Self.schema(of: output) == (try Self.schema(of: merged.store)))
            compared += 1
        }
        #expect(compared > 0)
    }

    @Test(
        "an Xcode mapping model's empty policy class name is Core Data's default policy, not a class to find: objc.io's Moody 2 → 3 runs through its mapping model and gives the store Core Data wrote"
    )
    func emptyPolicyClassName() async throws {
        let mapping = Self.corpora[0].appendingPathComponent("objcio__core-data/Migrations/Migrations/Moody 2-Moody 3.xcmappingmodel").path
        let model = try ModelLoader.load(Self.corpora[0].appendingPathComponent("objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld").path)
        let loaded = try MappingLoader.load(mapping, source: #require(model.version(named: "Moody 2")), destination: #require(model.version(named: "Moody 3")))
        #expect(loaded.entities.allSatisfy { $0.mapping.policy == nil }, "\(loaded.entities.map(\.mapping.policy))")
        let directory = try TemporaryDirectory()
        let source = directory.path("Moody 2.moody")
        try FileManager.default.copyItem(
            atPath: Self.corpora[0].appendingPathComponent("objcio__core-data/Migrations/MigrationsTests/Moody 2.moody").path, toPath: source)
        let migration = StoreMigration(store: source, model: model)
        let plan = try migration.plan(to: "Moody 3")
        #expect(plan.steps.count == 1 && !plan.steps[0].isInferred)
        _ = try await migration.run(plan, output: directory.path("out.moody"))
        let written = Self.corpora[0].appendingPathComponent("objcio__core-data/Migrations/MigrationsTests/Moody 3.moody").path
        #expect(try StoreMetadata.read(storeAt: directory.path("out.moody")).versionHashes == (try StoreMetadata.read(storeAt: written)).versionHashes)
    }

    /// Consecutive pairs of one model bundle: a store of an older version and one Core Data
    /// wrote with a newer version — what migrating the first must produce.
    static let migrations: [(from: Pair, to: Pair)] = {
        let single = pairs.filter { !mergedStores.contains($0.storePath) }
        var found: [(from: Pair, to: Pair)] = []
        for (index, pair) in single.enumerated() {
            if let next = single[(index + 1)...].first(where: { $0.bundlePath == pair.bundlePath && $0.version != pair.version }) {
                found.append((pair, next))
            }
        }
        return found
    }()

    @Test("migrating a real store gives the schema and hashes Core Data wrote for the target version, wherever the corpus holds such a store")
    func migratedLikeCoreData() async throws {
        var compared = 0
        for (from, to) in Self.migrations {
            let directory = try TemporaryDirectory()
            let source = directory.path(URL(fileURLWithPath: from.store).lastPathComponent)
            for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: from.storePath + suffix) {
                try FileManager.default.copyItem(atPath: from.storePath + suffix, toPath: source + suffix)
            }
            let migration = StoreMigration(store: source, model: try ModelLoader.load(from.bundlePath))
            let plan: StoreMigration.Plan
            do {
                plan = try migration.plan(to: to.version)
            } catch  where "\(error)".contains("is not registered") || "\(error)".contains("cannot be inferred") {
                continue  // the app's own code migrates it (a policy class, CareKit's hand-written step)
            }
            let output = directory.path("migrated.sqlite")
            _ = try await migration.run(plan, output: output)
            let metadata = try StoreMetadata.read(storeAt: output)
            #expect(metadata.versionHashes == (try StoreMetadata.read(storeAt: to.storePath)).versionHashes, "\(from.testDescription) → \(to.version)")
            // A store Core Data 637 wrote (objc.io's) keeps uniqueness constraints inside CREATE
            // TABLE; a migration writes today's layout, which is that version's layout as the
            // schema test derives it with today's rules (the same test proves the 637 one).
            let toMetadata = try StoreMetadata.read(storeAt: to.storePath)
            let written =
                (toMetadata.frameworkVersion ?? .max) < 1000
                ? try Self.derivedSchema(of: #require(try ModelLoader.load(to.versionPath).versions.first))
                : try Self.schema(of: to.storePath)
            let migrated = try Self.schema(of: output)
            #expect(migrated == written, "\(from.testDescription) → \(to.version): \(migrated.symmetricDifference(written).sorted())")
            compared += 1
        }
        #expect(compared >= 3, "migrations compared: \(compared)")
    }

    /// Every model bundle of both corpora: Xcode's `.xcdatamodeld` and compiled `.momd`.
    static let modelBundles: [String] = corpora.flatMap { corpus -> [String] in
        let walker = FileManager.default.enumerator(atPath: corpus.path)
        var found: [String] = []
        while let relative = walker?.nextObject() as? String {
            if relative.hasSuffix(".xcdatamodeld") || relative.hasSuffix(".momd") {
                found.append(corpus.appendingPathComponent(relative).path)
            }
        }
        return found.sorted()
    }

    @Test("every model of both corpora loads, as Xcode compiles them")
    func everyModelLoads() {
        #expect(Self.modelBundles.count >= 20)
        for bundle in Self.modelBundles {
            #expect(throws: Never.self, "\(bundle)") { _ = try ModelLoader.load(bundle) }
        }
    }

    @Test("a compiled model equals its Xcode source, hashes included: CartKit's .momd, whose Decimal defaults are archived NSDecimalNumbers")
    func compiledEqualsSource() throws {
        let root = Self.corpora[0].appendingPathComponent("Karim-ezzedine__CartKit/Sources/CartKitStorageCoreData/Resources").path
        let compiled = try #require(try ModelLoader.load(root + "/CartStorage.momd").versions.last)
        let source = try #require(try ModelLoader.load(root + "/CartStorage.xcdatamodeld").versions.last)
        #expect(compiled.entities == source.entities)
        #expect(compiled.versionHashes == source.versionHashes)
        let apple = try VersionMatch.appleHashes(versionInfoAt: root + "/CartStorage.momd/VersionInfo.plist")
        #expect(apple[compiled.versionName] == compiled.versionHashes.mapValues(VersionHash.hex))
    }

    /// The store's `CREATE` statements, normalised, without SQLite's own objects, Core Data's
    /// model cache and persistent history (tables `A…`, not the model's).
    /// The statements Tern makes for a layout, normalized as `schema(of:)` reads a store's.
    static func derivedSchema(_ layout: StoreLayout) -> Set<String> {
        Set((layout.createTableStatements + layout.indexStatements + layout.triggerStatements).map(normalized))
    }

    /// Today's layout of `version`.
    static func derivedSchema(of version: ObjectModel) -> Set<String> {
        derivedSchema(StoreLayout(model: version))
    }

    static func schema(of path: String) throws -> Set<String> {
        let reader = try ReadOnlyStore(path: path)
        return try withExtendedLifetime(reader) {
            let connection = try reader.connect()
            let statement = try connection.prepare("SELECT name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL")
            var rows = statement.rows()
            var statements: Set<String> = []
            while let row = try rows.next() {
                let (name, table, sql) = (row.text(at: 0) ?? "", row.text(at: 1) ?? "", row.text(at: 2) ?? "")
                guard name != "Z_MODELCACHE", !table.hasPrefix("A") else { continue }
                statements.insert(normalized(sql))
            }
            return statements
        }
    }

    /// A statement with identifier quotes dropped and spacing made uniform, so Tern's quoted
    /// statements compare with Core Data's bare ones.
    static func normalized(_ sql: String) -> String {
        var text = sql.replacingOccurrences(of: "\"", with: "")
        for (pattern, replacement) in [("\\s+", " "), ("\\s*\\(\\s*", " ("), ("\\s*\\)", ")")] {
            text = text.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
        }
        return text.trimmingCharacters(in: .whitespaces)
    }
}
