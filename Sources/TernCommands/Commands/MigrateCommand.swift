import ArgumentParser
import Foundation
import Logging
import Tern
import TernLoop

struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to its model's current version.",
        discussion: """
            Finds the store's version, then the chain of steps to the current version: a mapping model \
            found beside the model (Tern's mappings/*.yaml, Xcode's .xcmappingmodel) or given with \
            --mapping, else an inferred one. Migrates into temporary stores beside the original, \
            verifies, then keeps the original as NAME~.sqlite and puts the migrated store in its \
            place. The original is never modified before the migrated store is complete and verified.
            """
    )

    @OptionGroup var inputs: MigrationInputs

    @Option(help: "Write the migrated store here and leave the original untouched (must not exist).")
    var out: String?

    @Flag(help: "Keep the association tables in the migrated store, for auditing.")
    var keepAssociations = false

    @Flag(
        name: [.customLong("no-data-loss"), .customLong("strict")],
        help:
            "Refuse a step that would drop data (exit 65) instead of reporting it: what an inferred step drops, an entity of both versions a mapping model leaves out, objects a policy creates without a source object."
    )
    var noDataLoss = false

    @Flag(help: "Print the chain of steps and the plan without writing anything.")
    var dryRun = false

    @Option(
        help: ArgumentHelp(
            "Run the plan tern plan --json saved, exactly as it is (no --model: its versions and mappings are in it); the store must have the schema it was made from.",
            valueName: "PLAN.json"))
    var plan: String?

    @Flag(help: "Continue an interrupted migration from its last checkpoint.")
    var resume = false

    @Flag(help: "Discard an unfinished migration's work and start again.")
    var restart = false

    @Flag(
        help:
            "Migrate while the app keeps writing to the store (WAL mode; mappings in SQL that keep keys): triggers log changes, a copy is migrated and caught up, then the migrated store takes the original's place once every other process closed it."
    )
    var live = false

    @Option(
        help: ArgumentHelp(
            "With --live: how long to wait, once caught up, for other processes to close the store, and how long to stay behind a faster writer, before stopping resumably.",
            valueName: "SECONDS"))
    var closeTimeout: Double = 60

    @Option(
        help: ArgumentHelp(
            "With --live: idle runs Tern's threads only on cores the app and everything else leave free until the cut-over (Linux SCHED_IDLE), so its commits keep their latency; normal finishes the copy sooner.",
            valueName: "idle|normal"))
    var livePriority: LivePriority = .idle

    @Flag(help: "Remove what a --live run left in and beside the store (its triggers, change log, mirror and migrated copy), and stop.")
    var abort = false

    @Option(
        help: ArgumentHelp(
            "Write a chart of resident memory and objects/s over the run's time, each pass and stage marked, to this SVG file once it finishes.",
            valueName: "FILE.svg"))
    var report: String?

    @Option(help: "Progress: auto (a bar when standard error is a terminal), bar, json (one object per line on standard output), none.")
    var progress = ProgressStyle.auto

    @OptionGroup var global: GlobalOptions

    func validate() throws {
        guard !(resume && restart) else { throw ValidationError("--resume and --restart cannot go together") }
        if plan != nil {
            let fixed = [
                ("--model", !inputs.model.isEmpty), ("--to", inputs.to != nil), ("--mapping", !inputs.mapping.isEmpty),
                ("--version-info", inputs.versionInfo != nil), ("--step-by-step", inputs.stepByStep),
            ].filter(\.1).map(\.0)
            guard fixed.isEmpty else { throw ValidationError("--plan fixes the versions and mappings: \(fixed.joined(separator: ", ")) cannot go with it") }
        }
        if let out, let problem = StoreMigration.outputPlaceProblem(out) { throw ValidationError(problem) }
        guard report.map({ $0.hasSuffix(".svg") }) ?? true else { throw ValidationError("--report writes an SVG chart: name a FILE.svg") }
        if live {
            let clashing = [("--out", out != nil), ("--restart", restart), ("--report", report != nil), ("--keep-associations", keepAssociations)]
                .filter(\.1).map(\.0)
            guard clashing.isEmpty else { throw ValidationError("--live migrates the store in place: \(clashing.joined(separator: ", ")) cannot go with it") }
            guard inputs.model.isEmpty == false || plan != nil else { throw ValidationError("--live needs --model (or --plan), with --resume too") }
        }
        guard closeTimeout.isFinite, closeTimeout >= 0, closeTimeout < 1e9 else { throw ValidationError("--close-timeout takes a number of seconds") }
    }

    func run() throws {
        // Every file the migration creates gets no more access than the store.
        try StorePermissions.restricting(for: inputs.store) { try migrate() }
    }

    private func migrate() throws {
        let logger = global.makeLogger(label: "tern.migrate")
        let stop = CommandEnvironment.current.stop
        stop.installSignalHandlers()
        if abort {
            try reportingErrors {
                let removed = try StoreMigration.abortLive(store: inputs.store)
                print(removed.isEmpty ? "No live migration of \(inputs.store) to abort." : "Removed:\n" + removed.map { "  \($0)" }.joined(separator: "\n"))
            }
            return
        }
        try reportingErrors {
            var options = inputs.options
            options.keepAssociations = keepAssociations
            options.refuseDataLoss = noDataLoss
            options.shouldStop = stop.isRequested
            CrashTest.install(on: &options)
            let renderer = dryRun ? nil : progress.attach(to: &options)
            let sampler = report != nil && !dryRun ? MemorySampler() : nil
            if let sampler {
                let rendering = options.progress
                options.progress = { event in
                    sampler.observe(event); rendering?(event)
                }
            }
            // A log pipeline reading --progress json always gets a last line: finished or failed.
            do {
                try runMigration(options: options, renderer: renderer, sampler: sampler, logger: logger)
            } catch  where progress == .json && !dryRun {
                JSONProgressWriter.write(FailedLine(error))
                throw error
            }
        }
    }

    /// Plans, prints the plan (unless the output is JSON lines), runs, and prints the summary.
    private func runMigration(options: MigrationOptions, renderer: (any ProgressRenderer)?, sampler: MemorySampler?, logger: Logger) throws {
        let (migration, plan) = try migrationAndPlan(options: options, logger: logger)
        if progress != .json || dryRun { print(MigrationSummary.plan(plan)) }
        if dryRun, live {
            print(
                try migration.liveRefusal(plan).map { "--live would refuse it: \($0)" }
                    ?? "--live can run it: every step's objects are written again from the rows a change names.")
        }
        if dryRun { return }
        if live {
            // A live run killed after its swap finds the store at its target: it tidies up.
            let events = LiveProgressLines(json: progress == .json)
            let finished = try {
                defer { renderer?.finish() }
                return try migration.runBlockingLive(
                    plan, resume: resume,
                    live: LiveMigrationOptions(
                        closeTimeout: .milliseconds(Int64(closeTimeout * 1000)), priority: livePriority, progress: events.print))
            }()
            if progress == .json {
                JSONProgressWriter.write(LiveProgressLines.Finished(finished))
            } else {
                print(LiveProgressLines.summary(finished))
            }
            return
        }
        // Nothing to migrate; the run only finishes the clean-up of one killed after its swap.
        guard !plan.steps.isEmpty else {
            let finished = try migration.runBlocking(plan, output: out)
            if progress == .json { JSONProgressWriter.write(FinishedLine(finished)) }
            return
        }
        if restart { try StoreMigration.discardUnfinished(into: out ?? inputs.store) }
        // The bar is cleared however the run ends, before anything else is printed.
        let finished = try {
            defer { renderer?.finish() }; return try migration.runBlocking(plan, output: out, resume: resume)
        }()
        if let sampler, let report {
            let title = "tern migrate \(URL(fileURLWithPath: inputs.store).lastPathComponent): \(plan.storeVersion) → \(plan.targetVersion)"
            try Data(sampler.chart(title: title).utf8).write(to: URL(fileURLWithPath: report))
        }
        if progress == .json {
            JSONProgressWriter.write(FinishedLine(finished))
        } else {
            print(MigrationSummary.report(finished))
        }
    }
}

