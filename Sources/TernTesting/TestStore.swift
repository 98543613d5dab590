import Foundation
import Logging
import Tern
import TernGenerate

/// A store for a test, built from literal objects in Core Data's layout for any version of a
/// model, that migrates like any store and reads its objects back by entity and attribute:
///
/// ```swift
/// let store = try TestStore(model: model, version: "Bench 1") { store in
///     let fiction = try store.insert("Category", ["name": "Fiction"])
///     try store.insert("Book", ["title": "Dune", "author": "Frank Herbert", "price": 9.5], relating: ["category": fiction])
/// }
/// let migrated = try await store.migrated(to: "Bench 2", registry: registry)
/// #expect(try migrated.objects("Publication").map { $0["lastName"] } == ["Herbert"])
/// ```
///
/// Its files live in a temporary directory of their own, removed once the last `TestStore` made
/// from it goes.
public struct TestStore: Sendable {
    /// The store's file.
    public let path: String
    /// The versioned model it was built for, and migrates through.
    public let model: VersionedModel
    /// The version of `model` the store is at.
    public let version: ObjectModel
    private let scratch: Scratch

    /// Creates a store of `version` (default: the model's first) and fills it with what `build`
    /// inserts and relates.
    ///
    /// - Throws: `TernFailure`, as every entry point of Tern's libraries (what `build` throws is
    ///   its `underlying` error).
    public init(model: VersionedModel, version name: String? = nil, _ build: (TestStoreBuilder) throws -> Void) throws {
        self = try TernFailure.wrapping {
            let version = try Self.version(name, of: model)
            let scratch = try Scratch()
            let path = scratch.file("\(version.versionName).sqlite")
            let connection = try StoreFile.create(at: path, model: version)
            let builder = try TestStoreBuilder(connection: connection, layout: StoreLayout(model: version))
            try connection.transaction(.immediate) {
                try build(builder)
                try builder.finish()
            }
            try connection.close()
            return TestStore(path: path, model: model, version: version, scratch: scratch)
        }
    }

    /// Creates a store of `version` (default: the model's first) holding `rows` generated objects
    /// per entity (`TernGenerate`: every value valid for the version, every relationship linked):
    /// for a test that runs a policy over objects like an app's without writing them out.
    public init(model: VersionedModel, version name: String? = nil, generating rows: Int, seed: UInt64 = 1) throws {
        self = try TernFailure.wrapping {
            let version = try Self.version(name, of: model)
            let scratch = try Scratch()
            let path = scratch.file("\(version.versionName).sqlite")
            _ = try DataGenerator.generate(model: version, at: path, rows: rows, seed: seed)
            return TestStore(path: path, model: model, version: version, scratch: scratch)
        }
    }

    /// The version named `name` (default: the model's first), or an error listing the versions.
    private static func version(_ name: String?, of model: VersionedModel) throws -> ObjectModel {
        guard let version = name.map({ model.version(named: $0) }) ?? model.versions.first else {
            throw TernError(
                .badInput, "the model has no version \(name ?? "at all") (its versions: \(model.versions.map(\.versionName).joined(separator: ", ")))")
        }
        return version
    }

    private init(path: String, model: VersionedModel, version: ObjectModel, scratch: Scratch) {
        self.path = path
        self.model = model
        self.version = version
        self.scratch = scratch
    }

    /// Every object of `entity` (its subentities' too), in key order.
    ///
    /// - Throws: `TernFailure`: an entity the version lacks, or a store that cannot be read.
    public func objects(_ entity: String) throws -> [TestObject] {
        try TernFailure.wrapping { try readObjects(entity) }
    }

    private func readObjects(_ entity: String) throws -> [TestObject] {
        let connection = try Connection(path: path, configuration: .init(mode: .readOnly))
        defer { try? connection.close() }
        let layout = StoreLayout(model: version)
        let reader = ObjectReader(connection: connection, layout: layout)
        return try reader.objects(of: entity, includingSubentities: true).map { object in
            var toMany: [String: [Int64]] = [:]
            for relationship in version.allRelationships(of: object.entity) where relationship.isToMany && !relationship.isTransient {
                toMany[relationship.name] = try reader.destinations(object.entity, relationship.name, owner: object.key)
            }
            return TestObject(key: object.key, entity: object.entity, values: object.values, toMany: toMany)
        }
    }

    /// This store migrated to `target` (default: the model's current version) into a new store
    /// beside it, with `mapping` (a mapping file's YAML text), `mappingFiles` (YAML,
    /// `.xcmappingmodel` or `.cdm` files) or `models` (mapping models built in memory) for the
    /// steps they cover, the mapping files the model names otherwise, or inferred mappings. Migrating verifies as `tern migrate` does: what comes back passed verification.
    ///
    /// - Throws: `TernFailure`, from planning or from the run (a policy's error with its policy,
    ///   mapping and source object).
    public func migrated(
        to target: String? = nil, mapping: String? = nil, mappingFiles files: [String] = [], models: [MappingModel] = [],
        registry: PolicyRegistry = PolicyRegistry(), options: MigrationOptions = MigrationOptions()
    ) async throws -> TestStore {
        try await TernFailure.wrapping { try await migrate(to: target, mapping: mapping, files: files, models: models, registry: registry, options: options) }
    }

    private func migrate(
        to target: String?, mapping: String?, files: [String], models: [MappingModel], registry: PolicyRegistry,
        options: MigrationOptions
    ) async throws -> TestStore {
        var options = options
        options.registry = registry
        let migration = StoreMigration(store: path, model: model, options: options, logger: Logger(label: "tern.testing") { _ in SwiftLogNoOpLogHandler() })
        var mappingFiles = files
        if let mapping {
            let file = scratch.file("mapping-\(UUID().uuidString).yaml")
            try mapping.write(toFile: file, atomically: true, encoding: .utf8)
            mappingFiles.append(file)
        }
        let plan = try migration.plan(to: target, mappingFiles: mappingFiles, mappings: models)
        guard let destination = model.version(named: plan.targetVersion) else {
            throw TernError(.badInput, "the model has no version \(plan.targetVersion)")
        }
        guard !plan.steps.isEmpty else { return self }
        let output = scratch.file("\(destination.versionName)-\(UUID().uuidString).sqlite")
        _ = try await migration.run(plan, output: output)
        return TestStore(path: output, model: model, version: destination, scratch: scratch)
    }
}

/// A temporary directory, removed when the last store in it goes.
private final class Scratch: Sendable {
    let directory: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-testing-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { directory + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}
