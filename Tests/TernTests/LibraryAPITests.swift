import Foundation
import Logging
import Synchronization
import Testing
import TernLoop
@_spi(Testing) import Tern
import TernExamples
import TernGenerate
@_spi(Testing) import TernLoop
import TernSQLite
import TernTesting

/// Tern as a Swift program uses it: plain `import Tern` (no `@testable`), async, cancellable,
/// with mistakes caught where they are made.
@Suite("The library: async runs, cancellation, early errors")
struct LibraryAPITests {
    let directory: TemporaryDirectory
    let model: VersionedModel
    let source: String

    init() throws {
        let bench = try BenchSource(books: 3000, seed: 3)
        (directory, model, source) = (bench.directory, bench.model, bench.path)
    }

    private static func rows(_ path: String, _ sql: String) throws -> [String] {
        let connection = try Connection(path: path, configuration: .init(mode: .readOnly))
        var result: [String] = []
        var rows = try connection.prepare(sql).rows()
        while let row = try rows.next() { result.append(row.values.map(\.sqlLiteral).joined(separator: "|")) }
        return result
    }

    /// Every row of every Bench 2 table of the two stores is the same, by content.
    private static func expectSameTables(_ store: String, _ other: String) throws {
        for table in ["ZPUBLICATION", "ZCATEGORY", "ZPAGE"] {
            #expect(try rows(store, "SELECT * FROM \(table) ORDER BY Z_PK") == rows(other, "SELECT * FROM \(table) ORDER BY Z_PK"), "\(table)")
        }
    }

    @Test("a migration given no logger of its program's logs notices and above only: a library run does not fill stderr with its stages")
    func quietByDefault() throws {
        #expect(Logger.ternDefault.logLevel == .notice)
        #expect(Logger.ternDefault.label == "tern.migrate")
    }

    @Test("events read as an async sequence in a detached task while the run goes on; the same store as an awaited run")
    func asyncRun() async throws {
        let migration = StoreMigration(store: source, model: model, options: MigrationOptions(batchSize: 500))
        let plan = try migration.plan()
        let output = directory.path("async.sqlite")
        let running = migration.start(plan, output: output)
        let counted = Task.detached {
            var committed = 0
            var finishedSteps = 0
            for await event in running.events {
                if case .batchCommitted = event { committed += 1 }
                if case .stepFinished = event { finishedSteps += 1 }
            }
            return (committed, finishedSteps)
        }
        let report = try await running.report
        let (committed, finishedSteps) = await counted.value
        #expect(committed > 0)
        #expect(finishedSteps == plan.steps.count)
        #expect(report.destination == output)
        // The report counts the links the step recreated.
        #expect(report.steps.allSatisfy { !$0.links.isEmpty && $0.links.values.reduce(0, +) > 0 }, "\(report.steps.map(\.links))")

        let awaited = directory.path("awaited.sqlite")
        _ = try await migration.run(plan, output: awaited)
        try Self.expectSameTables(output, awaited)
    }

