import Foundation
import TernModel
import TernStore
import TernMapping
import TernLoop
import Logging
import TernSQLite
import TernPlanning
import TernDurability

/// Migrates one step, source store → new destination store, in Core Data's three stages per
/// entity mapping: create instances, recreate relationships, validate.
///
/// The destination connection attaches the source read-only as `src`. Everything a mapping says
/// in value expressions runs as SQL inside SQLite, batch by batch in source key order: each
/// batch's destination rows, association rows and checkpoint commit in one transaction of the
/// destination file. Foreign keys whose targets are already known are computed in the same
/// INSERT … SELECT (a join through the association table); the rest are set afterwards with
/// set-based SQL over the source's relationship pairs.
final class StepMigrator {
    /// What every stage reads: the step, its layouts and associations, the connection, the options.
    let inputs: StepInputs
    let logger: Logger
    var step: MigrationStep { inputs.step }
    var options: MigrationOptions { inputs.options }
    var connection: Connection { inputs.connection }
    var sourceLayout: StoreLayout { inputs.sourceLayout }
    var destinationLayout: StoreLayout { inputs.destinationLayout }
    var associations: AssociationTables { inputs.associations }
    /// Next destination key per destination root table, saved with every checkpoint.
    var nextKeys: [String: Int64] {
        get { workspace.nextKeys }
        // In place: the writer bumps a counter per object it creates.
        _modify { yield &workspace.nextKeys }
    }
    /// Stage 2, and the links stage 1 wrote already.
    let relationships: RelationshipRecreation
    /// Relationship mappings left for stage 2, per entity mapping number.
    var pending: [Int: [String]] = [:]
    var completed: Set<Int> = []
    /// The policy of each entity mapping that runs in Swift, by its number in the step (names
    /// repeat across passes).
    let policies: [Int: any EntityMigrationPolicy]
    var report = StepReport()
    /// Per entity mapping number: objects of its destination entity a policy created without
    /// associating them with a source object, nor linking them (this run's batches).
    var unassociated: [Int: Int] = [:]
    /// Per entity mapping number (a policy's that may keep keys): the associations this run
    /// wrote that are the identity — an object of the mapping's destination entity took the key
    /// of the source object it was associated with, once — and the others. All identity, as
    /// many as objects selected: the policy kept every key, as `policyKeptEveryKey` would find.
    var identityAssociations: [Int: (identity: Int, other: Int)] = [:]
    /// The step's work tables and checkpoint: what earlier runs committed, and where this run is.
    let workspace: StepWorkspace
    /// The current pass's peak memory.
    var passMemory = PeakMemoryMeter()
    /// Whether what an earlier run of the step read of its source and kept still holds: the
    /// source is the very file that run read, written by no one since (`StepSequence`).
    private let keptScansHold: Bool
    /// Verification's source scans an earlier run of the step read and kept, when they hold:
    /// not read again.
    private var keptScans: [SQLFragment: ScanResult] = [:]
    /// `tern_running_rank` on the connection: lists numbered ahead (`ListRanks`).
    let runningRank = RunningRank()
    /// A new run's checks of the source, reading beside the first pass (`StartChecks`): the
    /// record is written at the first batch boundary after they end, and validation waits for them.
    let startChecks: StartChecks?
    /// Where the reads beside the pass wait while it needs every core (`CoreGate`): the start
    /// checks' gate when they run beside it.
    let coreGate: CoreGate

    init(
        plan: StepPlan, connection: Connection, sourceAttachURI: String, externalData: ExternalDataFolders,
        options: MigrationOptions, logger: Logger, startChecks: StartChecks? = nil, keptScansHold: Bool = false
    ) throws {
        self.logger = logger
        self.startChecks = startChecks
        self.keptScansHold = keptScansHold
        coreGate = startChecks?.gate ?? CoreGate()
        let step = plan.step
        let sourceLayout = step.sourceLayout
        let destinationLayout = StoreLayout(model: step.destination)
        let associations = AssociationTables(plan: plan, source: sourceLayout, destination: destinationLayout)
        inputs = StepInputs(
            step: step, sourceLayout: sourceLayout, destinationLayout: destinationLayout, associations: associations,
            connection: connection, sourceAttachURI: sourceAttachURI, externalData: externalData, options: options)
        var policies: [Int: any EntityMigrationPolicy] = [:]
        for planned in plan.mappings where planned.runsInSwift {
            policies[planned.number] = try options.registry.policy(for: planned.entityMapping) ?? DefaultMigrationPolicy()
        }
        self.policies = policies
        try SQLCompiler.prepare(connection, externalData: externalData)
        try connection.registerChecksum()
        try runningRank.register(on: connection)
        try connection.execute("ATTACH DATABASE \(quoteLiteral(sourceAttachURI)) AS src")
        workspace = try StepWorkspace(connection: connection, associations: associations, withPolicies: !policies.isEmpty)
        relationships = RelationshipRecreation(inputs: inputs, workspace: workspace)
        try raiseKeyCountersAboveSourceKeys()
    }

