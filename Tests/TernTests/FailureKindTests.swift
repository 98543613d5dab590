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

/// Every error is classified once (`FailureKind`): a policy's failure names the policy, the
/// mapping and the source object; a constraint violation is the data's fault, not the disk's; a
/// damaged checkpoint is bad input, never a crash.
@Suite("Failures classified once")
struct FailureKindTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    struct Refusal: Error, CustomStringConvertible {
        var description: String { "this document cannot be migrated" }
    }

    /// Refuses source object 3.
    struct RefusingPolicy: EntityMigrationPolicy {
        func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            if source.key == 3 { throw Refusal() }
            let object = try context.defaultDestination(for: source)
            context.associate(source, with: context.create(object))
        }
    }

    @Test("a policy that throws: the error names the policy, the entity mapping and the source object; bad input, not resumable; nothing delivered")
    func policyFailure() throws {
        let model = try ModelLoader.load(Configs.path("attachments"))
        let source = directory.path("Docs.sqlite")
        _ = try DataGenerator.generate(model: model.version(named: "Attachments 1")!, at: source, rows: 20, seed: 1)
        let (mapping, registry) = try AttachmentsPolicy.mapping(through: RefusingPolicy(), named: "RefusingPolicy", in: directory)
        let migration = StoreMigration(store: source, model: model, options: MigrationOptions(batchSize: 2, registry: registry))
        let output = directory.path("Out.sqlite")
        #expect {
            _ = try migration.runBlocking(try migration.plan(to: "Attachments 2", mappingFiles: [mapping]), output: output)
        } throws: { error in
            guard case MigrationError.policyFailed(let policy, let mappingName, let key, let message) = underlying(error) else { return false }
            #expect(
                "\(error)".contains(
                    "the migration policy RefusingPolicy failed in entity mapping DocumentToDocument over source object 3: this document cannot be migrated"))
            return policy == "RefusingPolicy" && mappingName == "DocumentToDocument" && key == 3 && message.contains("cannot be migrated")
                && FailureKind(of: error) == .badInput && !FailureKind.isResumable(error)
        }
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test("a constraint violation is the data's fault (validation), not I/O, and not resumable")
    func constraintIsNotIO() throws {
        let connection = try Connection(path: directory.path("c.sqlite"))
        try connection.execute("CREATE TABLE t (k INTEGER UNIQUE)")
        try connection.execute("INSERT INTO t VALUES (1)")
        #expect {
            try connection.execute("INSERT INTO t VALUES (1)")
        } throws: { error in
            FailureKind(of: error) == .validation && !FailureKind.isResumable(error)
        }
    }

    @Test("a checkpoint holding a unit Tern never writes is reported as damaged, naming the store and the unit")
    func damagedCheckpoint() throws {
        let path = directory.path("step.sqlite")
        let connection = try Connection(path: path)
        try connection.execute("CREATE TABLE TERN_PROGRESS (unit TEXT PRIMARY KEY, last_key INTEGER NOT NULL, count INTEGER NOT NULL, done INTEGER NOT NULL)")
        try connection.execute("INSERT INTO TERN_PROGRESS VALUES ('create:1:BookToBook', 40, 40, 1), ('links:x', 0, 0, 0)")
        try connection.close()
        #expect {
            _ = try StepWorkspace.recorded(inStoreAt: path)
        } throws: { error in
            (error as? TernError)?.kind == .badInput && "\(error)".contains("\(path): the migration's checkpoint is damaged: 'links:x'")
        }
    }

    @Test(
        "every unit survives its stored form",
        arguments: [
            WorkUnit.createInstances(mapping: 3, name: "Odd:Name.With.Dots"), .links(mapping: 1, name: "A.B", relationship: "books"),
            .laterLinks(mapping: 2, name: "X", relationship: "y"), .mirror(mapping: 4, name: "M", relationship: "r"),
            .relationshipHook(mapping: 5), .policyLinks(pass: 1, entity: "Book", relationship: "labels"), .policyLinksApplied(pass: 0),
        ])
    func unitKeys(unit: WorkUnit) {
        #expect(WorkUnit(key: unit.key) == unit)
    }

    @Test("only the very keys Tern writes are units")
    func strictKeys() {
        for key in ["create:01:Name", "create:+1:Name", "links:1:NoDot", "hook:1:extra", "policylinks:x", "create:1", ""] {
            #expect(WorkUnit(key: key) == nil, "\(key)")
        }
    }

    @Test("a policy's own SQL error is the policy's failure; Tern's own errors and the disk's pass through")
    func policyErrorsNamed() throws {
        let mapping = EntityMapping(name: "BookToBook", type: .transform, sourceEntity: "Book", destinationEntity: "Book")
        let readOnly = try Connection(path: ":memory:", configuration: .init(mode: .readOnly))
        #expect {
            try MigrationError.inPolicy("Auditor", mapping: mapping, sourceKey: 7) { try readOnly.execute("CREATE TABLE t (x)") }
        } throws: { error in
            guard case MigrationError.policyFailed("Auditor", "BookToBook", 7, _) = error else { return false }
            return FailureKind(of: error) == .badInput
        }
        #expect(throws: TernError.self) {
            try MigrationError.inPolicy("Auditor", mapping: mapping) { throw TernError(.io, "disk gone") }
        }
        #expect(throws: MigrationInterrupted.self) {
            try MigrationError.inPolicy("Auditor", mapping: mapping) { throw MigrationInterrupted() }
        }
    }
}