extension MigrateCommand {
    /// The plan to run: the one saved with `--plan`, or one made now from the model and mappings.
    /// With `--resume`, the run goes on with the plan its record holds (`StoreMigration` compares
    /// the plan given with it first, and refuses a model or mapping changed since); without
    /// `--model`, the recorded plan is the one given.
    func migrationAndPlan(options: MigrationOptions, logger: Logger) throws -> (StoreMigration, MigrationPlan) {
        if let plan {
            let saved = try MigrationPlan.read(from: plan)
            return (StoreMigration(store: inputs.store, model: saved.model, options: options, logger: logger), saved)
        }
        if resume, inputs.model.isEmpty, let recorded = try StoreMigration.unfinishedPlan(into: out ?? inputs.store) {
            let migration = StoreMigration(store: inputs.store, model: recorded.model, options: options, logger: logger)
            // Killed after its swap, the run left the migrated store in place: nothing is left but
            // the record's clean-up, which a plan with no steps does.
            if case .compatible = try VersionMatch.find(in: recorded.model, storeAt: inputs.store).verdict, out == nil {
                return (migration, try migration.plan())
            }
            return (migration, recorded)
        }
        if resume, inputs.model.isEmpty {
            throw ValidationError(
                "nothing to resume: no unfinished migration into \(out ?? inputs.store) (tern status lists them); to start one, give --model")
        }
        return try inputs.plan(options: options, logger: logger)
    }
}