    @Test("cancelling the awaiting task stops the run with the work saved; resuming gives the store an uninterrupted run gives")
    func cancelAndResume() async throws {
        // The run is held at its first committed batch until the test has cancelled it, so it is
        // surely still going when it is cancelled.
        let options = MigrationOptions(batchSize: 100, workers: 1, registry: .builtIn)
        let migration = StoreMigration(store: source, model: model, options: options)
        let mapping = [Configs.path("bench") + "/policy/1-to-2.yaml"]
        let plan = try migration.plan(to: "Bench 2", mappingFiles: mapping)
        let output = directory.path("cancelled.sqlite")

        let firstBatch = Turnstile()
        var stepped = options
        stepped.reached = { milestone in if milestone == .batchCommitted { firstBatch.pass() } }
        let held = StoreMigration(store: source, model: model, options: stepped)
        let task = Task { try await held.run(plan, output: output) }
        await firstBatch.arrival()
        task.cancel()
        firstBatch.open()
        let failure = try await #require(throws: TernFailure.self) { try await task.value }
        #expect(failure.kind == .interrupted && failure.isResumable)
        #expect(failure.underlying is MigrationInterrupted)
        #expect(failure.step == StepIdentity(source: "Bench 1", destination: "Bench 2") && failure.pass == 1)
        #expect("\(failure)".hasSuffix("interrupted; the work done so far is saved: run the same migration again with resume: true to continue"), "\(failure)")
        #expect(!FileManager.default.fileExists(atPath: output))

        // Found unfinished without resume: the words say resume, and so does isResumable.
        let unfinished = try await #require(throws: TernFailure.self) { try await migration.run(plan, output: output) }
        #expect(unfinished.kind == .interrupted && unfinished.isResumable, "\(unfinished)")
        #expect("\(unfinished)".contains("run the same migration again with resume: true"), "\(unfinished)")

        let resumed = try await migration.run(plan, output: output, resume: true)
        #expect(resumed.destination == output)
        let uninterrupted = directory.path("uninterrupted.sqlite")
        _ = try await migration.run(plan, output: uninterrupted)
        try Self.expectSameTables(output, uninterrupted)
    }

    @Test("every public entry point throws one error type, TernFailure, whose localizedDescription is its message")
    func oneErrorType() async throws {
        let migration = StoreMigration(store: source, model: model)
        let planning = try #require(throws: TernFailure.self) { try migration.plan(to: "Bench 9") }
        #expect(planning.kind == .badInput && !planning.isResumable)
        #expect(planning.localizedDescription == planning.description && !planning.localizedDescription.contains("could not be completed"))
        let plan = try migration.plan()
        let taken = directory.path("taken.sqlite")
        _ = FileManager.default.createFile(atPath: taken, contents: Data("x".utf8))
        let blocking = try #require(throws: TernFailure.self) { try migration.runBlocking(plan, output: taken) }
        #expect(blocking.kind == .outputExists)
        let awaited = try await #require(throws: TernFailure.self) { try await migration.run(plan, output: taken) }
        #expect(awaited.kind == .outputExists)
        let testStore = try #require(throws: TernFailure.self) { try TestStoreProbe.make(model) }
        #expect(testStore.kind == .badInput)
    }

    @Test("events read as log lines and round-trip through JSON; progress reaches 100% only after verification and indexes")
    func readableEvents() async throws {
        let tracker = ProgressTracker()
        let fractions = Mutex<[(MigrationEvent, Double)]>([])
        var options = MigrationOptions(batchSize: 1000)
        options.progress = { event in
            let snapshot = tracker.record(event)
            fractions.withLock { $0.append((event, snapshot.fraction)) }
        }
        let migration = StoreMigration(store: source, model: model, options: options)
        _ = try await migration.run(try migration.plan(), output: directory.path("events.sqlite"))
        let events = fractions.withLock { $0.map(\.0) }
        #expect(events.contains { if case .passStarted(1, _, let mappings) = $0 { !mappings.isEmpty } else { false } })
        let decoded = try JSONDecoder().decode([MigrationEvent].self, from: JSONEncoder().encode(events))
        #expect(decoded == events)
        for event in events {
            #expect(!"\(event)".contains("Tern.") && !"\(event)".contains("Outline"), "\(event)")
        }
        #expect(events.map(\.description).contains("verifying the step's result against its source"))
        let atVerifying = fractions.withLock { $0.first { if case .stepStage(.verifying) = $0.0 { true } else { false } }?.1 }
        #expect(try #require(atVerifying) < 1)
        #expect(fractions.withLock { $0.last?.1 } == 1)
    }

