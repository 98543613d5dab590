import ArgumentParser
import Foundation
import Tern

struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Show what tern migrate would do, without writing anything.",
        discussion: """
            Prints the steps, their passes and entity mappings, the rows and batches of each (counted \
            in the store for the first step, estimated for later ones), and for every property \
            mapping whether it runs as SQL inside SQLite or in Swift through a policy. Steps that \
            run as schema changes list their SQL.
            """
    )

    @OptionGroup var inputs: MigrationInputs

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var global: GlobalOptions

    func run() throws {
        try reportingErrors {
            let (migration, plan) = try inputs.plan(options: inputs.options, logger: global.makeLogger(label: "tern.plan"))
            let estimate = try migration.estimate(plan)
            if json {
                print(String(decoding: try PlanEstimate.encoder.encode(estimate), as: UTF8.self))
            } else {
                print(Self.text(estimate))
            }
        }
    }

    static func text(_ estimate: PlanEstimate) -> String {
        guard !estimate.steps.isEmpty else {
            return "The store is at \(estimate.storeVersion), the version to migrate to: nothing to migrate."
        }
        let count = Formatting.count
        var lines = estimate.fromStoreModel ? [MigrationSummary.storeModelNote] : []
        lines += [
            "The store is at \(estimate.storeVersion); \(estimate.steps.count) step\(estimate.steps.count == 1 ? "" : "s") to \(estimate.targetVersion), in batches of \(count(estimate.batchSize)) source objects, \(estimate.workers) worker\(estimate.workers == 1 ? "" : "s") for mappings in Swift."
        ]
        if let route = estimate.plan.route { lines.append("Route: \(route).") }
        lines += estimate.plan.notes.map { "Note: \($0)." }
        for (index, step) in estimate.steps.enumerated() {
            lines.append("")
            let how = step.schemaChanges == nil ? "the store is copied once" : "applied in place at once"
            let origin =
                step.origin == ["inferred"]
                ? "inferred mapping: \(how)" : step.origin.map { URL(fileURLWithPath: $0).lastPathComponent }.joined(separator: " then ")
            lines.append("Step \(index + 1), \(step.source) → \(step.destination) (\(origin)):")
            if let reason = step.copiedInstead { lines.append("  not in place: \(reason)") }
            lines += step.dropped.map { "  drops: \($0)\($0.values == nil ? " (counted when the step runs)" : "")" }
            if let changes = step.schemaChanges {
                lines.append("  applied in place as schema changes, without reading rows:")
                lines += changes.map { "    \($0)" }
                continue
            }
            for pass in step.passes {
                lines.append("  pass \(pass.number) of \(step.passes.count): \(count(pass.rows)) rows in \(count(pass.batches)) batches")
                for mapping in pass.entityMappings {
                    let what = [mapping.source, mapping.destination].map { $0 ?? "—" }.joined(separator: " → ")
                    let rows =
                        mapping.source == nil || mapping.destination == nil
                        ? "nothing to copy"
                        : "\(mapping.rowsCounted ? "" : "about ")\(count(mapping.rows)) rows, \(count(mapping.batches)) batches, in \(mapping.runsIn)"
                    lines.append("    \(mapping.name) [\(mapping.type)] \(what): \(rows)")
                    if let filter = mapping.filter { lines.append("      where \(filter)") }
                    if let policy = mapping.policy { lines.append("      policy \(policy)") }
                    for property in mapping.properties {
                        lines.append("      \(property.name) = \(property.expression ?? "(default)")   [\(property.runsIn)]")
                    }
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}
