import TernCommands
import Foundation
import TernLoop
import TernSQLite

/// The benchmark's results: the table for people (Markdown) and for programs (JSON).
struct BenchReport: Codable {
    var books: Int
    /// Documents in the attachments benchmark, when it ran.
    var documents: Int? = nil
    /// Objects and links in the chain benchmark, when it ran.
    var chainObjects: Int? = nil
    var chainLinks: Int? = nil
    var machine: String
    /// How many times each run was taken (`--repeat`), when more than once: each result is the
    /// median run's.
    var repeats: Int? = nil
    var results: [BenchResult]
    /// The live benchmark's runs, when it ran.
    var live: [LiveBenchResult]? = nil

    /// The book benchmark's runs, and the attachment benchmark's (named "attachments: …").
    private var bookResults: [BenchResult] {
        results.filter { !$0.name.hasPrefix(Self.attachments) && !$0.name.hasPrefix(Self.chain) && !$0.name.hasPrefix(Self.history) }
    }
    private var historyResults: [BenchResult] { results.filter { $0.name.hasPrefix(Self.history) } }
    private static let history = "history: "
    private var attachmentResults: [BenchResult] { results.filter { $0.name.hasPrefix(Self.attachments) } }
    private var chainResults: [BenchResult] { results.filter { $0.name.hasPrefix(Self.chain) } }
    private static let attachments = "attachments: "
    private static let chain = "chain: "

