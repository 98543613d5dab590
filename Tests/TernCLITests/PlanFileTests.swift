import Foundation
import Testing

/// `tern plan --json` prints the plan `tern migrate --plan` runs: the versions, the mappings as
/// they were read, the schema changes of steps applied in place. Run later, it gives the store a
/// fresh plan gives, even when the files it was made from changed since.
@Suite("Saved plans: the plan is the program")
struct PlanFileTests {
    static let chain = CheckAndGenerateCommandTests.repository.appendingPathComponent("configs/chain").path

    /// A copy of one of Tern's example configurations, which the tests may change.
    static func copyOfConfig(_ name: String, into directory: URL) throws -> String {
        let source = CheckAndGenerateCommandTests.repository.appendingPathComponent("configs/\(name)")
        let target = directory.appendingPathComponent(name)
        try FileManager.default.copyItem(at: source, to: target)
        return target.path
    }

    static func generate(_ model: String, version: String, rows: Int, at path: String) throws {
        let outcome = try TernProcess.run(["generate", "--model", model, "--version", version, "--rows", "\(rows)", path])
        #expect(outcome.status == 0, "\(outcome.standardError)")
    }

    /// `tern migrate --plan` of `plan` fails with 65, saying `words`, and writes nothing.
    static func expectRefused(plan: String, store: String, in directory: ScratchFolder, saying words: String) throws {
        let out = directory.path("out.sqlite")
        let outcome = try TernProcess.run(["migrate", "--plan", plan, store, "--out", out])
        #expect(outcome.status == 65, "\(words): \(outcome.standardError)")
        #expect(outcome.standardError.contains(words), "\(words): \(outcome.standardError)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    static func savePlan(model: String, store: String, to path: String, extra: [String] = []) throws {
        let outcome = try TernProcess.run(["plan", "--model", model, store, "--json"] + extra)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        try outcome.standardOutput.write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test("a saved plan (two passes of mapping files) runs as it is, the files gone since, and gives the store a fresh plan gives")
    func savedPlanRuns() throws {
        let directory = try ScratchFolder("tern-plan")
        let model = try Self.copyOfConfig("library", into: directory.url)
        let store = directory.path("library.sqlite")
        try Self.generate(model, version: "Library 1", rows: 40, at: store)
        let plan = directory.path("plan.json")
        try Self.savePlan(model: model, store: store, to: plan)

        let fresh = directory.path("fresh.sqlite")
        let planned = try TernProcess.run(["migrate", "--model", model, store, "--out", fresh])
        #expect(planned.status == 0, "\(planned.standardError)")
        // The mappings the plan was made from are gone: the plan holds them.
        try FileManager.default.removeItem(atPath: model + "/mappings")
        let saved = directory.path("saved.sqlite")
        let outcome = try TernProcess.run(["migrate", "--plan", plan, store, "--out", saved])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(try StoreDump.lines(saved) == StoreDump.lines(fresh))
        // And without them, planning anew takes another road: the plan was what ran.
        let anew = try TernProcess.run(["plan", "--model", model, store])
        #expect(!anew.standardOutput.contains("1-"), "\(anew.standardOutput)")
    }

    @Test("a saved plan runs on another store of the same version and schema, and refuses one of another schema, naming the version")
    func otherStores() throws {
        let directory = try ScratchFolder("tern-plan")
        let model = CheckAndGenerateCommandTests.repository.appendingPathComponent("configs/library").path
        let store = directory.path("one.sqlite")
        try Self.generate(model, version: "Library 1", rows: 10, at: store)
        let plan = directory.path("plan.json")
        try Self.savePlan(model: model, store: store, to: plan)

        let sibling = directory.path("two.sqlite")
        try Self.generate(model, version: "Library 1", rows: 25, at: sibling)
        let ran = try TernProcess.run(["migrate", "--plan", plan, sibling, "--out", directory.path("two-out.sqlite")])
        #expect(ran.status == 0, "\(ran.standardError)")

        let newer = directory.path("newer.sqlite")
        try Self.generate(model, version: "Library 2", rows: 10, at: newer)
        let refused = try TernProcess.run(["migrate", "--plan", plan, newer, "--out", directory.path("newer-out.sqlite")])
        #expect(refused.status == 65, "\(refused.standardError)")
        #expect(refused.standardError.contains("not those the plan was made from (Library 1 of Library)"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.path("newer-out.sqlite")))
    }

    @Test("killed after a step, --resume without --model runs the plan the run recorded, to the store an uninterrupted run gives")
    func resumeRunsRecordedPlan() throws {
        let directory = try ScratchFolder("tern-plan")
        let model = Self.chain
        let store = directory.path("chain.sqlite")
        try Self.generate(model, version: "Chain 1", rows: 30, at: store)
        let copy = directory.path("copy.sqlite")
        try FileManager.default.copyItem(atPath: store, toPath: copy)
        let whole = directory.path("whole.sqlite")
        #expect(try TernProcess.run(["migrate", "--model", model, "--step-by-step", copy, "--out", whole]).status == 0)

        let out = directory.path("out.sqlite")
        let killed = try TernProcess.run(
            ["migrate", "--model", model, "--step-by-step", store, "--out", out], environment: ["TERN_CRASH_AT": "step-committed"])
        #expect(killed.status != 0)
        let record = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory.path(".out.sqlite.tern-migration.json"))))
        #expect((record as? [String: Any])?["plan"] != nil, "the record holds the plan")
        let resumed = try TernProcess.run(["migrate", store, "--out", out, "--resume", "--progress", "none"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(try StoreDump.lines(out) == StoreDump.lines(whole))
    }

    @Test(
        "an in-place run of a saved plan killed at a step's commit or inside the swap: --resume without --model finishes it, the original kept as the backup",
        arguments: ["step-committed", "backup-linked", "renamed"])
    func inPlacePlanKilledResumes(point: String) throws {
        let directory = try ScratchFolder("tern-plan")
        let model = Self.chain
        let store = directory.path("chain.sqlite")
        try Self.generate(model, version: "Chain 1", rows: 30, at: store)
        let original = try Data(contentsOf: URL(fileURLWithPath: store))
        let plan = directory.path("plan.json")
        try Self.savePlan(model: model, store: store, to: plan, extra: ["--step-by-step"])
        let whole = directory.path("whole.sqlite")
        #expect(try TernProcess.run(["migrate", "--plan", plan, store, "--out", whole]).status == 0)

        let killed = try TernProcess.run(["migrate", "--plan", plan, store], environment: ["TERN_CRASH_AT": point])
        #expect(killed.status != 0)
        let now = try Data(contentsOf: URL(fileURLWithPath: store))
        if now != original { #expect(try StoreDump.lines(store) == StoreDump.lines(whole)) }
        let resumed = try TernProcess.run(["migrate", store, "--resume", "--progress", "none"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(try StoreDump.lines(store) == StoreDump.lines(whole))
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.path("chain~.sqlite"))) == original)
    }

    @Test(
        "a plan whose origin is gone, whose steps do not chain from the store's version to the target, or whose first version is not the store's is refused (65), nothing written"
    )
    func plansThatDoNotFitTheStore() throws {
        let directory = try ScratchFolder("tern-plan")
        let model = Self.chain
        let store = directory.path("c.sqlite")
        try Self.generate(model, version: "Chain 1", rows: 20, at: store)
        let plan = directory.path("plan.json")
        try Self.savePlan(model: model, store: store, to: plan, extra: ["--step-by-step"])
        let original = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: plan))) as! [String: Any]
        #expect(((original["plan"] as! [String: Any])["steps"] as! [Any]).count == 3)

        func edited(_ change: (inout [String: Any]) -> Void) throws -> String {
            var planObject = original["plan"] as! [String: Any]
            change(&planObject)
            var document = original
            document["plan"] = planObject
            let path = directory.path("edited-\(UUID().uuidString).json")
            try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: path))
            return path
        }
        func dropPrice(_ version: inout Any) {
            var object = version as! [String: Any]
            object["entities"] = (object["entities"] as! [[String: Any]]).map { entity in
                var entity = entity
                entity["attributes"] = (entity["attributes"] as! [[String: Any]]).filter { $0["name"] as? String != "price" }
                return entity
            }
            version = object
        }
        let cases: [(String, (inout [String: Any]) -> Void)] = [
            ("the plan has no origin (plan.origin)", { $0.removeValue(forKey: "origin") }),
            ("the plan's steps end at Chain 2, not at its target Chain 4", { $0["steps"] = [($0["steps"] as! [Any])[0]] }),
            (
                "plan.steps[1] (Chain 3 → Chain 4) does not start where the plan is then (Chain 2)",
                {
                    let steps = $0["steps"] as! [Any]
                    $0["steps"] = [steps[0], steps[2]]
                }
            ),
            (
                "the plan is not the one tern made (its content does not match its seal, plan.origin.seal)",
                {
                    var versions = $0["versions"] as! [Any]
                    dropPrice(&versions[0])
                    $0["versions"] = versions
                    var steps = $0["steps"] as! [[String: Any]]
                    var source: Any = steps[0]["source"]!
                    dropPrice(&source)
                    steps[0]["source"] = source
                    steps[0].removeValue(forKey: "schemaChanges")  // a copy: no schema changes to check
                    var passes = steps[0]["passes"] as! [[String: Any]]
                    var mapping = passes[0]["mapping"] as! [String: Any]
                    mapping["entityMappings"] = (mapping["entityMappings"] as! [[String: Any]]).map { entity in
                        var entity = entity
                        entity["attributeMappings"] = (entity["attributeMappings"] as! [[String: Any]]).map { attribute in
                            var attribute = attribute
                            if (attribute["valueExpression"] as? String)?.contains("price") == true { attribute.removeValue(forKey: "valueExpression") }
                            return attribute
                        }
                        return entity
                    }
                    passes[0]["mapping"] = mapping
                    steps[0]["passes"] = passes
                    $0["steps"] = steps
                }
            ),
        ]
        for (words, change) in cases {
            try Self.expectRefused(plan: try edited(change), store: store, in: directory, saying: words)
        }
    }

    @Test(
        "a plan file is refused (65), nothing written, when edited: an unknown key, a value of another type, schema changes of its own, a mapping that does not validate"
    )
    func editedPlans() throws {
        let directory = try ScratchFolder("tern-plan")
        let model = Self.chain
        let store = directory.path("c.sqlite")
        try Self.generate(model, version: "Chain 3", rows: 5, at: store)
        let plan = directory.path("plan.json")
        try Self.savePlan(model: model, store: store, to: plan)
        let original = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: plan))) as! [String: Any]
        var step = ((original["plan"] as! [String: Any])["steps"] as! [[String: Any]])[0]
        #expect(step["schemaChanges"] != nil, "the step runs in place")

        func edited(_ change: (inout [String: Any]) -> Void) throws -> String {
            var copy = step
            change(&copy)
            var planObject = original["plan"] as! [String: Any]
            planObject["steps"] = [copy]
            var document = original
            document["plan"] = planObject
            let path = directory.path("edited-\(UUID().uuidString).json")
            try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: path))
            return path
        }
        let cases: [(String, (inout [String: Any]) -> Void)] = [
            ("which tern plan does not write", { $0["colour"] = "blue" }),
            ("isInferred", { $0["isInferred"] = "yes" }),
            ("the schema changes are not those of step Chain 3 → Chain 4", { $0["schemaChanges"] = ["DELETE FROM ZITEM"] }),
            (
                "the plan's mapping does not validate",
                {
                    var passes = $0["passes"] as! [[String: Any]]
                    var mapping = passes[0]["mapping"] as! [String: Any]
                    var entities = mapping["entityMappings"] as! [[String: Any]]
                    entities[0]["sourceEntity"] = "Nowhere"
                    mapping["entityMappings"] = entities
                    passes[0]["mapping"] = mapping
                    $0["passes"] = passes
                }
            ),
        ]
        for (words, change) in cases {
            try Self.expectRefused(plan: try edited(change), store: store, in: directory, saying: words)
        }
        step = [:]
        let mixed = try TernProcess.run(["migrate", "--plan", plan, "--model", model, store])
        #expect(mixed.status == 64, "\(mixed.standardError)")
    }
}
