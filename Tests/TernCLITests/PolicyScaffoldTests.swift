import Foundation
import Testing

/// `tern policy scaffold` on a real app's model and compiled mapping. Building and testing the
/// package it writes is `scripts/check-policy-scaffold` (CI runs it): a full Swift build.
@Suite("tern policy scaffold, run as a process")
struct PolicyScaffoldTests {
    static let fixtures = "\(CheckAndGenerateCommandTests.fixtures)/alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures"

    @Test("the refusal of an app's policy class names the command; the scaffold writes one policy type per class, its registry, executable and test")
    func scaffoldsTheAppsPolicy() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-scaffold-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("SampleModel_V2.sqlite").path
        try FileManager.default.copyItem(atPath: Self.fixtures + "/SampleModel_V2.sqlite", toPath: store)
        let refused = try TernProcess.run(["migrate", store, "--model", Self.fixtures + "/SampleModel.momd", "--to", "SampleModel3", "--out", store + ".out"])
        #expect(refused.status == 65)
        #expect(
            refused.standardError.contains("names the migration policy REPLACE_AT_RUNTIME.V2to3MakerPolicy, which is not registered"),
            "\(refused.standardError)")
        #expect(refused.standardError.contains("tern policy scaffold --model MODEL --out DIR"), "\(refused.standardError)")

        let package = directory.appendingPathComponent("package").path
        let outcome = try TernProcess.run(["policy", "scaffold", "--model", Self.fixtures + "/SampleModel.momd", "--out", package])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let files = try FileManager.default.subpathsOfDirectory(atPath: package).filter { $0.hasSuffix(".swift") || $0.hasSuffix(".md") }.sorted()
        #expect(
            files == [
                "Package.swift", "README.md", "Sources/SampleModelPolicies/Policies/V2to3MakerPolicy.swift", "Sources/SampleModelPolicies/Registry.swift",
                "Sources/samplemodelpolicies-tern/main.swift", "Tests/SampleModelPoliciesTests/V2to3MakerPolicyTests.swift",
            ])
        let policy = try String(contentsOfFile: package + "/Sources/SampleModelPolicies/Policies/V2to3MakerPolicy.swift", encoding: .utf8)
        #expect(policy.contains("public struct V2to3MakerPolicy: EntityMigrationPolicy"))
        // What the compiled mapping asks of the class, for each entity mapping naming it.
        for mapping in ["`CarToCar` (V2toV3.cdm, SampleModel2 → SampleModel3): Car → Car, custom", "`LuxuryCarToLuxuryCar`", "`SportCarToSportCar`"] {
            #expect(policy.contains(mapping), "\(mapping)")
        }
        #expect(
            policy.contains("`owner` ← `FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"PersonToPerson\", $source.owner)`")
        )
        let registry = try String(contentsOfFile: package + "/Sources/SampleModelPolicies/Registry.swift", encoding: .utf8)
        #expect(registry.contains("registry.register(V2to3MakerPolicy(), as: \"REPLACE_AT_RUNTIME.V2to3MakerPolicy\")"))
        let test = try String(contentsOfFile: package + "/Tests/SampleModelPoliciesTests/V2to3MakerPolicyTests.swift", encoding: .utf8)
        #expect(test.contains("TestStore(model: model, version: \"SampleModel2\", generating: 20)"))
        // Paths relative to the package: it builds and tests wherever the folders stand together.
        let fixturesFromPackage = Self.relative(Self.fixtures, from: package)
        #expect(test.contains("mappingFiles: [packagePath(\"\(fixturesFromPackage)/V2toV3.cdm\")]"), "\(test)")
        #expect(test.contains("ModelLoader.load(packagePath(\"\(fixturesFromPackage)/SampleModel.momd\"))"), "\(test)")
        let manifest = try String(contentsOfFile: package + "/Package.swift", encoding: .utf8)
        #expect(manifest.contains(".package(path: \"\(Self.relative(CheckAndGenerateCommandTests.repository.path, from: package))\")"), "\(manifest)")
        for file in ["Package.swift", "README.md", "Tests/SampleModelPoliciesTests/V2to3MakerPolicyTests.swift"] {
            let text = try String(contentsOfFile: package + "/" + file, encoding: .utf8)
            for absolute in [directory.path, CheckAndGenerateCommandTests.repository.path] {
                for opening in ["\"", "`", " "] { #expect(!text.contains(opening + absolute), "\(file) holds an absolute path") }
            }
        }
        // The version the mapping leads to is not the bundle's current one: the next command says --to.
        #expect(outcome.standardOutput.contains("--to SampleModel3"), "\(outcome.standardOutput)")
        // The porter's clues: what no expression reads, what no entity mapping fills.
        #expect(policy.contains("source attributes no expression reads") || policy.contains("destination entities no entity mapping"), "\(policy)")

        // Never over someone's work; a mapping that names no class has nothing to port.
        let again = try TernProcess.run(["policy", "scaffold", "--model", Self.fixtures + "/SampleModel.momd", "--out", package])
        #expect(again.status == 65 && again.standardError.contains("already exists and is not an empty folder"), "\(again.standardError)")
        let bookstore = CheckAndGenerateCommandTests.bookStore
        let none = try TernProcess.run([
            "policy", "scaffold", "--model", bookstore, "--mapping", bookstore + "/mappings/v4-to-v5.yaml", "--out",
            directory.appendingPathComponent("none").path,
        ])
        #expect(none.status == 65 && none.standardError.contains("names a migration policy class: there is nothing to port"), "\(none.standardError)")
    }

    /// `path` relative to `directory`, as the scaffold writes it.
    static func relative(_ path: String, from directory: String) -> String {
        let from = URL(fileURLWithPath: directory).standardizedFileURL.pathComponents
        let to = URL(fileURLWithPath: path).standardizedFileURL.pathComponents
        let common = zip(from, to).prefix { $0 == $1 }.count
        return (Array(repeating: "..", count: from.count - common) + to[common...]).joined(separator: "/")
    }

    @Test(
        "hostile class, mapping and filter names give a package whose every file parses: keywords and Tern's own names prefixed, one class however qualified, a clash refused, the checkout checked"
    )
    func hostileNames() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-scaffold-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bookstore = CheckAndGenerateCommandTests.bookStore
        let mapping = { (policies: [String], filter: String) in
            "source: BookStore 3\ndestination: BookStore 4\nentityMappings:\n"
                + policies.enumerated().map { index, policy in
                    "  - name: \"M\(index)\\n} struct Evil {\"\n    type: custom\n    source: Publication\n    destination: Publication\n    policy: \"\(policy)\"\n"
                        + "    filter: \(filter)\n    attributes:\n      title: $source.title\n"
                }.joined()
        }
        let hostile = directory.appendingPathComponent("hostile.yaml").path
        try mapping(["Registry", "class", "MyApp.GoodPolicy", "GoodPolicy", "*/ \\\" é"], "\"title == \\\"a\\nb\\\"\"").write(
            toFile: hostile, atomically: true, encoding: .utf8)
        let package = directory.appendingPathComponent("package").path
        let outcome = try TernProcess.run(["policy", "scaffold", "--model", bookstore, "--mapping", hostile, "--out", package])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let sources = try FileManager.default.subpathsOfDirectory(atPath: package).filter { $0.hasSuffix(".swift") }.sorted()
        #expect(
            sources.contains("Sources/BookStorePolicies/Policies/PortedRegistry.swift")
                && sources.contains("Sources/BookStorePolicies/Policies/PortedClass.swift"), "\(sources)")
        #expect(sources.filter { $0.contains("GoodPolicy") }.count == 2, "one policy and one test for MyApp.GoodPolicy and GoodPolicy: \(sources)")
        let registry = try String(contentsOfFile: package + "/Sources/BookStorePolicies/Registry.swift", encoding: .utf8)
        #expect(
            registry.contains("register(GoodPolicy(), as: \"MyApp.GoodPolicy\")") && registry.contains("register(GoodPolicy(), as: \"GoodPolicy\")"),
            "\(registry)")
        for source in sources {
            let parse = Process()
            parse.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            parse.arguments = ["swiftc", "-parse", package + "/" + source]
            let errors = Pipe()
            parse.standardError = errors
            try parse.run()
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            parse.waitUntilExit()
            #expect(parse.terminationStatus == 0, "\(source): \(message)")
        }

        let clash = directory.appendingPathComponent("clash.yaml").path
        try mapping(["FooPolicy", "fooPolicy"], "\"title != nil\"").write(toFile: clash, atomically: true, encoding: .utf8)
        let refused = try TernProcess.run([
            "policy", "scaffold", "--model", bookstore, "--mapping", clash, "--out", directory.appendingPathComponent("clash").path,
        ])
        #expect(refused.status == 65 && refused.standardError.contains("differ from it only in case"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("clash").path))
        // Two modules' classes of one name are two types; names apart only in a character no
        // identifier holds stay apart; a name longer than a file name may be still ports.
        let long = String(repeating: "VeryLongPolicy", count: 715)
        let apart = directory.appendingPathComponent("apart.yaml").path
        try mapping(["A.Foo", "B.Foo", "Foo?", "Foo!", long], "\"title != nil\"").write(toFile: apart, atomically: true, encoding: .utf8)
        let apartPackage = directory.appendingPathComponent("apart").path
        let ported = try TernProcess.run(["policy", "scaffold", "--model", bookstore, "--mapping", apart, "--out", apartPackage])
        #expect(ported.status == 0, "\(ported.standardError)")
        let policies = try FileManager.default.contentsOfDirectory(atPath: apartPackage + "/Sources/BookStorePolicies/Policies").sorted()
        for file in ["A_Foo.swift", "B_Foo.swift", "Foo_3F.swift", "Foo_21.swift"] { #expect(policies.contains(file), "\(file): \(policies)") }
        #expect(policies.contains { $0.hasPrefix("VeryLongPolicy") && $0.utf8.count < 120 }, "\(policies)")
        let apartRegistry = try String(contentsOfFile: apartPackage + "/Sources/BookStorePolicies/Registry.swift", encoding: .utf8)
        #expect(
            apartRegistry.contains("register(A_Foo(), as: \"A.Foo\")") && apartRegistry.contains("register(B_Foo(), as: \"B.Foo\")")
                && apartRegistry.contains("register(Foo_3F(), as: \"Foo?\")"), "\(apartRegistry)")
        // Planning names every class to port, not the first alone.
        let store = directory.appendingPathComponent("v3.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", bookstore, "--version", "BookStore 3", "--rows", "5", store]).status == 0)
        let plan = try TernProcess.run(["plan", store, "--model", bookstore, "--mapping", clash])
        #expect(
            plan.status == 65 && plan.standardError.contains("names the migration policy FooPolicy")
                && plan.standardError.contains("also not registered: fooPolicy (entity mapping M1"),
            "\(plan.standardError)")
        for (arguments, words) in [
            (["--name", "class"], "choose one with --name"), (["--name", "Tern"], "choose one with --name"),
            (["--tern", "/nonexistent"], "not a checkout of Tern"),
        ] {
            let bad = try TernProcess.run(
                ["policy", "scaffold", "--model", bookstore, "--mapping", hostile, "--out", directory.appendingPathComponent("bad").path] + arguments)
            #expect(bad.status != 0 && bad.standardError.contains(words), "\(arguments): \(bad.standardError)")
        }
    }
}