    @Test("Tern's example policies serve their own configs' models only: the same mapping beside a copy of the model is refused, naming the policy")
    func examplesOnlyForTheirConfigs() throws {
        let mapping = [Configs.path("bench") + "/policy/1-to-2.yaml"]
        let own = StoreMigration(store: source, model: model, options: MigrationOptions(registry: .builtIn))
        #expect(try own.plan(to: "Bench 2", mappingFiles: mapping).steps.count == 1)
        let copy = directory.path("my-app-model")
        try FileManager.default.copyItem(atPath: Configs.path("bench"), toPath: copy)
        let elsewhere = StoreMigration(store: source, model: try ModelLoader.load(copy), options: MigrationOptions(registry: .builtIn))
        let error = try requireUnderlying(TernError.self) { _ = try elsewhere.plan(to: "Bench 2", mappingFiles: mapping) }
        #expect(error.message.contains("names the migration policy AuthorSplitPolicy, which is not registered (registered: none)"), "\(error.message)")
        // Nor in a folder that only looks like Tern's (…/configs/bench elsewhere).
        let lookalike = directory.path("elsewhere/configs/bench")
        try FileManager.default.createDirectory(atPath: directory.path("elsewhere/configs"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Configs.path("bench"), toPath: lookalike)
        let looking = StoreMigration(store: source, model: try ModelLoader.load(lookalike), options: MigrationOptions(registry: .builtIn))
        _ = try requireUnderlying(TernError.self) { _ = try looking.plan(to: "Bench 2", mappingFiles: mapping) }
        // The examples' manager hook too: it serves configs/bookstore only.
        #expect(PolicyRegistry.builtIn.forModel(at: Configs.path("bookstore")).delegate != nil)
        #expect(PolicyRegistry.builtIn.forModel(at: copy).delegate == nil)
    }

    @Test("a mapping naming a policy that is not registered fails at plan(), naming both")
    func unregisteredPolicy() throws {
        let migration = StoreMigration(store: source, model: model)
        let error = try requireUnderlying(TernError.self) {
            _ = try migration.plan(to: "Bench 2", mappingFiles: [Configs.path("bench") + "/policy/1-to-2.yaml"])
        }
        #expect(error.kind == .badInput)
        #expect(error.message.contains("names the migration policy AuthorSplitPolicy, which is not registered (registered: none)"), "\(error.message)")
    }

    @Test("a policy failing in two batches is reported at the earlier object in key order, though the later batch failed first")
    func firstFailureInKeyOrder() async throws {
        struct Failing: EntityMigrationPolicy {
            struct Refused: Error {}
            /// Opened when the second batch has failed.
            let secondFailed = Latch()
            func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
                if source.key == 10 {  // the first batch fails, after the second
                    secondFailed.wait(seconds: 30)
                    throw Refused()
                }
                if source.key == 60 {  // the second, at once
                    secondFailed.open()
                    throw Refused()
                }
                context.associate(source, with: context.create(try context.defaultDestination(for: source)))
            }
        }
        var registry = PolicyRegistry()
        registry.register(Failing(), as: "AuthorSplitPolicy")
        let migration = StoreMigration(store: source, model: model, options: MigrationOptions(batchSize: 50, workers: 2, registry: registry))
        let plan = try migration.plan(to: "Bench 2", mappingFiles: [Configs.path("bench") + "/policy/1-to-2.yaml"])
        let error = try await #require(throws: TernFailure.self) { try await migration.run(plan, output: directory.path("failing.sqlite")) }
        #expect(error.sourceKey == 10, "\(error)")
    }