    /// Runs every pass: stage 1 for all entity mappings, then stage 2, then stage 3. Units an
    /// earlier run finished are replayed (their effect on this run's plan, no writes); the unit it
    /// was in continues from its last committed batch.
    func run() throws {
        let started = ContinuousClock.now
        // Verification's source side, as it will be built: what an earlier run kept of it, and
        // what is read beside the passes.
        let expected = keptScansHold || options.workers > 1 ? try verification().expectedScans() : []
        var lastPass: [PlannedMapping] = []
        if keptScansHold { keptScans = workspace.scanCache.scans(of: expected) }
        let early = try expectationsReadEarly(expected)
        for pass in step.passes.indices {
            let passStarted = ContinuousClock.now
            passMemory = PeakMemoryMeter()
            let entries = associations.entries.filter { $0.pass == pass }
            emit(.passStarted(pass: pass + 1, passes: step.passes.count, mappings: entries.map(\.entityMapping.name)))
            for entry in entries {
                try policyHook(entry) { try $0.beginEntityMapping(entry.entityMapping) }
                if entry.runsInSwift, let policy = policies[entry.number] {
                    try createInstances(entry, writer: SwiftInstanceBatches(entry, policy: policy, migrator: self))
                } else {
                    try createInstances(entry, writer: SQLInstanceBatches(entry, migrator: self))
                }
                try policyHook(entry) { try $0.endInstanceCreation(entry.entityMapping) }
            }
            let created = ContinuousClock.now
            logger.debug("created the pass's objects", metadata: ["pass": "\(pass + 1)", "seconds": "\((created - passStarted).seconds)"])
            for entry in entries {
                try relationships.recreate(pending[entry.number] ?? [], of: entry, ordered: true)
            }
            for entry in entries {
                try relationships.recreate(pending[entry.number] ?? [], of: entry, ordered: false)
                if let policy = policies[entry.number] {
                    try relationships.callRelationshipHook(entry, policy: policy)
                }
            }
            try relationships.applyPolicyLinks(pass: pass)
            for entry in entries {
                try policyHook(entry) { try $0.endRelationshipCreation(entry.entityMapping) }
            }
            // A resumed run whose pass was validated before it stopped has nothing new to check.
            let validated = WorkUnit.validated(pass: pass)
            // Rules broken by rows Core Data never writes are reported as those rows.
            try startChecks?.settle()
            // The last pass's mappings without a policy (whose hooks come in Core Data's order)
            // are validated once the indexes are building beside (below): the checks read while
            // the build writes. Like verification, a resumed run validates them again.
            let isLast = pass == step.passes.count - 1
            if isLast { lastPass = entries.filter { policies[$0.number] == nil } }
            let validatedNow = isLast ? entries.filter { policies[$0.number] != nil } : entries
            if !validatedNow.isEmpty, !workspace[validated].done {
                let validating = ContinuousClock.now
                try validate(validatedNow)
                try workspace.commit(validated, done: true) { StepWorkspace.Progress() }
                logger.debug("validated the pass", metadata: ["pass": "\(pass + 1)", "seconds": "\((ContinuousClock.now - validating).seconds)"])
            }
            for entry in entries {
                try policyHook(entry) { try $0.endEntityMapping(entry.entityMapping) }
            }
            let objects = report.mappings.filter { $0.pass == pass + 1 }.reduce(0) { $0 + $1.created }
            let passReport = PassReport(
                pass: pass + 1, passes: step.passes.count, mappings: entries.map(\.entityMapping.name), objects: objects,
                seconds: (ContinuousClock.now - passStarted).seconds, peakResidentMemory: passMemory.peak())
            report.passes.append(passReport)
            emit(.passFinished(passReport))
        }
        try relationships.catchUpLinksToLaterPasses()
        try relationships.numberUnnumberedLists()
        // Derived attributes hold what Core Data's triggers would have made of the links.
        for statement in destinationLayout.derivedValueStatements { try connection.execute(statement) }
        report.links = relationships.links
        report.linkSeconds = relationships.linkTimes.mapValues(\.seconds)
        // No batch boundaries from here to the end of the step: a stop request interrupts the
        // running statement instead, and the step's checks and indexes run again on --resume.
        try connection.interrupt(when: options.shouldStop)
        let verifying = ContinuousClock.now
        emit(.stepStage(.verifying))
        var verification = try verification()
        verification.readEarly = keptScans
        if let early {
            let read = early.finish()
            verification.readEarly.merge(read) { _, new in new }
            logger.debug(
                "the source's side of verification read during the pass",
                metadata: ["scans": "\(read.count) of \(early.planned)", "readByAnEarlierRun": "\(keptScans.count)"])
        }
        try options.beforeVerification?(connection)
        // With a second worker, the indexes are built beside the last validation and
        // verification; `finish` makes any the build had not begun when verification ended.
        let indexes = try IndexBuild(
            store: connection.path, statements: indexStatements, threads: options.workers, beside: options.workers > 1, shouldStop: options.shouldStop)
        let besideIndexBuild = { indexes.isBuildingBeside }
        do {
            // Mappings compared value by value have their rules counted in verification's scan
            // of their objects; the others are validated first, on their own.
            let alone = lastPass.filter { !$0.valuesFollowExpressions }
            if !alone.isEmpty {
                let validating = ContinuousClock.now
                try MigrationInterrupted.whenAsked(options.shouldStop) { try validate(alone, besideIndexBuild: besideIndexBuild) }
                logger.debug("validated the last pass", metadata: ["seconds": "\((ContinuousClock.now - validating).seconds)"])
            }
            let validation = StepValidation(inputs: inputs, swiftWriters: try workspace.swiftWriters())
            for entry in lastPass where entry.valuesFollowExpressions {
                verification.rulesCountedAlong[entry.number] = validation.countedAlong(entry)
            }
            // Named as validation names them, reading the breaking objects again.
            verification.rulesBroken = { [self] entries in try validate(entries, besideIndexBuild: besideIndexBuild) }
            verification.besideIndexBuild = besideIndexBuild
            try MigrationInterrupted.whenAsked(options.shouldStop) { try verification.run() }
        } catch MigrationFailure.verification(let message) {
            indexes.stop()
            throw MigrationFailure.verification(message + policyNote(for: message))
        } catch {
            indexes.stop()
            throw error
        }
        report = verification.report
        report.written = try writtenObjects()
        let finishing = ContinuousClock.now
        emit(.stepStage(.indexing))
        indexes.finishCurrent()
        try MigrationInterrupted.whenAsked(options.shouldStop) { try finish(indexes) }
        report.verifying = finishing - verifying
        report.indexing = ContinuousClock.now - finishing
        report.duration = ContinuousClock.now - started
    }