/// A policy's custom validation reports what it finds, on a connection that cannot write.
@Suite("Custom validation")
struct CustomValidationTests {
    /// Flags every document without a thumbnail, and tries to delete them.
    struct ThumbnailRequired: EntityMigrationPolicy {
        func performCustomValidation(_ context: ValidationContext) throws {
            #expect(throws: SQLiteError.self) { try context.connection.execute("DELETE FROM ZDOCUMENT") }
            let statement = try context.connection.prepare("SELECT Z_PK FROM ZDOCUMENT WHERE ZTHUMBNAIL IS NULL ORDER BY Z_PK")
            var rows = statement.rows()
            while let row = try rows.next() { context.report(entity: "Document", key: row.int64(at: 0), rule: "a thumbnail is required") }
        }
    }

    @Test("violations a policy reports fail the step (validation), each named; the policy cannot change the store")
    func reportsWithoutWriting() throws {
        let directory = try TemporaryDirectory()
        let model = try ModelLoader.load(Configs.path("attachments"))
        let source = directory.path("Docs.sqlite")
        _ = try DataGenerator.generate(model: model.version(named: "Attachments 1")!, at: source, rows: 30, seed: 2)
        let connection = try Connection(path: source)
        try connection.execute("UPDATE ZDOCUMENT SET ZTHUMBNAIL = NULL WHERE Z_PK IN (4, 9)")
        let missing = try #require(connection.scalar("SELECT count(*) FROM ZDOCUMENT WHERE ZTHUMBNAIL IS NULL")?.int64)
        try connection.close()
        let (mapping, registry) = try AttachmentsPolicy.mapping(through: ThumbnailRequired(), named: "ThumbnailRequired", in: directory)
        let migration = StoreMigration(store: source, model: model, options: MigrationOptions(registry: registry))
        #expect {
            _ = try migration.runBlocking(try migration.plan(to: "Attachments 2", mappingFiles: [mapping]), output: directory.path("Out.sqlite"))
        } throws: { error in
            guard case MigrationFailure.validation(let violations) = underlying(error) else { return false }
            return violations.count == missing && violations.allSatisfy { $0.entity == "Document" && $0.rule == "a thumbnail is required" }
        }
    }
}

/// configs/attachments' v1 → v2 mapping with DocumentToDocument sent through `policy`, and a
/// registry holding it.
enum AttachmentsPolicy {
    static func mapping(through policy: any EntityMigrationPolicy, named name: String, in directory: TemporaryDirectory) throws -> (String, PolicyRegistry) {
        let text = try String(contentsOfFile: Configs.path("attachments") + "/mappings/1-to-2.yaml", encoding: .utf8)
            .replacingOccurrences(of: "    destination: Document\n", with: "    destination: Document\n    policy: \(name)\n")
        let mapping = directory.path("\(name).yaml")
        try text.write(toFile: mapping, atomically: true, encoding: .utf8)
        var registry = PolicyRegistry()
        registry.register(policy, as: name)
        return (mapping, registry)
    }
}
