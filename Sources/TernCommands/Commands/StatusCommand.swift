import ArgumentParser
import Foundation
import Tern

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show where an interrupted migration stands.",
        discussion:
            "Reads the migration's record beside the store (or beside --out's path) and the checkpoint in the step it was in. Exit status 0 when there is an unfinished migration, 1 when there is none."
    )

    @Argument(help: "The store being migrated.")
    var store: String

    @Option(help: "The --out path the migration was writing to, if any.")
    var out: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() throws {
        try reportingErrors {
            if out == nil, try reportLiveLeftovers() { return }
            guard let status = try MigrationStatus.read(finalPath: out ?? store) else {
                print("No unfinished migration of \(store).")
                throw ExitCode(1)
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(status), as: UTF8.self))
                return
            }
            print("An unfinished migration of \(status.store) to \(status.target): \(status.completedSteps) of \(status.steps.count) steps done.")
            for (index, step) in status.steps.enumerated() {
                let state = index < status.completedSteps ? "done" : (index == status.completedSteps ? "in progress" : "to do")
                print("  step \(index + 1), \(step): \(state)")
            }
            for unit in status.units {
                let place = unit.stage == "create instances" && !unit.done ? " (up to source key \(unit.lastKey))" : ""
                print(
                    "    \(unit.stage) — \(unit.name): \(unit.done ? "done," : "stopped at") \(unit.count)\(unit.stage == "create instances" ? " objects" : " links")\(place)"
                )
            }
            // The record holds the plan: --resume alone runs it; with --model, the model and
            // mappings are checked against it first.
            print("Continue with: tern migrate \(status.store)\(status.output.map { " --out \($0)" } ?? "") --resume")
        }
    }

    /// What a `--live` run left in and beside the store, said when there is any: true then.
    private func reportLiveLeftovers() throws -> Bool {
        guard FileManager.default.fileExists(atPath: store) else { return false }
        let (triggers, log, phase) = try StoreMigration.liveLeftovers(store: store)
        guard !triggers.isEmpty || log || phase != nil else { return false }
        if json {
            struct Live: Encodable {
                var store: String
                var live = true
                var phase: String?
                var triggers: [String]
                var changeLog: String?
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let status = Live(store: store, phase: phase, triggers: triggers, changeLog: log ? "TERN_LIVE_CHANGES" : nil)
            print(String(decoding: try encoder.encode(status), as: UTF8.self))
            return true
        }
        print("A live migration of \(store) is unfinished\(phase.map { " (stopped while \($0))" } ?? ""): the app's changes are being logged.")
        if log { print("  change log: table TERN_LIVE_CHANGES") }
        for trigger in triggers { print("  trigger: \(trigger)") }
        print("Continue with: tern migrate \(store) --model MODEL --live --resume; or remove it all with: tern migrate \(store) --abort")
        return true
    }
}
