import Foundation
import Logging
import Testing
@testable import Tern
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
            MigrationRun.Inputs.of(source: StoreDigest(tables: [:]), plans: plan.steps.map { StepPlan($0, registry: registry) }, model: model)
        }
        #expect(inputs[0].inSwift.isEmpty)
        #expect(inputs[1].inSwift == [EntityMappingIdentity(step: StepIdentity(source: "Ranks 1", destination: "Ranks 3"), pass: 1, name: "PersonToPerson")])
        #expect(inputs[1].differences(from: inputs[0]) == ["other entity mappings run in Swift (then: none; now: PersonToPerson (Ranks 1 → Ranks 3, pass 1))"])
    }
}
