import Foundation
import Testing

/// Values a mapping makes that its destination cannot hold as they are: never stored with exit 0.
@Suite("Values that do not fit their attribute")
struct HostileValueTests {
    /// Removed with the suite's instance, whatever the test did.
    let scratch: ScratchFolder
    var directory: URL { scratch.url }

    init() throws {
        scratch = try ScratchFolder("tern-values")
    }

    /// A one-entity model in two versions and a store of version 1 with `rows` objects.
    private func model(_ attributes: String, rows: Int = 5) throws -> (model: String, store: String) {
        let model = directory.appendingPathComponent("model")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        for version in [1, 2] {
            // Version 2 differs only by its hash modifier: a step to run.
            try "version: Fit \(version)\nentities:\n  E:\n    hashModifier: \"\(version)\"\n    attributes: { \(attributes) }\n"
                .write(to: model.appendingPathComponent("v\(version).yaml"), atomically: true, encoding: .utf8)
        }
        try "name: Fit\ncurrent: Fit 2\nversions: [v1.yaml, v2.yaml]\n".write(to: model.appendingPathComponent("model.yaml"), atomically: true, encoding: .utf8)
        let store = directory.appendingPathComponent("fit.sqlite").path
        let generated = try TernProcess.run(["generate", "--model", model.path, "--version", "Fit 1", "--rows", "\(rows)", store])
        #expect(generated.status == 0, "\(generated.standardError)")
        return (model.path, store)
    }