    static func machine() -> String {
        let cpu =
            (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?.split(separator: "\n")
            .first { $0.hasPrefix("model name") }?.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        return "\(ProcessStats.availableParallelism) cores (\(cpu)), SQLite \(Connection.libraryVersion)"
    }

    private func result(_ prefix: String, books: Int? = nil) -> BenchResult? {
        results.first {
            $0.name.hasPrefix(prefix) && ($0.name.hasPrefix(Self.attachments) || $0.name.hasPrefix(Self.chain) || $0.books == (books ?? self.books))
        }
    }

    var markdown: String {
        func mebibytes(_ bytes: Int?) -> String { bytes.map(Formatting.mebibytes) ?? "—" }
        let count = Formatting.count
        var lines = [
            "Benchmark: \(count(books)) books, \(count(3 * books)) pages, 1,000 categories (Bench 1 → Bench 2: rename, `price * 1.04`, author split, relationships recreated). \(machine). Each store is left still for 3.5 s once generated, as a store at rest is (a file state proves nothing until it has been still for 2 whole seconds)."
                + (repeats.map {
                    " Each run was taken \($0) times, one after the other: its figures are the median run's, with the shortest and longest time in brackets."
                } ?? ""),
            "",
            "| run | books | wall time | × SQL script | × naive | objects/s | peak RSS (per pass) |", "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for result in bookResults {
            let passes = result.passes.count > 1 ? " (" + result.passes.map { mebibytes($0.peakResidentMemory) }.joined(separator: ", ") + ")" : ""
            let ratios = Self.ratios(result, script: self.result("hand-written SQL", books: result.books), naive: self.result("naive", books: result.books))
            lines.append(
                "| \(result.name) | \(count(result.books)) | \(Self.wallTime(result)) | \(ratios) | \(count(Int(result.objectsPerSecond))) | \(mebibytes(result.peakResidentMemory))\(passes) |"
            )
        }
        lines.append("")
        if let tern = result("tern: all pushed down"), let ceiling = result("hand-written SQL") {
            lines.append("- tern (SQL) / hand-written SQL ceiling: \(String(format: "%.2f×", tern.seconds / ceiling.seconds)) the time")
        }
        if let tern = result("tern: all pushed down"), let floor = result("VACUUM INTO") {
            lines.append(
                "- tern (SQL) / VACUUM INTO of the source (the floor: the file rewritten, nothing migrated): \(String(format: "%.2f×", tern.seconds / floor.seconds)) the time"
            )
        }
        if let tern = result("tern: all pushed down"), let verifying = tern.verifyingSeconds {
            lines.append(
                "- verification by content in the pushed-down run: \(Self.share(verifying, of: tern.seconds)), with the index build beside it"
                    + Self.indexesAfter(tern))
        }
        if let tern = result("tern: all pushed down"), let checking = tern.checkingSourceSeconds {
            lines.append(
                "- waiting for the source's checks (its scan for rows Core Data never writes and its content digest, read beside the first pass; at delivery, read again only if the source moved): \(String(format: "%.2f s of %.2f s", checking, tern.seconds))"
            )
        }
        if let tern = result("tern: all pushed down"), let naive = result("naive") {
            lines.append(
                "- tern (SQL) / naive baseline: \(String(format: "%.2f×", tern.seconds / naive.seconds)) the time, \(Self.memory(tern, against: naive))")
        }
        if let whole = result("tern: all pushed down to SQL"), let resumed = result("tern: all pushed down to SQL, killed") {
            lines.append(
                "- killed at 50% and resumed (SQL): \(String(format: "%+.0f%%", 100 * (resumed.seconds / whole.seconds - 1))) over the uninterrupted run")
        }
        if let one = result("tern: CPU-heavy Swift policy, --workers 1"), let two = result("tern: CPU-heavy Swift policy, --workers 2") {
            lines.append("- --workers 2 over --workers 1 (CPU-heavy Swift policy): \(String(format: "%.2f×", one.seconds / two.seconds))")
        }
        lines += linkRateLines(bookResults)
        let sizes = Set(bookResults.filter { $0.name.hasPrefix("tern: all pushed down") }.map(\.books)).sorted()
        if sizes.count > 1 {
            for prefix in ["tern: all pushed down", "tern: author split"] {
                let peaks = sizes.compactMap { size in result(prefix, books: size).map { "\(count(size)) books \(mebibytes($0.peakResidentMemory))" } }
                lines.append("- peak memory by size, \(prefix.dropFirst(6)): " + peaks.joined(separator: ", "))
            }
            // Growth: time per object at each size against the smallest (linear is 1.00×).
            if let smallest = result("tern: all pushed down", books: sizes[0]), smallest.seconds > 0 {
                let growth = sizes.compactMap { size in
                    result("tern: all pushed down", books: size).map { run in
                        let perObject = (run.seconds / Double(max(run.objects, 1))) / (smallest.seconds / Double(max(smallest.objects, 1)))
                        return
                            "\(count(run.objects)) objects \(String(format: "%.2f s", run.seconds)) (\(String(format: "%.2f×", run.seconds / smallest.seconds)) the time, \(String(format: "%.2f×", perObject)) per object)"
                    }
                }
                lines.append("- growth, all pushed down: " + growth.joined(separator: ", "))
                let shares = sizes.compactMap { size in
                    result("tern: all pushed down", books: size).flatMap { run in
                        run.verifyingSeconds.map {
                            "\(count(run.objects)) objects \(Self.share($0, of: run.seconds))"
                        }
                    }
                }
                lines.append("- verification's share of the run by size, all pushed down: " + shares.joined(separator: ", "))
            }
        }
        lines += charts()
        lines += attachmentLines()
        lines += chainLines()
        lines += historyLines()
        lines += liveLines()
        return lines.joined(separator: "\n") + "\n"
    }

    /// The live benchmark: the app's commit latency alone and during the run, and Tern's part of
    /// the downtime; of several runs, the one of median p99 ratio, with the spread.
    func liveLines() -> [String] {
        guard let live, !live.isEmpty else { return [] }
        let runs = live.sorted { $0.p99Ratio < $1.p99Ratio }
        let run = runs[runs.count / 2]
        func spread(_ value: (LiveBenchResult) -> Double, _ format: String) -> String {
            guard runs.count > 1, let low = runs.map(value).min(), let high = runs.map(value).max() else { return "" }
            return " (" + String(format: format, low) + "–" + String(format: format, high) + ")"
        }
        func row(_ name: String, _ latency: CommitLatency) -> String {
            "| \(name) | \(Formatting.count(latency.commits)) | " + String(format: "%.2f ms | %.2f ms | %.1f ms |", latency.p50, latency.p99, latency.max)
        }
        let milliseconds = { (seconds: Double) in String(format: "%.1f ms", seconds * 1000) }
        return [
            "",
            "Live: `tern migrate --live --workers \(run.workers)` on a \(Formatting.count(run.objects))-object store (Bench 1 → 2, \(Formatting.count(run.books)) books) while an app (Tests/LiveWriter/writer.py, Python's sqlite3, writing as Core Data does) commits \(Formatting.count(run.rate)) times a second, each with an fdatasync, and closes the store \(Int(LiveBench.closingAfter)) s after Tern says it waits for that. Every run's result equalled, row for row, an offline migration of what the app left."
                + (runs.count > 1 ? " \(runs.count) runs: the median run by the app's p99 ratio, the spread of all runs in brackets." : ""),
            "",
            "| the app's commits | commits | p50 | p99 | longest |", "| --- | --- | --- | --- | --- |",
            row("alone (no Tern, no triggers)", run.alone),
        ] + (run.triggers.map { [row("with Tern's triggers, Tern not running", $0)] } ?? []) + [
            row("during the live run", run.during),
            row("  capture, copy and full verification", run.copying),
            row("  caught up, until the app closes", run.caughtUp),
            "",
            "- the app's p99 commit latency during the run / alone: " + String(format: "%.2f×", run.p99Ratio) + spread(\.p99Ratio, "%.2f×") + " (goal ≤ 2×)",
            "- Tern's part of the downtime (from the app's close, under the write lock): " + String(format: "%.0f ms", run.cutOverSeconds * 1000)
                + spread({ $0.cutOverSeconds * 1000 }, "%.0f")
                + " (goal ≤ 200 ms): taking the lock \(milliseconds(run.lockSeconds)), the last round \(milliseconds(run.roundSeconds)) (\(Formatting.count(Int(run.cutOverEntries))) changes), verifying the changed objects \(milliseconds(run.verificationSeconds)), finishing \(milliseconds(run.finishSeconds))",
            String(format: "- from the app's close to Tern's exit: %.2f s; Tern's whole run: %.1f s", run.closedToExitSeconds, run.seconds),
        ]
    }

    /// The long-history benchmark: a small store of a generated model's first version, checked
    /// and migrated to its last (the goal: ≤ 0.3 s and ≤ 1 s, release build).
    private func historyLines() -> [String] {
        guard let generated = historyResults.first(where: { $0.name.hasSuffix("generate the store") }) else { return [] }
        var lines = [
            "",
            "Long history: a generated Xcode model of \(generated.books) versions (each adds an attribute with a default), a store of \(Formatting.count(generated.objects)) objects at its first version.",
            "",
            "| run | wall time | peak RSS |", "| --- | --- | --- |",
        ]
        for result in historyResults where !result.name.hasSuffix("generate the store") {
            lines.append(
                "| \(result.name.dropFirst(Self.history.count)) | \(Self.wallTime(result)) | \(result.peakResidentMemory.map(Formatting.mebibytes) ?? "—") |")
        }
        return lines
    }

    /// The chain benchmark: its table and its ratios.
    private func chainLines() -> [String] {
        guard let chainObjects, !chainResults.isEmpty else { return [] }
        let count = Formatting.count
        var lines = Self.table(
            "Chain: \(count(chainObjects)) objects (authors and books)\(chainLinks.map { " with \(count($0)) many-to-many links" } ?? ""), Chain 1 → 4, one mapping inferred following renames through Chain 2 and 3: Book renamed Publication, its notes dropped; its authors made ordered, and so each author's edited publications (a list kept in their editor key, recreated through it), an edition added with a default; an author's name renamed (configs/chain).",
            chainResults, prefix: Self.chain, script: result("chain: hand-written"), naive: result("chain: naive"))
        if let tern = result("chain: tern, one inferred mapping"), let ceiling = result("chain: hand-written") {
            lines.append("- tern (one mapping) / hand-written SQL in one pass: \(String(format: "%.2f×", tern.seconds / ceiling.seconds)) the time")
        }
        if let tern = result("chain: tern, one inferred mapping"), let floor = result("chain: VACUUM INTO") {
            lines.append("- tern (one mapping) / VACUUM INTO of the source (the floor): \(String(format: "%.2f×", tern.seconds / floor.seconds)) the time")
        }
        if let tern = result("chain: tern, one inferred mapping"), let naive = result("chain: naive") {
            lines.append(
                "- tern (one mapping) / naive row by row: \(String(format: "%.2f×", tern.seconds / naive.seconds)) the time, \(Self.memory(tern, against: naive))"
            )
        }
        if let tern = result("chain: tern, one inferred mapping"), let steps = result("chain: tern, step by step") {
            lines.append("- one mapping / step by step: \(String(format: "%.2f×", tern.seconds / steps.seconds)) the time")
        }
        if let tern = result("chain: tern, one inferred mapping"), let verifying = tern.verifyingSeconds {
            lines.append(
                "- verification by content in the one-mapping run (every value, link and position): \(Self.share(verifying, of: tern.seconds))"
                    + Self.indexesAfter(tern))
        }
        return lines + linkRateLines(chainResults)
    }

    /// "0.58 s of 6.21 s (9%)".
    private static func share(_ part: Double, of whole: Double) -> String {
        String(format: "%.2f s of %.2f s (%.0f%%)", part, whole, 100 * part / whole)
    }

    /// What a run's index build took after verification, when it says.
    private static func indexesAfter(_ run: BenchResult) -> String {
        run.indexingSeconds.map { String(format: "; the indexes not made by then took %.2f s after it", $0) } ?? ""
    }

    /// Links recreated after the objects (a to-many through its inverse foreign key, a join
    /// table, an ordered list's keys), per run that recreated any: links per second.
    private func linkRateLines(_ runs: [BenchResult]) -> [String] {
        runs.filter { $0.books == runs.first?.books || $0.name.hasPrefix(Self.chain) }.compactMap { run in
            guard let rates = run.recreatedLinks, !rates.isEmpty else { return nil }
            let each = rates.map {
                "\($0.relationship) \(Formatting.count($0.links)) links in \(String(format: "%.2f s", $0.seconds)) (\(Formatting.count(Int($0.perSecond))) links/s)"
            }
            return "- links recreated after the objects, \(run.name): " + each.joined(separator: "; ")
        }
    }

    /// The attachments benchmark: its table and its ratios.
    private func attachmentLines() -> [String] {
        guard let documents, !attachmentResults.isEmpty else { return [] }
        let count = Formatting.count
        var lines = Self.table(
            "Attachments: \(count(documents)) documents in 100 folders, a quarter of their attachments in files of 100–160 KiB beside the store (configs/attachments).",
            attachmentResults, prefix: Self.attachments, script: result("attachments: hand-written"), naive: result("attachments: naive"))
        if let tern = result("attachments: tern, copied"), let ceiling = result("attachments: hand-written") {
            lines.append(
                "- tern (files carried and proven) / hand-written SQL and hard links: \(String(format: "%.2f×", tern.seconds / ceiling.seconds)) the time")
        }
        if let tern = result("attachments: tern, copied"), let naive = result("attachments: naive") {
            lines.append(
                "- tern / naive row by row with files copied: \(String(format: "%.2f×", tern.seconds / naive.seconds)) the time, \(Self.memory(tern, against: naive))"
            )
        }
        return lines
    }

    /// A section's heading and its table of runs, named without the section's `prefix`, each
    /// with its time as a multiple of the section's SQL script and naive program.
    private static func table(_ heading: String, _ results: [BenchResult], prefix: String, script: BenchResult?, naive: BenchResult?) -> [String] {
        ["", heading, "", "| run | wall time | × SQL script | × naive | objects/s | peak RSS |", "| --- | --- | --- | --- | --- | --- |"]
            + results.map { result in
                "| \(result.name.dropFirst(prefix.count)) | \(wallTime(result)) | \(ratios(result, script: script, naive: naive)) | \(Formatting.count(Int(result.objectsPerSecond))) | \(result.peakResidentMemory.map(Formatting.mebibytes) ?? "—") |"
            } + [""]
    }

    /// A run's wall time, with the shortest and longest of its repeats.
    private static func wallTime(_ result: BenchResult) -> String {
        let median = String(format: "%.2f s", result.seconds)
        guard let runs = result.runSeconds, let shortest = runs.first, let longest = runs.last else { return median }
        return median + String(format: " (%.2f–%.2f)", shortest, longest)
    }

    /// A run's wall time as a multiple of the SQL script's and of the naive program's, as two
    /// table cells (a dash for the store's generation, which is not a migration).
    private static func ratios(_ result: BenchResult, script: BenchResult?, naive: BenchResult?) -> String {
        let isMigration = !result.name.contains("generate")
        return [script, naive].map { reference in
            guard isMigration, let reference, reference.seconds > 0 else { return "—" }
            return String(format: "%.2f×", result.seconds / reference.seconds)
        }.joined(separator: " | ")
    }

    /// How tern's peak memory compares with a baseline's, in words that read right either way.
    private static func memory(_ tern: BenchResult, against baseline: BenchResult) -> String {
        let ratio = Double(baseline.peakResidentMemory ?? 0) / Double(max(tern.peakResidentMemory ?? 1, 1))
        return ratio >= 1 ? String(format: "%.1f× less peak memory", ratio) : String(format: "%.2f× the peak memory", 1 / ratio)
    }

    /// The same runs as an SVG chart (`latest.svg`): wall time and peak memory per run, tern's
    /// runs beside the SQL script and the naive program they are measured against.
    var svg: String {
        let runs = bookResults.filter { $0.books == books && !$0.name.hasPrefix("generate") }
        let isReference = { (run: BenchResult) in run.name.hasPrefix("hand-written") || run.name.hasPrefix("naive") }
        let time = BarChart.Panel(
            title: "wall time (shorter is better)",
            bars: runs.map {
                .init(label: $0.name, value: $0.seconds, text: String(format: "%.2f s", $0.seconds), isReference: isReference($0))
            })
        let memory = BarChart.Panel(
            title: "peak resident memory",
            bars: runs.map {
                .init(
                    label: $0.name, value: Double($0.peakResidentMemory ?? 0), text: $0.peakResidentMemory.map(Formatting.mebibytes) ?? "—",
                    isReference: isReference($0))
            })
        return BarChart.svg(title: "tern bench: \(Formatting.count(books)) books, \(Formatting.count(3 * books)) pages — \(machine)", panels: [time, memory])
    }

    /// Bar charts of the main size's runs, in text so they render wherever the Markdown does:
    /// wall time and peak memory, each bar scaled to the largest.
    private func charts() -> [String] {
        let runs = bookResults.filter { $0.books == books && !$0.name.hasPrefix("generate") }
        guard !runs.isEmpty else { return [] }
        let width = runs.map(\.name.count).max()!
        func chart(_ title: String, _ value: (BenchResult) -> Double?, _ label: (Double) -> String) -> [String] {
            let values = runs.compactMap { run in value(run).map { (run.name, $0) } }
            let largest = values.map(\.1).max() ?? 1
            return ["", title, "```"]
                + values.map { name, value in
                    let bar = String(repeating: "█", count: max(1, Int((value / largest * 40).rounded())))
                    return name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + bar.padding(toLength: 41, withPad: " ", startingAt: 0)
                        + label(value)
                } + ["```"]
        }
        return chart("Wall time, \(Formatting.count(books)) books (shorter is better):", { $0.seconds }, { String(format: "%.2f s", $0) })
            + chart("Peak resident memory, \(Formatting.count(books)) books:", { $0.peakResidentMemory.map(Double.init) }, { Formatting.mebibytes(Int($0)) })
    }
}