    @Test("a policy setting an attribute the entity lacks fails, naming the policy, the source object and the attributes there are")
    func unknownKey() async throws {
        struct Typo: EntityMigrationPolicy {
            func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
                var object = try context.defaultDestination(for: source)
                object["titel"] = try source["title"]
                context.associate(source, with: context.create(object))
            }
        }
        var registry = PolicyRegistry()
        registry.register(Typo(), as: "AuthorSplitPolicy")
        let migration = StoreMigration(store: source, model: model, options: MigrationOptions(registry: registry))
        let plan = try migration.plan(to: "Bench 2", mappingFiles: [Configs.path("bench") + "/policy/1-to-2.yaml"])
        let error = try await #require(throws: TernFailure.self) { try await migration.run(plan, output: directory.path("typo.sqlite")) }
        #expect(error.kind == .badInput && !error.isResumable)
        #expect(error.policy == "AuthorSplitPolicy" && error.entityMapping == "BookToPublication" && error.sourceKey == 1)
        // It failed in the first batch of pass 1, before any batch committed.
        #expect(error.step == StepIdentity(source: "Bench 1", destination: "Bench 2") && error.pass == 1, "\(error)")
        #expect(error.localizedDescription == error.description)
        let text = "\(error)"
        #expect(text.contains("the migration policy AuthorSplitPolicy failed in entity mapping BookToPublication over source object 1"), "\(text)")
        #expect(text.contains("it set titel on an object of Publication, which has no stored attribute of that name (its attributes: "), "\(text)")
        #expect(text.contains("title"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: directory.path("typo.sqlite")))
    }

    @Test("a policy creating objects without associating them is reported (the mapping's relationships cannot reach them), and refused when data loss is")
    func unassociatedObjects() async throws {
        struct Orphans: EntityMigrationPolicy {
            func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
                let object = context.create(try context.defaultDestination(for: source))
                if source.key % 2 == 0 { context.associate(source, with: object) }
            }
        }
        var registry = PolicyRegistry()
        registry.register(Orphans(), as: "AuthorSplitPolicy")
        let mapping = [Configs.path("bench") + "/policy/1-to-2.yaml"]
        let migration = StoreMigration(store: source, model: model, options: MigrationOptions(registry: registry))
        let report = try await migration.run(try migration.plan(to: "Bench 2", mappingFiles: mapping), output: directory.path("orphans.sqlite"))
        let books = try #require(report.steps[0].mappings.first { $0.name == "BookToPublication" })
        #expect(books.unassociated == 1500 && books.created == 1500)
        let dropped = try #require(report.steps[0].dropped.first { $0.createdUnassociatedBy != nil })
        #expect(
            "\(dropped)"
                == "entity Publication: 1500 objects created by AuthorSplitPolicy in entity mapping BookToPublication without a source object (context.associate) or a link of its own (context.relate): the mapping's relationship mappings do not reach them, so they have none of those links"
        )

        var options = MigrationOptions(registry: registry)
        options.refuseDataLoss = true
        let strict = StoreMigration(store: source, model: model, options: options)
        let plan = try strict.plan(to: "Bench 2", mappingFiles: mapping)
        let refused = try await #require(throws: TernFailure.self) { try await strict.run(plan, output: directory.path("strict.sqlite")) }
        guard case MigrationError.dataLoss(_, let lost)? = refused.underlying as? MigrationError else { Issue.record("\(refused)"); return }
        #expect(lost.first?.createdUnassociatedBy == "AuthorSplitPolicy" && !refused.isResumable)
        #expect(!FileManager.default.fileExists(atPath: directory.path("strict.sqlite")))
    }

    @Test("a policy setting a value of the wrong kind for its attribute fails, naming the policy, the object, the attribute, its type and what it takes")
    func wrongKindOfValue() async throws {
        struct Cheap: EntityMigrationPolicy {
            func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
                var object = try context.defaultDestination(for: source)
                object["price"] = source.key == 3 ? .text("cheap") : .integer(4)  // an integer widens to a Double
                context.associate(source, with: context.create(object))
            }
        }
        var registry = PolicyRegistry()
        registry.register(Cheap(), as: "AuthorSplitPolicy")
        let migration = StoreMigration(store: source, model: model, options: MigrationOptions(registry: registry))
        let plan = try migration.plan(to: "Bench 2", mappingFiles: [Configs.path("bench") + "/policy/1-to-2.yaml"])
        let error = try await #require(throws: TernFailure.self) { try await migration.run(plan, output: directory.path("cheap.sqlite")) }
        #expect(error.kind == .badInput && error.policy == "AuthorSplitPolicy" && error.sourceKey == 3, "\(error)")
        #expect("\(error)".contains("it set price on an object of Publication to text 'cheap', but price is Double (it takes a number, or NULL)"), "\(error)")
    }

    @Test("a default object read, rebuilt and re-entitied through its public values writes what the default writes; a typo set through them is refused")
    func defaultObjectThroughValues() async throws {
        /// Each object by another route to the same values: the whole dictionary read and set
        /// back, a copy made by name, and one given another entity and then its own again.
        struct Rebuilt: EntityMigrationPolicy {
            struct CopySharedValues: Error {}
            func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
                var object = try context.defaultDestination(for: source)
                switch source.key % 3 {
                case 0: object.values = object.values
                case 1: object = DestinationObject(entity: object.entity, values: object.values)
                default:
                    let entity = object.entity
                    object.entity = "Category"
                    object.entity = entity
                }
                // A copy is its own: setting a value on it leaves the original unset.
                var split = object
                split["firstName"] = .text("first")
                guard split.values["firstName"] == .text("first"), object.values["firstName"] == nil else { throw CopySharedValues() }
                context.associate(source, with: context.create(object))
            }
        }
        struct TypoThroughValues: EntityMigrationPolicy {
            func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
                var object = try context.defaultDestination(for: source)
                object.values["titel"] = try source["title"]
                context.associate(source, with: context.create(object))
            }
        }
        let mapping = [Configs.path("bench") + "/policy/1-to-2.yaml"]
        var outputs: [String] = []
        for (name, policy) in [("default", DefaultMigrationPolicy()), ("rebuilt", Rebuilt())] as [(String, any EntityMigrationPolicy)] {
            var registry = PolicyRegistry()
            registry.register(policy, as: "AuthorSplitPolicy")
            let migration = StoreMigration(store: source, model: model, options: MigrationOptions(batchSize: 100, workers: 2, registry: registry))
            outputs.append(directory.path("\(name).sqlite"))
            _ = try await migration.run(try migration.plan(to: "Bench 2", mappingFiles: mapping), output: outputs.last!)
        }
        try Self.expectSameTables(outputs[0], outputs[1])

        var registry = PolicyRegistry()
        registry.register(TypoThroughValues(), as: "AuthorSplitPolicy")
        let migration = StoreMigration(store: source, model: model, options: MigrationOptions(registry: registry))
        let plan = try migration.plan(to: "Bench 2", mappingFiles: mapping)
        let error = try await #require(throws: TernFailure.self) { try await migration.run(plan, output: directory.path("typo-values.sqlite")) }
        #expect("\(error)".contains("it set titel on an object of Publication, which has no stored attribute of that name"), "\(error)")
    }

    @Test("now() in a mapping file is the run's now, for every object (it was 2001-01-01: mapping files were validated with 0)")
    func nowInMappingFile() async throws {
        let text = try String(contentsOfFile: Configs.path("bench") + "/mappings/1-to-2.yaml", encoding: .utf8)
        let edited = text.replacingOccurrences(of: "published: $source.published", with: "published: now()")
        #expect(edited != text)
        let mapping = directory.path("now.yaml")
        try edited.write(toFile: mapping, atomically: true, encoding: .utf8)
        let migration = StoreMigration(store: source, model: model, options: MigrationOptions(now: 812_345_678.5))
        let output = directory.path("now.sqlite")
        _ = try await migration.run(try migration.plan(mappingFiles: [mapping]), output: output)
        let published = try Self.rows(output, "SELECT DISTINCT ZPUBLISHED FROM ZPUBLICATION")
        #expect(published == ["812345678.5"], "\(published)")
    }

    @Test("now() defaults to when the options were made, not to 2001-01-01")
    func nowDefault() {
        let before = Date().timeIntervalSinceReferenceDate
        let options = MigrationOptions()
        #expect(options.now >= before && options.now <= Date().timeIntervalSinceReferenceDate)
    }
}

/// A `TestStore` of a version the model lacks.
private enum TestStoreProbe {
    static func make(_ model: VersionedModel) throws {
        _ = try TestStore(model: model, version: "Bench 9") { _ in }
    }
}
