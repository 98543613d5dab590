import Foundation
import Logging
import Synchronization
import TernGenerate
import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore

/// What a run records of its inputs, so a resume can refuse a changed one.
@Suite("A run's recorded inputs")
struct RunInputsTests {
    /// Ranks 2 adds `rank` (with a maximum, or not); Ranks 3 adds a title.
    private func model(maximum: Int?) throws -> (VersionedModel, TemporaryDirectory) {
        let folder = try TemporaryDirectory()
        let files = [
            "model.yaml": "name: Ranks\ncurrent: Ranks 3\nversions: [v1.yaml, v2.yaml, v3.yaml]\n",
            "v1.yaml": "version: Ranks 1\nentities:\n  Person:\n    attributes: { name: string }\n",
            "v2.yaml":
                "version: Ranks 2\nentities:\n  Person:\n    attributes: { name: string, rank: { type: integer32, default: \"1\"\(maximum.map { ", max: \($0)" } ?? "") } }\n",
            "v3.yaml": "version: Ranks 3\nentities:\n  Person:\n    attributes: { name: string, rank: { type: integer32, default: \"1\" }, title: string }\n",
        ]
        return (try folder.model(files), folder)
    }

    @Test("entity mappings sent through Swift are recorded by step, pass and name: a resume that would send others is refused, naming them")
    func swiftPathsNamedByStepAndPass() throws {
        let (model, folder) = try model(maximum: nil)
        defer { withExtendedLifetime(folder) {} }
        let store = folder.path("Ranks.sqlite")
        _ = try StoreFile.create(at: store, model: model.versions[0])
        let plan = try StoreMigration(store: store, model: model, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }).plan()
        let inputs = [PolicyRegistry(), PolicyRegistry().sendingEveryMappingThroughSwift()].map { registry in
            MigrationRun.Inputs.of(source: StoreDigest(tables: [:]), plan: plan.deciding(with: registry))
        }
        #expect(inputs[0].inSwift.isEmpty)
        #expect(inputs[1].inSwift == [EntityMappingIdentity(step: StepIdentity(source: "Ranks 1", destination: "Ranks 3"), pass: 1, name: "PersonToPerson")])
        #expect(inputs[1].differences(from: inputs[0]) == ["other entity mappings run in Swift (then: none; now: PersonToPerson (Ranks 1 → Ranks 3, pass 1))"])
    }
}

@Suite("A resume compares the whole plan")
struct WholePlanResumeTests {
    @Test(
        "a resume whose plan differs from the recorded one in what the named inputs leave out is refused, naming the part; the same plan made again a moment later resumes"
    )
    func wholePlanCompared() throws {
        let folder = try TemporaryDirectory()
        // Library's steps copy the store (mapping files, two passes): a run stops between batches.
        let model = try ModelLoader.load(Configs.path("library"))
        let store = folder.path("Library.sqlite")
        _ = try DataGenerator.generate(model: model.versions[0], at: store, rows: 200, seed: 3)
        let output = folder.path("out.sqlite")
        let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let stop = Atomic<Bool>(false)
        var options = MigrationOptions(batchSize: 10, workers: 1, shouldStop: { stop.load(ordering: .relaxed) })
        options.progress = { if case .batchCommitted = $0 { stop.store(true, ordering: .relaxed) } }
        let plan = try StoreMigration(store: store, model: model, options: options, logger: quiet).plan()
        _ = try requireUnderlying(MigrationInterrupted.self) {
            _ = try StoreMigration(store: store, model: model, options: options, logger: quiet).runBlocking(plan, output: output)
        }

        var edited = plan
        edited.fromStoreModel = true
        let resuming = StoreMigration(store: store, model: model, options: MigrationOptions(batchSize: 10, workers: 1), logger: quiet)
        let refused = try #require(throws: TernFailure.self) { _ = try resuming.runBlocking(edited, output: output, resume: true) }
        guard case .resumeMismatch(_, _, let differences)? = refused.underlying as? MigrationError else {
            Issue.record("\(refused)")
            return
        }
        #expect(differences == ["the plan's fromStoreModel"])

        // Made again: another instant for now(), the same decisions.
        let again = try resuming.plan()
        _ = try resuming.runBlocking(again, output: output, resume: true)
        #expect(try StoreMetadata.read(storeAt: output, countingRows: false).versionName == model.currentVersionName)
    }
}

@Suite("A saved plan's decisions")
struct SavedDecisionsTests {
    @Test("decisions edited in a saved plan (keys kept where planning keeps none) are refused when read, whatever its seal; unedited, it reads back equal")
    func editedDecisionsRefused() throws {
        let folder = try TemporaryDirectory()
        let model = try ModelLoader.load(Configs.path("library"))
        let store = folder.path("Library.sqlite")
        _ = try DataGenerator.generate(model: model.versions[0], at: store, rows: 10, seed: 2)
        let plan = try StoreMigration(store: store, model: model, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }).plan()
        let data = try MigrationPlan.encoder.encode(plan)
        let read = try JSONDecoder().decode(MigrationPlan.self, from: data)
        #expect(read.steps.map(\.decisions) == plan.steps.map(\.decisions))

        var json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var steps = try #require(json["steps"] as? [[String: Any]])
        var decisions = try #require(steps[0]["decisions"] as? [[String: Any]])
        let index = try #require(decisions.firstIndex { ($0["keepsKeys"] as? Bool) == false })
        decisions[index]["keepsKeys"] = true
        steps[0]["decisions"] = decisions
        json["steps"] = steps
        let edited = try JSONSerialization.data(withJSONObject: json)
        #expect(throws: DecodingError.self) { _ = try JSONDecoder().decode(MigrationPlan.self, from: edited) }
    }
}
