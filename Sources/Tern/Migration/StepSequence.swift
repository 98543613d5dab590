import Foundation
import Logging
import TernMapping
import TernModel
import TernStore
import TernPlanning
import TernDurability
@_spi(Testing) import TernExecution

/// The steps of a run, one after another: each from the store or the previous step's store into
/// its own, in place or copied as planned, what it drops counted (and refused, when asked), then
/// committed to the run's record so a resume starts at the next one.
struct StepSequence {
    let plan: MigrationPlan
    let stepPlans: [StepPlan]
    /// The store being migrated (its real path).
    let store: String
    private(set) var run: MigrationRun
    let manifestPath: String
    let options: MigrationOptions
    let logger: Logger
    /// Objects in the store (`StoreMetadata.objectCount`): the run's outline, and what an
    /// in-place step reports.
    let sourceObjects: Int
    /// A new run's checks of the source, reading beside the first step; they write the record.
    let startChecks: StartChecks?

    init(
        plan: MigrationPlan, stepPlans: [StepPlan], store: String, run: MigrationRun, manifestPath: String, options: MigrationOptions,
        logger: Logger, startChecks: StartChecks? = nil
    ) throws {
        self.startChecks = startChecks
        self.plan = plan
        self.stepPlans = stepPlans
        self.store = store
        self.run = run
        self.manifestPath = manifestPath
        self.options = options
        self.logger = logger
        sourceObjects = try StoreMetadata.objectCount(storeAt: store)
    }

    /// Runs step `index` (from 0) and records it done.
    mutating func run(_ index: Int) throws -> StepReport {
        let step = plan.steps[index]
        let input = index == 0 ? store : run.stepFiles[index - 1]
        let file = run.stepFiles[index]
        options.progress?(
            .stepStarted(
                step: index + 1, steps: plan.steps.count, passes: step.passes.count, source: step.source.versionName,
                destination: step.destination.versionName))
        logger.info(
            "migrating",
            metadata: [
                "from": "\(step.source.versionName)", "to": "\(step.destination.versionName)", "mapping": "\(step.origins.joined(separator: ", "))",
            ])
        var dropped = try DataLoss.count(DataLoss.dropped(by: step), of: step, in: input)
        // The first step's selection was checked on the store while planning.
        if index > 0 { try NothingCarried.checkSelection(of: step, store: input) }
        if stepPlans[index].inPlace == nil {
            dropped += try DataLoss.tablesOutsideModel(of: step, in: input) + AppSchemaObjects.notCarried(by: step, from: input)
        }
        if options.refuseDataLoss, !dropped.isEmpty {
            throw MigrationError.dataLoss(step: step.identity, dropped: dropped)
        }
        var report: StepReport
        var memory = PeakMemoryMeter()
        if let statements = stepPlans[index].inPlace {
            var inPlace = try InPlaceStep.apply(
                statements, of: step, from: input, working: file, isOriginal: index == 0, shouldStop: options.shouldStop)
            let pass = PassReport(
                pass: 1, passes: 1, mappings: ["schema changes"], objects: sourceObjects,
                seconds: inPlace.duration.seconds, peakResidentMemory: memory.peak())
            inPlace.passes = [pass]
            options.progress?(.passFinished(pass))
            report = inPlace
        } else {
            let checks = index == 0 ? startChecks : nil
            // What a stopped run read of the source holds for the very file it read, written by
            // no one since; a later step's input is a store of the run's own.
            let keptScansHold = index > 0 || RunStart.untouched(run, store: store)
            do {
                report = try StepRunner.run(
                    stepPlans[index], from: input, to: file, options: options, logger: logger,
                    externalData: StoreMigration.externalData(of: run, from: store, step: index), resume: true, startChecks: checks,
                    keptScansHold: keptScansHold)
            } catch let error where !(error is MigrationInterrupted) {
                // A store with rows Core Data never writes may fail a pass in its own way first.
                throw checks?.failure() ?? error
            }
            if let checks {
                try checks.settle()
                run = checks.run
            }
        }
        // What the step found while it ran (objects a policy left unassociated) follows.
        report.dropped = dropped + report.dropped
        options.reached?(.stepCommitted)
        run.completed = index + 1
        try run.save(at: manifestPath)
        if index > 0 { StoreFiles.remove(input) }
        options.progress?(.stepFinished(step: index + 1, inPlace: !report.appliedInPlace.isEmpty || report.mappings.isEmpty))
        return report
    }
}