    private func mapping(_ attributes: [String: String], filter: String? = nil) throws -> String {
        let path = directory.appendingPathComponent("map-\(UUID().uuidString).yaml").path
        let lines = attributes.sorted { $0.key < $1.key }.map { "      \($0.key): '\($0.value)'" }.joined(separator: "\n")
        try """
        source: Fit 1
        destination: Fit 2
        entityMappings:
          - name: EToE
            type: transform
            source: E
            destination: E\(filter.map { "\n    filter: '\($0)'" } ?? "")
            attributes:
        \(lines)

        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(
        "an Integer 16 of 70000, an Integer 32 of 2^40, an Integer 64 of 1e308, a Boolean of 70000, a fraction in an Integer 16: validation violations (6), each named, on the SQL path and through Swift; nothing written",
        arguments: [false, true])
    func outOfRange(inSwift: Bool) throws {
        let (model, store) = try model("n16: integer16, n32: integer32, n64: integer64, b: boolean, f16: integer16")
        #expect(try SQLiteShell.run(store, "UPDATE ZE SET ZF16 = 32767;").isEmpty)
        let file = try mapping(["n16": "70000", "n32": "1099511627776", "n64": "1e308", "b": "70000", "f16": "$source.f16 / 3"])
        let output = directory.appendingPathComponent("out.sqlite").path
        let outcome = try TernProcess.run(
            ["migrate", store, "--model", model, "--mapping", file, "--out", output, "--progress", "none"] + (inSwift ? ["--in-swift"] : []))
        #expect(outcome.status == 6, "\(outcome.standardOutput)\(outcome.standardError)")
        for rule in [
            "n16 does not fit Integer 16", "n32 does not fit Integer 32", "n64 does not fit Integer 64", "b does not fit Boolean (0 or 1)",
            "f16 does not fit Integer 16",
        ] {
            #expect(outcome.standardError.contains(rule), "\(rule): \(outcome.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: output))
        // In range, whole: migrated (5.0 is stored as the integer 5, as SQLite's INTEGER affinity makes it).
        let fine = try mapping(["n16": "-32768", "n32": "2147483647", "n64": "5.0", "b": "1", "f16": "$source.f16 - 32767"])
        let migrated = try TernProcess.run(
            ["migrate", store, "--model", model, "--mapping", fine, "--out", output, "--progress", "none"] + (inSwift ? ["--in-swift"] : []))
        #expect(migrated.status == 0, "\(migrated.standardError)")
        #expect(try SQLiteShell.run(output, "SELECT DISTINCT ZN16, ZN32, ZN64, typeof(ZN64), ZB, ZF16 FROM ZE;") == "-32768|2147483647|5|integer|1|0\n")
    }

    @Test(
        "a string with a NUL inside (\"abc\\0def\") is text like any other, on the SQL path as through Swift: substring, substringBefore/After, BEGINSWITH and ENDSWITH see all of it",
        arguments: [false, true])
    func embeddedNul(inSwift: Bool) throws {
        let (model, store) = try model("name: string, head: string, before: string, after: string")
        #expect(try SQLiteShell.run(store, "UPDATE ZE SET ZNAME = 'abc' || char(0) || 'def';").isEmpty)
        let file = try mapping(
            [
                "name": "substring:from:length:($source.name, 0, 100)", "head": "substring:from:length:($source.name, 2, 3)",
                "before": "substringBefore:($source.name, \"e\")", "after": "substringAfter:($source.name, \"c\")",
            ],
            filter: "name ENDSWITH \"def\" AND name BEGINSWITH \"abc\"")
        let output = directory.appendingPathComponent("nul.sqlite").path
        let outcome = try TernProcess.run(
            ["migrate", store, "--model", model, "--mapping", file, "--out", output, "--progress", "none"] + (inSwift ? ["--in-swift"] : []))
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(
            try SQLiteShell.run(output, "SELECT count(*), hex(ZNAME), hex(ZHEAD), hex(ZBEFORE), hex(ZAFTER) FROM ZE GROUP BY 2, 3, 4, 5;")
                == "5|61626300646566|630064|6162630064|00646566\n")
    }

    @Test("an entity of 200 attributes (past SQLite's 127 function arguments) migrates: in place, copied in SQL, and through Swift, verified by content")
    func wideEntity() throws {
        let names = (0..<200).map { "a\($0)" }
        let attributes = names.enumerated().map { "\($1): \($0 % 2 == 0 ? "integer32" : "string")" }.joined(separator: ", ")
        let (model, store) = try model(attributes, rows: 30)
        // Version 3: a0 required (a copy, to fill the NULLs), with a new attribute.
        let url = URL(fileURLWithPath: model)
        try
            "version: Fit 3\nentities:\n  E:\n    hashModifier: \"3\"\n    attributes: { \(attributes.replacingOccurrences(of: "a0: integer32", with: "a0: { type: integer32, optional: false, default: \"7\" }")), extra: string }\n"
            .write(to: url.appendingPathComponent("v3.yaml"), atomically: true, encoding: .utf8)
        try "name: Fit\ncurrent: Fit 3\nversions: [v1.yaml, v2.yaml, v3.yaml]\n".write(
            to: url.appendingPathComponent("model.yaml"), atomically: true, encoding: .utf8)
        let columns = names.map { "Z" + $0.uppercased() }.joined(separator: ", ")
        let before = try SQLiteShell.run(store, "SELECT Z_PK, \(columns) FROM ZE ORDER BY Z_PK;")
        for (name, extra) in [("in-place", ["--to", "Fit 2"]), ("sql", ["--step-by-step"]), ("swift", ["--in-swift"])] {
            let output = directory.appendingPathComponent("wide-\(name).sqlite").path
            let outcome = try TernProcess.run(["migrate", store, "--model", model, "--out", output, "--progress", "none"] + extra)
            #expect(outcome.status == 0, "\(name): \(outcome.standardError)")
            let after = try SQLiteShell.run(output, "SELECT Z_PK, \(columns) FROM ZE ORDER BY Z_PK;")
            #expect(after.split(separator: "\n").count == 30, "\(name)")
            if name == "in-place" { #expect(after == before) }
        }
    }

    @Test(
        "an invalid regular expression in a filter or a value expression is refused when the mapping loads (65), naming the mapping and where, by plan and migrate alike"
    )
    func invalidPattern() throws {
        let (model, store) = try model("name: string, ok: boolean")
        let cases: [(attributes: [String: String], filter: String?, where: String)] = [
            (["name": "$source.name"], "name MATCHES \"(\"", "filter"),
            (["name": "$source.name"], "name MATCHES[c] \"[z-a]\"", "filter"),
        ]
        for (attributes, filter, place) in cases {
            let file = try mapping(attributes, filter: filter)
            for command in ["plan", "migrate"] {
                let outcome = try TernProcess.run(
                    [command, store, "--model", model, "--mapping", file, "--progress", "none"].filter {
                        command == "migrate" || $0 != "--progress" && $0 != "none"
                    })
                #expect(outcome.status == 65, "\(command) \(filter ?? ""): \(outcome.standardError)")
                #expect(
                    outcome.standardError.contains("EToE") && outcome.standardError.contains(place)
                        && outcome.standardError.contains("not a valid regular expression"),
                    "\(command): \(outcome.standardError)")
            }
        }
    }
}