/// The last line of `--progress json` when the run failed: what kind of failure (the exit code's),
/// whether `--resume` may get further, and the message.
struct FailedLine: Encodable {
    var event = "failed"
    var kind: String
    var exitCode: Int32
    var resumable: Bool
    var message: String

    init(_ error: any Error) {
        let failure = TernFailure(error)
        kind = "\(failure.kind)"
        exitCode = TernExitCode.of(failure.kind)
        resumable = failure.isResumable
        message = "\(failure.underlying)"
    }
}

/// Text for people about plans and finished migrations.
enum MigrationSummary {
    /// Said first when the store's own model is the source version.
    static let storeModelNote = "No version of the model wrote the store; it carries its own model (Z_MODELCACHE), which is the source version."

    static func plan(_ plan: MigrationPlan) -> String {
        guard !plan.steps.isEmpty else {
            return "The store is at \(plan.storeVersion), the version to migrate to: nothing to migrate."
        }
        var lines = plan.fromStoreModel ? [MigrationSummary.storeModelNote] : []
        lines += ["The store is at \(plan.storeVersion); migrating to \(plan.targetVersion) in \(plan.steps.count) step\(plan.steps.count == 1 ? "" : "s"):"]
        if let route = plan.route { lines.append("  route: \(route)") }
        lines += plan.notes.map { "  note: \($0)" }
        for (index, step) in plan.steps.enumerated() {
            let origin = step.isInferred ? "inferred mapping" : step.origins.map { URL(fileURLWithPath: $0).lastPathComponent }.joined(separator: " then ")
            lines.append("  \(index + 1). \(step.source.versionName) → \(step.destination.versionName) (\(origin))")
            if let reason = step.copiedInstead { lines.append("       not in place: \(reason)") }
            for (pass, mapping) in step.passes.enumerated() {
                for entity in mapping.entities {
                    let m = entity.mapping
                    let what = [m.sourceEntity, m.destinationEntity].map { $0 ?? "—" }.joined(separator: " → ")
                    let passNote = step.passes.count > 1 ? "pass \(pass + 1): " : ""
                    lines.append(
                        "       \(passNote)\(m.name) [\(m.type.rawValue)] \(what)\(m.filterPredicate.map { " where \($0)" } ?? "")\(m.policy.map { " policy \($0)" } ?? "")"
                    )
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    static func report(_ report: StoreMigration.Report) -> String {
        var lines: [String] = [""]
        for (index, step) in report.steps.enumerated() {
            let planned = report.plan.steps[index]
            let objects = step.written.isEmpty ? step.mappings.reduce(0) { $0 + $1.created } : step.written.values.reduce(0, +)
            if !step.appliedInPlace.isEmpty || step.mappings.isEmpty {
                lines.append(
                    "Step \(index + 1), \(planned.source.versionName) → \(planned.destination.versionName): applied in place as schema changes, without reading rows, in \(String(format: "%.2f", step.duration.seconds)) s"
                )
                lines += step.appliedInPlace.map { "  \($0)" }
                lines += step.verified.map { "  verified: \($0)" }
                lines += droppedLines(step)
                continue
            }
            lines.append(
                "Step \(index + 1), \(planned.source.versionName) → \(planned.destination.versionName): \(objects) objects in \(String(format: "%.2f", step.duration.seconds)) s"
            )
            if !step.written.isEmpty {
                lines.append("  written: " + step.written.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            }
            for mapping in step.mappings {
                lines.append("  \(mapping.name): \(mapping.selected) selected, \(mapping.created) created\(mapping.keptKeys ? " (keys kept)" : "")")
                if !mapping.verified.isEmpty {
                    lines.append("    verified: \(mapping.verified.joined(separator: "; "))")
                }
                if let times = mapping.swiftTimes, times.seconds > 0 {
                    lines.append(
                        String(
                            format: "    in Swift: %.2f s; the writer busy %.2f s (%.0f%%), ", times.seconds, times.writingSeconds,
                            100 * times.writingSeconds / times.seconds)
                            + "the policy on \(times.workers) worker\(times.workers == 1 ? "" : "s") "
                            + String(format: "%.2f s in all", times.transformingSeconds))
                }
            }
            for (name, count) in step.links.sorted(by: { $0.key < $1.key }) {
                let speed =
                    step.linkSeconds[name].map { seconds in
                        " in \(String(format: "%.2f", seconds)) s"
                            + (seconds > 0 && count > 0 ? " (\(Formatting.count(Int(Double(count) / seconds))) links/s)" : "")
                    } ?? ""  // written with their objects in stage 1, or by an earlier run
                lines.append("  \(name): \(count) links\(speed)")
            }
            lines += step.verified.map { "  verified: \($0)" }
            lines += droppedLines(step)
        }
        lines += passTable(report)
        if !report.tolerated.isEmpty {
            lines.append("")
            lines.append(
                "What Core Data reads past, taken as it reads it: a value kept as it is; a link to no object links nothing, and is not carried (--strict refuses both):"
            )
            lines += report.tolerated.map { "  carried: \($0)" }
        }
        lines.append("")
        lines.append(
            "Migrated store: \(report.destination)\(report.backup.map { "; the original is kept as \($0)" } ?? "") (\(String(format: "%.2f", report.duration.seconds)) s in all)"
        )
        return lines.joined(separator: "\n")
    }

    /// What an inferred step dropped, so it is never silent.
    static func droppedLines(_ step: StepReport) -> [String] {
        step.dropped.map { "  dropped: \($0)" }
    }

    /// One row per pass: what it did, how fast, and its peak memory.
    static func passTable(_ report: StoreMigration.Report) -> [String] {
        guard report.steps.contains(where: { !$0.passes.isEmpty }) else { return [] }
        var lines = ["", "Passes:", "  step  pass  objects        seconds   objects/s    peak RSS     entity mappings"]
        for (index, report) in report.steps.enumerated() {
            lines += report.passes.map { passRow(step: index + 1, $0) }
            for (seconds, what) in [(report.verifying, "verification"), (report.indexing, "indexes")] where seconds > .zero {
                lines.append(
                    "  \(index + 1)".padding(toLength: 14, withPad: " ", startingAt: 0) + String(repeating: " ", count: 15)
                        + String(format: "%-9.2f", seconds.seconds) + String(repeating: " ", count: 26) + what)
            }
        }
        return lines
    }

    private static func passRow(step: Int, _ pass: PassReport) -> String {
        // A pass an earlier run did (a resume replays it in no time) has no rate of its own.
        let rate = pass.seconds < 0.01 ? "—" : Formatting.count(Int(pass.objectsPerSecond))
        var row = "  "
        row += column(String(step), 6)
        row += column("\(pass.pass)/\(pass.passes)", 6)
        row += column(Formatting.count(pass.objects), 15)
        row += column(String(format: "%.2f", pass.seconds), 9)
        row += column(rate, 13)
        row += column(Formatting.mebibytes(pass.peakResidentMemory), 13)
        return row + pass.mappings.joined(separator: ", ")
    }

    /// `text` padded to `width`; a longer one is kept whole, a space after it.
    private static func column(_ text: String, _ width: Int) -> String {
        text.count < width ? text.padding(toLength: width, withPad: " ", startingAt: 0) : text + " "
    }
}

/// The last line of `--progress json`: where the migrated store is, and every pass.
struct FinishedLine: Encodable {
    struct Pass: Encodable {
        var step: Int
        var stepName: String
        var report: PassReport
    }

    struct Step: Encodable {
        var step: Int
        var stepName: String
        var seconds: Double
        var verifyingSeconds: Double
        var indexingSeconds: Double
        /// "Mapping.relationship" → links the step wrote for it.
        var links: [String: Int]
        /// "Mapping.relationship" → seconds spent recreating its links after the objects, for
        /// those recreated apart (the rest are written with their rows).
        var linkSeconds: [String: Double]
        /// Per entity mapping: what it selected and created, and what verification proved.
        var mappings: [Mapping]
        /// What an inferred step dropped, with its non-NULL values.
        var dropped: [DroppedData]
        /// Destination entity → the objects the step's store holds, policies' included.
        var written: [String: Int]
    }

    struct Mapping: Encodable {
        var name: String
        var pass: Int
        var selected: Int
        var created: Int
        var keptKeys: Bool
        var swiftTimes: StepReport.SwiftTimes?
        var verified: [String]
    }

    var event = "finished"
    /// Like every line's: the run is done.
    var fraction = 1.0
    var destination: String
    var backup: String?
    var seconds: Double
    /// Waiting for the source's checks and digest, at the start and at delivery.
    var checkingSourceSeconds: Double
    /// What the source holds that Core Data reads all the same, carried as it reads it.
    var tolerated: [String]
    var steps: [Step]
    var passes: [Pass]

    init(_ report: StoreMigration.Report) {
        destination = report.destination
        backup = report.backup
        seconds = report.duration.seconds
        checkingSourceSeconds = report.checkingSource.seconds
        tolerated = report.tolerated
        let names = report.plan.steps.map { "\($0.source.versionName) → \($0.destination.versionName)" }
        steps = report.steps.enumerated().map { index, step in
            Step(
                step: index + 1, stepName: names[index], seconds: step.duration.seconds, verifyingSeconds: step.verifying.seconds,
                indexingSeconds: step.indexing.seconds, links: step.links, linkSeconds: step.linkSeconds,
                mappings: step.mappings.map {
                    Mapping(
                        name: $0.name, pass: $0.pass, selected: $0.selected, created: $0.created, keptKeys: $0.keptKeys, swiftTimes: $0.swiftTimes,
                        verified: $0.verified)
                },
                dropped: step.dropped, written: step.written)
        }
        passes = report.steps.enumerated().flatMap { index, step in
            step.passes.map { Pass(step: index + 1, stepName: names[index], report: $0) }
        }
    }
}
extension LivePriority: ExpressibleByArgument {}
