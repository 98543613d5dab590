import Foundation
import Testing

/// Mapping files with expressions built to explode, run by the real `tern`: the realistic ones
/// migrate (the same in SQL and in Swift, in bounded memory), the ones too deep to run are
/// refused when the mapping loads (65), naming the mapping and the property, before any work.
@Suite("Hostile expressions in mapping files")
struct HostileExpressionTests {
    static let bookStore = CheckAndGenerateCommandTests.bookStore
    /// Removed with the suite's instance, whatever the test did.
    let scratch: ScratchFolder
    var directory: URL { scratch.url }

    init() throws {
        scratch = try ScratchFolder("tern-hostile")
    }

    /// BookStore 3 → 4 in value expressions, with `firstName`'s expression and a filter on the
    /// publications replaced.
    private func mapping(_ name: String, firstName: String, filter: String?) throws -> String {
        var text = try String(contentsOfFile: Self.bookStore + "/sql/v3-to-v4.yaml", encoding: .utf8)
        text = text.replacingOccurrences(of: "firstName: substringBefore:($source.author, \" \")", with: "firstName: \(firstName)")
        if let filter {
            text = text.replacingOccurrences(of: "    destination: Publication\n", with: "    destination: Publication\n    filter: '\(filter)'\n")
        }
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private static func nested(_ depth: Int, _ inner: String) -> String {
        (0..<depth).reduce(inner) { text, _ in "substringBefore:(\(text), \" \")" }
    }

    @Test("nested calls 6 and 20 deep, an IN of 999 prices, 5,000 ORs: migrated, SQL and Swift alike, in bounded memory")
    func realisticShapesMigrate() throws {
        let source = directory.appendingPathComponent("Books.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", Self.bookStore, "--version", "BookStore 3", "--rows", "200", source]).status == 0)
        let shapes = [
            ("nested6", Self.nested(6, "$source.author"), "price IN {" + (0..<999).map { "\($0)" }.joined(separator: ", ") + "} OR price >= 0"),
            ("nested20", Self.nested(20, "$source.author"), (0..<5_000).map { "price == \($0)" }.joined(separator: " OR ") + " OR price >= 0"),
        ]
        for (name, firstName, filter) in shapes {
            let file = try mapping("\(name).yaml", firstName: firstName, filter: filter)
            var dumps: [[String]] = []
            for swift in [false, true] {
                let output = directory.appendingPathComponent("\(name)-\(swift).sqlite").path
                let outcome = try TernProcess.run(
                    [
                        "migrate", source, "--model", Self.bookStore, "--to", "BookStore 4", "--mapping", file, "--out", output,
                        "--progress", "json",
                    ] + (swift ? ["--in-swift"] : []))
                #expect(outcome.status == 0, "\(name): \(outcome.standardError.prefix(500))")
                let finished = try #require(
                    outcome.standardOutput.split(separator: "\n").last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
                let peaks = (finished["passes"] as? [[String: Any]] ?? []).compactMap { ($0["report"] as? [String: Any])?["peakResidentMemory"] as? Int }
                #expect(!peaks.isEmpty && peaks.allSatisfy { $0 < 256 << 20 }, "\(name): peak memory \(peaks)")
                dumps.append(try StoreDump.lines(output))
            }
            #expect(dumps[0] == dumps[1], "\(name): SQL and Swift differ")
            #expect(try SQLiteShell.run(directory.appendingPathComponent("\(name)-false.sqlite").path, "SELECT count(*) FROM ZPUBLICATION;") == "200\n")
        }
    }

    @Test(
        "too deep to run — 200 nested abs:, 25 nested calls, 100,000 unary minuses, a filter of 20,000 NOTs, a deep term in 5,000 ORs — refused at load (65), naming mapping and property, briefly"
    )
    func tooDeepIsRefused() throws {
        let source = directory.appendingPathComponent("Books.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", Self.bookStore, "--version", "BookStore 3", "--rows", "20", source]).status == 0)
        let shapes: [(String, String, String?, String)] = [
            ("abs", String(repeating: "abs:(", count: 200) + "$source.author" + String(repeating: ")", count: 200), nil, "attribute firstName"),
            ("nested25", Self.nested(25, "$source.author"), nil, "attribute firstName"),
            ("minus", String(repeating: "-", count: 100_000) + "1", nil, "attribute firstName"),
            ("not", "$source.author", String(repeating: "NOT ", count: 20_000) + "price > 0", "filter predicate"),
            // Each part within the limit, the whole too deep for SQLite's parser once compiled: it
            // used to fail hours in, with exit 74 ("parser stack overflow").
            (
                "mixed", "$source.author", ((0..<5_000).map { "price == \($0)" } + [Self.nested(20, "title") + " == \"x\""]).joined(separator: " OR "),
                "filter predicate"
            ),
        ]
        for (name, firstName, filter, place) in shapes {
            let file = try mapping("\(name).yaml", firstName: firstName, filter: filter)
            let outcome = try TernProcess.run([
                "migrate", source, "--model", Self.bookStore, "--to", "BookStore 4", "--mapping", file,
                "--out", directory.appendingPathComponent("\(name).sqlite").path, "--progress", "none",
            ])
            #expect(outcome.status == 65, "\(name): \(outcome.standardError.prefix(300))")
            #expect(outcome.standardError.contains("entity mapping PublicationToPublication, \(place)"), "\(name): \(outcome.standardError.prefix(300))")
            #expect(
                outcome.standardError.contains(name == "mixed" ? "too complex for SQLite once compiled (parser stack overflow)" : "nests deeper than"),
                "\(name): \(outcome.standardError.prefix(300))")
            #expect(outcome.standardError.utf8.count < 2_000, "\(name): a \(outcome.standardError.utf8.count)-byte message")
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("\(name).sqlite").path))
        }
    }
}