    /// Which policies wrote what a failed verification names (an entity mapping, or an entity of
    /// a relationship's sides, before the first colon): the policy's code is where to look.
    func policyNote(for message: String) -> String {
        let subject = message.prefix { $0 != ":" }
        let words = Set(subject.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" }).map(String.init))
        let named = associations.entries.filter { entry in
            entry.entityMapping.policy != nil && (words.contains(entry.entityMapping.name) || words.contains(entry.destinationEntity))
        }
        guard !named.isEmpty else { return "" }
        let written = named.map { entry in
            let policy = policies[entry.number].map { $0.name(in: entry.entityMapping) } ?? entry.entityMapping.policy ?? "?"
            return "policy \(policy) in entity mapping \(entry.entityMapping.name)"
        }
        return " (written by " + written.joined(separator: ", ") + ": look there first)"
    }

    /// The objects of each destination entity the step's store holds: a table of one entity is
    /// counted without reading its rows (SQLite counts a b-tree's cells); one shared by an
    /// inheritance tree is grouped by `Z_ENT`.
    private func writtenObjects() throws -> [String: Int] {
        let names = Dictionary(destinationLayout.entities.values.map { ($0.number, $0.name) }, uniquingKeysWith: { first, _ in first })
        var written: [String: Int] = [:]
        let byTable = Dictionary(grouping: destinationLayout.entities.values, by: \.table)
        for (table, entities) in byTable.sorted(by: { $0.key < $1.key }) {
            if entities.count == 1, let entity = entities.first {
                let count = Int(try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(table))")?.int64 ?? 0)
                if count > 0 { written[entity.name] = count }
                continue
            }
            let statement = try connection.prepare("SELECT Z_ENT, count(*) FROM \(quoteIdentifier(table)) GROUP BY Z_ENT")
            var rows = statement.rows()
            while let row = try rows.next() {
                if let name = names[Int(row.int64(at: 0))] { written[name, default: 0] += Int(row.int64(at: 1)) }
            }
        }
        return written
    }

    /// Verification's source side, read beside the passes when a second worker is free, after
    /// the start checks, on a thread that takes only the cores the pass leaves idle.
    private func expectationsReadEarly(_ expected: [SQLFragment]) throws -> EarlyExpectations? {
        guard options.workers > 1 else { return nil }
        // What an earlier run of the step read and kept is not read again.
        let queries = expected.filter { keptScans[$0] == nil }
        var waitForTurn: @Sendable () -> Void = {}
        if let startChecks { waitForTurn = startChecks.waitForEnd }
        return try EarlyExpectations(
            queries, keepingIn: workspace.scanCache, sourceAttachURI: inputs.sourceAttachURI, externalData: inputs.externalData, waitForTurn: waitForTurn,
            gate: coreGate,
            shouldStop: options.shouldStop)
    }

    /// The step's verification, with what it reads: the workspace's policy links and writers.
    private func verification() throws -> StepVerification {
        StepVerification(inputs: inputs, policyLinked: workspace.policyLinkedRelationships, swiftWriters: try workspace.swiftWriters(), report: report)
    }

    /// Stage 3 of a pass: the destination model's rules over every object its entity mappings
    /// created, then each policy's own validation; throws the violations, up to the limit.
    private func validate(_ entries: [PlannedMapping], besideIndexBuild: @escaping () -> Bool = { false }) throws {
        var violations: [ValidationViolation] = []
        var validation = StepValidation(inputs: inputs, swiftWriters: try workspace.swiftWriters())
        validation.besideIndexBuild = besideIndexBuild
        let broken = try validation.violations(of: entries, limit: options.violationLimit)
        for (entry, broken) in zip(entries, broken) where violations.count < options.violationLimit {
            violations += broken.prefix(options.violationLimit - violations.count)
            if let policy = policies[entry.number] {
                // Policies report what they find; they read the store, never change it.
                let reader = try Connection(path: connection.path, configuration: .init(mode: .readOnly))
                defer { try? reader.close() }
                // As the writer reads: Tern's SQL functions, and the source as `src`.
                try SQLCompiler.prepare(reader, externalData: inputs.externalData)
                try reader.execute("ATTACH DATABASE \(quoteLiteral(inputs.sourceAttachURI)) AS src")
                let context = ValidationContext(mapping: entry.entityMapping, connection: reader, layout: destinationLayout)
                try MigrationError.inPolicy(policy.name(in: entry.entityMapping), mapping: entry.entityMapping) {
                    try policy.performCustomValidation(context)
                }
                violations += context.violations.prefix(options.violationLimit - violations.count)
            }
        }
        if !violations.isEmpty {
            throw MigrationFailure.validation(violations)
        }
    }

    /// Runs one hook of the entry's policy, if it has one, naming the policy in what it throws.
    func policyHook(_ entry: PlannedMapping, _ hook: (any EntityMigrationPolicy) throws -> Void) throws {
        guard let policy = policies[entry.number] else { return }
        try MigrationError.inPolicy(policy.name(in: entry.entityMapping), mapping: entry.entityMapping) { try hook(policy) }
    }

    /// Reports progress; every report is also a moment to sample memory.
    func emit(_ event: MigrationEvent) {
        passMemory.sample()
        options.progress?(event)
    }

    /// Throws when asked to stop; called at batch boundaries, right after a commit. The run's
    /// record is written here once the start checks end.
    func stopIfAsked() throws {
        if options.shouldStop() { throw MigrationInterrupted() }
        try startChecks?.settleIfEnded()
    }
}
