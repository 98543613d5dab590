import Foundation
import Logging
import Testing
import TernGenerate

@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernSQLite

/// Whether a policy kept every source key is found once, as its mapping's stage 1 commits, and
/// recorded with it: a resume reads the record and finds nothing out again.
@Suite("A policy's kept keys, recorded")
struct KeptKeysRecordTests {
    @Test("a policy that gave every source object its key is recorded so in the step's checkpoint, with its stage 1; a resume reads it back")
    func recordedWithStageOne() throws {
        let folder = try TemporaryDirectory()
        let model = try ModelLoader.load(Configs.path("library"))
        let store = folder.path("Library.sqlite")
        _ = try DataGenerator.generate(model: model.versions[0], at: store, rows: 120, seed: 8)
        let output = folder.path("out.sqlite")
        var options = MigrationOptions(batchSize: 25, workers: 1, registry: .builtIn(inSwift: true))
        options.beforeVerification = { _ in throw MigrationInterrupted() }
        let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let stopped = StoreMigration(store: store, model: model, options: options, logger: quiet)
        let plan = try stopped.plan()
        _ = try requireUnderlying(MigrationInterrupted.self) { _ = try stopped.runBlocking(plan, output: output) }

        let stepPlan = try #require(plan.stepPlans?.first)
        let mayKeep = stepPlan.mappings.filter(\.policyMayKeepKeys).map(\.number)
        #expect(!mayKeep.isEmpty, "the library's first step has no mapping a policy may keep keys of")
        let recorded = try StepWorkspace.recorded(inStoreAt: MigrationRun.stepFile(for: output, index: 1)).map(\.0)
        let kept = recorded.compactMap { unit -> Int? in if case .keptKeys(let number) = unit { number } else { nil } }
        // The default policy makes one object per source object, with its key.
        #expect(Set(kept) == Set(mayKeep), "recorded \(recorded)")

        options.beforeVerification = nil
        let resumed = StoreMigration(store: store, model: model, options: options, logger: quiet)
        _ = try resumed.runBlocking(plan, output: output, resume: true)
        #expect(try StoreMetadata.read(storeAt: output, countingRows: false).versionName == model.currentVersionName)
    }
}
