import Foundation
#if canImport(FoundationXML)
    import FoundationXML
#endif
import Testing
import TernSQLite

/// CI's smoke run of the end-to-end benchmark: a tiny store, every run, both result files.
@Suite("tern bench, run as a process")
struct BenchCommandTests {
    @Test("tern bench --books 1500 --documents 200: every variant and baseline runs and the table and JSON are written")
    func smoke() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-bench-\(UUID().uuidString)")
        let results = directory.appendingPathComponent("results").path
        let outcome = try TernProcess.run([
            "bench", "--books", "1500", "--memory-sizes", "300", "--documents", "200", "--chain-objects", "2000", "--history-versions", "20", "--live-books",
            "1000",
            "--live-rate", "200", "--live-alone-seconds", "1", "--results", results,
            "--model", CheckAndGenerateCommandTests.repository.appendingPathComponent("configs/bench").path,
        ])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let markdown = try String(contentsOfFile: results + "/latest.md", encoding: .utf8)
        for row in [
            "| tern: all pushed down to SQL | 1,500 |", "| tern: author split in a Swift policy | 1,500 |",
            "| tern: CPU-heavy Swift policy, --workers 2 | 1,500 |",
            "| hand-written SQL script (ceiling) | 1,500 |", "| naive row by row (baseline) | 1,500 |", "| tern: all pushed down to SQL | 300 |",
            "tern (SQL) / hand-written SQL ceiling:", "tern (SQL) / naive baseline:", "--workers 2 over --workers 1",
            "waiting for the source's checks", "Wall time, 1,500 books (shorter is better):", "Peak resident memory, 1,500 books:",
            "Attachments: 200 documents", "| tern, copied as they are (1 → 2) |", "| tern, decoded into the store (1 → 2 → 3) |",
            "| hand-written SQL and hard links (ceiling) |", "| naive row by row, files copied (baseline) |",
            "tern (files carried and proven) / hand-written SQL and hard links:", "tern / naive row by row with files copied:",
            "Chain: 2,000 objects (authors and books) with", "| tern, one inferred mapping (renames followed) |", "| tern, step by step (--step-by-step) |",
            "| hand-written SQL, one pass (ceiling) |", "| naive row by row (baseline) |",
            "tern (one mapping) / hand-written SQL in one pass:", "tern (one mapping) / naive row by row:", "one mapping / step by step:",
            "verification by content in the one-mapping run (every value, link and position):",
            "verification's share of the run by size, all pushed down: 2,200 objects",
            "links recreated after the objects, chain: tern, one inferred mapping (renames followed): AuthorToAuthor.edited",
            "Long history: a generated Xcode model of 20 versions", "| tern check, 20 versions |", "| tern migrate, 20 versions |",
            "BookToPublication.authors",
            "Live: `tern migrate --live --workers 2` on a 5,000-object store (Bench 1 → 2, 1,000 books)", "| alone (no Tern, no triggers) |",
            "| with Tern's triggers, Tern not running |",
            "| during the live run |", "caught up, until the app closes |", "the app's p99 commit latency during the run / alone:",
            "Tern's part of the downtime (from the app's close, under the write lock):",
        ] {
            #expect(markdown.contains(row), "missing: \(row)")
        }
        // Every migration of the main size (and of each section) is a multiple of its section's
        // SQL script and naive program; each reference is 1.00× itself.
        let rowsOfTables = markdown.split(separator: "\n").filter {
            $0.hasPrefix("| ") && !$0.hasPrefix("| run") && !$0.hasPrefix("| ---") && !$0.contains("generate") && !$0.contains("| 300 |")
                && !$0.contains(", 20 versions |")  // the long history's: no baselines
                && !$0.contains(" ms |") && !$0.hasPrefix("| the app's commits")  // the live benchmark's latencies
        }
        #expect(rowsOfTables.count == 17)
        // The floor beside the books' and the chain's workloads: the source rewritten by VACUUM INTO.
        #expect(markdown.components(separatedBy: "| VACUUM INTO of the source (floor) |").count == 3, "the books' and the chain's floor rows")
        #expect(markdown.contains("tern (SQL) / VACUUM INTO of the source") && markdown.contains("tern (one mapping) / VACUUM INTO of the source"))
        for row in rowsOfTables {
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let ratios = cells.filter { $0.hasSuffix("×") }
            #expect(ratios.count == 2, "\(row)")
            if row.contains("hand-written") { #expect(ratios.first == "1.00×", "\(row)") }
            if row.contains("naive") { #expect(ratios.last == "1.00×", "\(row)") }
        }
        // `tern bench report` renders the same Markdown again from the JSON alone.
        try FileManager.default.removeItem(atPath: results + "/latest.md")
        #expect(try TernProcess.run(["bench", "report", "--results", results]).status == 0)
        #expect(try String(contentsOfFile: results + "/latest.md", encoding: .utf8) == markdown)
        let json = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: results + "/latest.json"))) as? [String: Any])
        let rows = try #require(json["results"] as? [[String: Any]])
        // Every migration and baseline wrote all 6,000 + 1,000 objects (4 × 1,500 books' worth, 1,000 categories).
        for row in rows where (row["books"] as? Int) == 1500 && !(row["name"] as? String ?? "").hasPrefix("generate") {
            #expect(row["objects"] as? Int == 7_000, "\(row["name"] ?? "")")
            #expect((row["peakResidentMemory"] as? Int ?? 0) > 1_000_000)
        }
        // Every attachments run wrote the 200 documents and 100 folders.
        let attachmentRuns = rows.filter {
            ($0["name"] as? String ?? "").hasPrefix("attachments: ") && !($0["name"] as? String ?? "").hasSuffix("generate the store")
        }
        #expect(attachmentRuns.count == 4)
        for row in attachmentRuns { #expect(row["objects"] as? Int == 300, "\(row["name"] ?? "")") }
        // Every chain run wrote the 1,000 authors and 1,000 publications.
        let chainRuns = rows.filter { ($0["name"] as? String ?? "").hasPrefix("chain: ") && !($0["name"] as? String ?? "").hasSuffix("generate the store") }
        #expect(chainRuns.count == 5)
        for row in chainRuns { #expect(row["objects"] as? Int == 2000, "\(row["name"] ?? "")") }
        // The charts: a bar per run in time and in memory, and memory over time with each pass marked.
        let bars = try SVGFile(results + "/latest.svg")
        #expect(bars.count(of: "rect") >= 2 * 6 + 2)
        #expect(bars.texts.contains("tern: author split in a Swift policy") && bars.texts.contains("naive row by row (baseline)"))
        for chart in ["memory-sql.svg", "memory-policy.svg"] {
            let memory = try SVGFile(results + "/" + chart)
            #expect(memory.count(of: "polyline") == 2, "\(chart)")
            #expect(memory.texts.contains("step 1 pass 1"), "\(chart): \(memory.texts)")
        }
        // The live run: the app's commits alone and during the run, and the cut-over's parts.
        let live = try #require((json["live"] as? [[String: Any]])?.first)
        #expect(live["objects"] as? Int == 5_000)
        #expect(((live["alone"] as? [String: Any])?["commits"] as? Int ?? 0) > 50)
        #expect(((live["during"] as? [String: Any])?["commits"] as? Int ?? 0) > 50)
        #expect(((live["triggers"] as? [String: Any])?["commits"] as? Int ?? 0) > 50)
        #expect((live["cutOverSeconds"] as? Double ?? 0) > 0 && (live["lockSeconds"] as? Double) != nil)
        try? FileManager.default.removeItem(at: directory)
    }

    @Test("tern bench live --repeat 3: three live runs, each proved equal to an offline migration, the median shown with the spread")
    func liveRepeated() throws {
        let directory = try ScratchFolder("tern-bench-live")
        let results = directory.path("results")
        let outcome = try TernProcess.run([
            "bench", "live", "--live-books", "300", "--live-rate", "100", "--live-alone-seconds", "1", "--repeat", "3", "--results", results,
            "--model", CheckAndGenerateCommandTests.repository.appendingPathComponent("configs/bench").path,
        ])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let markdown = try String(contentsOfFile: results + "/live.md", encoding: .utf8)
        #expect(markdown.contains("3 runs: the median run by the app's p99 ratio"), "\(markdown)")
        let ratio = try #require(markdown.split(separator: "\n").first { $0.hasPrefix("- the app's p99") })
        #expect(ratio.contains("–"), "the spread of the three runs: \(ratio)")
        let json = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: results + "/live.json"))) as? [String: Any])
        #expect((json["live"] as? [Any])?.count == 3)
        #expect(outcome.standardOutput == markdown + "\n")
    }

    @Test("the chain's hand-written script and naive program write the store tern writes: the same objects, links and order keys")
    func chainBaselinesWriteWhatTernWrites() throws {
        let directory = try ScratchFolder("tern-bench-chain")
        let chain = CheckAndGenerateCommandTests.repository.appendingPathComponent("configs/chain").path
        let source = directory.path("chain.sqlite")
        #expect(try TernProcess.run(["generate", "--model", chain, "--version", "Chain 1", "--rows", "300", source]).status == 0)
        let (tern, script, naive) = (directory.path("tern.sqlite"), directory.path("script.sqlite"), directory.path("naive.sqlite"))
        #expect(try TernProcess.run(["migrate", source, "--model", chain, "--out", tern, "--progress", "none"]).status == 0)
        #expect(try TernProcess.run(["bench", "chain-sql-ceiling", source, script, "--model", chain]).status == 0)
        #expect(try TernProcess.run(["bench", "chain-naive", source, naive, "--model", chain]).status == 0)
        let written = try StoreDump.lines(tern)
        let ordered = try Connection(path: tern, configuration: .init(mode: .readOnly)).scalar(
            "SELECT count(*) FROM ZPUBLICATION WHERE ZEDITOR IS NOT NULL AND Z_FOK_EDITOR >= 2048")
        #expect((ordered?.int64 ?? 0) > 100, "publications with an editor and their place in its list")
        #expect(try StoreDump.lines(script) == written)
        // The naive program leaves Z_PRIMARYKEY's counters as they were made.
        #expect(try StoreDump.lines(naive).filter { !$0.hasPrefix("Z_PRIMARYKEY:") } == written.filter { !$0.hasPrefix("Z_PRIMARYKEY:") })
    }

    @Test(
        "a kept --directory runs again: the benchmark store is reused, the attachments and chain stores made anew; --repeat 3 keeps each run's median with every time"
    )
    func keptDirectoryRunsAgain() throws {
        let directory = try ScratchFolder("tern-bench-again")
        let results = directory.url.appendingPathComponent("results").path
        let arguments = [
            "bench", "--books", "200", "--memory-sizes", "100", "--documents", "100", "--chain-objects", "200", "--live-books", "0",
            "--directory", directory.url.appendingPathComponent("work").path, "--results", results,
            "--model", CheckAndGenerateCommandTests.repository.appendingPathComponent("configs/bench").path,
        ]
        for run in 1...2 {
            let outcome = try TernProcess.run(arguments + (run == 2 ? ["--repeat", "3"] : []))
            #expect(outcome.status == 0, "run \(run): \(outcome.standardError)")
        }
        let report = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: results + "/latest.json"))) as? [String: Any])
        #expect(report["repeats"] as? Int == 3)
        let runs = try #require(report["results"] as? [[String: Any]])
        for run in runs where !(run["name"] as? String ?? "").contains("generate") {
            let times = run["runSeconds"] as? [Double] ?? []
            #expect(times.count == 3 && times == times.sorted() && run["seconds"] as? Double == times[1], "\(run["name"] ?? "?"): \(times)")
        }
        #expect(try String(contentsOfFile: results + "/latest.md", encoding: .utf8).contains("Each run was taken 3 times"))
    }
}

/// An SVG file tern wrote, read back with an XML parser: it must be well-formed, and its
/// elements and texts can be counted.
struct SVGFile {
    private(set) var elements: [String] = []
    private(set) var texts: [String] = []

    init(_ path: String) throws {
        let parser = XMLParser(data: try Data(contentsOf: URL(fileURLWithPath: path)))
        let collector = Collector()
        parser.delegate = collector
        guard parser.parse(), collector.elements.first == "svg" else { throw TernTestFailure("\(path): not a well-formed SVG document") }
        elements = collector.elements
        texts = collector.texts
    }

    func count(of element: String) -> Int { elements.filter { $0 == element }.count }

    private final class Collector: NSObject, XMLParserDelegate {
        var elements: [String] = []
        var texts: [String] = []
        private var inText = false
        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            elements.append(name)
            inText = name == "text"
            if inText { texts.append("") }
        }
        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            inText = false
        }
        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if inText { texts[texts.count - 1] += string }
        }
    }
}
