import Foundation
import Tern
import Testing

/// A saved plan runs only as tern made it, and only where planning would have let it run: its
/// seal pins every field (a version's external-storage flag as much as a step or a filter), and
/// what planning checks of the store is checked again of the store it runs on.
@Suite("Saved plans: edited, or run where planning would refuse, they are refused")
struct PlanSealTests {
    static let chain = PlanFileTests.chain

    /// Every leaf of `value` (a decoded JSON document) with its path, and every array element.
    static func edits(of value: Any, at path: [Any] = []) -> [[Any]] {
        switch value {
        case let object as [String: Any]:
            return object.keys.sorted().flatMap { edits(of: object[$0]!, at: path + [$0]) }
        case let array as [Any]:
            return (array.isEmpty ? [] : [path]) + array.indices.flatMap { edits(of: array[$0], at: path + [$0]) }
        default:
            return [path]
        }
    }

    /// `document` with the value at `path` changed: a string lengthened, a number moved, a Boolean
    /// flipped, NULL given a value, an array's last element removed.
    static func changing(_ document: Any, at path: ArraySlice<Any>) -> Any {
        guard let key = path.first else {
            switch document {
            case let array as [Any]: return Array(array.dropLast())
            case let text as String: return text + "x"
            case let number as NSNumber where String(cString: number.objCType) == "c": return !number.boolValue
            case let number as NSNumber: return number.doubleValue + 1
            default: return "x"
            }
        }
        if var object = document as? [String: Any], let name = key as? String {
            object[name] = changing(object[name]!, at: path.dropFirst())
            return object
        }
        var array = document as! [Any]
        let index = key as! Int
        array[index] = changing(array[index], at: path.dropFirst())
        return array
    }

    @Test("every field of a saved plan edited in turn: each edit is refused, or runs to exactly the store the unedited plan gives")
    func everyFieldEdited() throws {
        let directory = try ScratchFolder("tern-seal")
        let store = directory.path("c.sqlite")
        try PlanFileTests.generate(Self.chain, version: "Chain 2", rows: 10, at: store)
        let plan = directory.path("plan.json")
        try PlanFileTests.savePlan(model: Self.chain, store: store, to: plan, extra: ["--step-by-step"])
        let whole = directory.path("whole.sqlite")
        let unedited = try TernProcess.run(["migrate", "--plan", plan, store, "--out", whole, "--progress", "none"])
        #expect(unedited.status == 0, "\(unedited.standardError)")
        // Laid out anew (no whitespace, keys in another order): the same plan, which runs.
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: plan)))
        let compact = directory.path("compact.json")
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: compact))
        #expect(try StoreMigration.Plan.read(from: compact).steps.count == 2)

        let paths = Self.edits(of: (document as! [String: Any])["plan"]!, at: ["plan"])
        #expect(paths.count > 100, "\(paths.count) fields")
        var refused = 0
        var ran = 0
        for path in paths {
            let edited = directory.path("edited.json")
            try JSONSerialization.data(withJSONObject: Self.changing(document, at: path[...])).write(to: URL(fileURLWithPath: edited))
            do {
                _ = try StoreMigration.Plan.read(from: edited)
            } catch {
                refused += 1
                continue
            }
            // Read: it must run to the very store the unedited plan gives.
            let out = directory.path("out-\(ran).sqlite")
            let outcome = try TernProcess.run(["migrate", "--plan", edited, store, "--out", out, "--progress", "none"])
            if outcome.status == 0 {
                #expect(try StoreDump.lines(out) == StoreDump.lines(whole), "edited \(path)")
            } else {
                #expect(outcome.status == 65, "edited \(path): \(outcome.standardError)")
            }
            ran += 1
        }
        #expect(refused + ran == paths.count && refused > 0)
        print("plan edits: \(paths.count) fields, \(refused) refused when read, \(ran) read and run")
    }

    @Test("a plan edited to say a version's attribute keeps no external storage is refused (65), nothing written")
    func externalStorageFlagPinned() throws {
        let directory = try ScratchFolder("tern-seal")
        let model = try PlanFileTests.copyOfConfig("attachments", into: directory.url)
        let store = directory.path("a.sqlite")
        try PlanFileTests.generate(model, version: "Attachments 1", rows: 10, at: store)
        let plan = directory.path("plan.json")
        try PlanFileTests.savePlan(model: model, store: store, to: plan)
        let text = try String(contentsOfFile: plan, encoding: .utf8)
        #expect(text.contains("\"allowsExternalStorage\" : true"))
        let edited = directory.path("edited.json")
        try text.replacingOccurrences(of: "\"allowsExternalStorage\" : true", with: "\"allowsExternalStorage\" : false")
            .write(toFile: edited, atomically: true, encoding: .utf8)
        try PlanFileTests.expectRefused(
            plan: edited, store: store, in: directory, saying: "the plan is not the one tern made (its content does not match its seal")
    }

    @Test("a plan made on a clean store, run on one whose app view reads a column an in-place step drops, is refused (65) as --model refuses it")
    func savedPlanMeetsTheStoresViews() throws {
        let directory = try ScratchFolder("tern-seal")
        let model = directory.path("views")
        try FileManager.default.createDirectory(atPath: model, withIntermediateDirectories: true)
        let version = { (name: String, attributes: String) in "version: \(name)\nentities:\n  A:\n    attributes: { \(attributes) }\n" }
        for (file, text) in [
            ("model.yaml", "name: V\ncurrent: V 2\nversions: [v1.yaml, v2.yaml]\n"), ("v1.yaml", version("V 1", "n: string, t: string")),
            ("v2.yaml", version("V 2", "n: string")),
        ] {
            try text.write(toFile: model + "/" + file, atomically: true, encoding: .utf8)
        }
        let clean = directory.path("clean.sqlite")
        try PlanFileTests.generate(model, version: "V 1", rows: 5, at: clean)
        let plan = directory.path("plan.json")
        try PlanFileTests.savePlan(model: model, store: clean, to: plan)
        let store = directory.path("views.sqlite")
        try PlanFileTests.generate(model, version: "V 1", rows: 5, at: store)
        #expect(try SQLiteShell.run(store, "CREATE VIEW appview AS SELECT ZN, ZT FROM ZA;").isEmpty)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let run = try TernProcess.run(["migrate", "--plan", plan, store, "--progress", "none"])
        #expect(run.status == 65, "\(run.standardError)")
        #expect(run.standardError.contains("the store's view appview would not hold after step V 1 → V 2"), "\(run.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    }

    @Test("the plan in a run's record, edited after an early kill: --resume refuses it (65) and says how to start over")
    func editedRecordRefused() throws {
        let directory = try ScratchFolder("tern-seal")
        let store = directory.path("chain.sqlite")
        try PlanFileTests.generate(Self.chain, version: "Chain 1", rows: 30, at: store)
        let out = directory.path("out.sqlite")
        let killed = try TernProcess.run(
            ["migrate", "--model", Self.chain, "--step-by-step", store, "--out", out], environment: ["TERN_CRASH_AT": "step-committed"])
        #expect(killed.status != 0)
        let recordPath = directory.path(".out.sqlite.tern-migration.json")
        let record = try String(contentsOfFile: recordPath, encoding: .utf8)
        #expect(record.contains("\"isOptional\" : true"))
        try record.replacingOccurrences(of: "\"isOptional\" : true", with: "\"isOptional\" : false").write(
            toFile: recordPath, atomically: true, encoding: .utf8)
        let resumed = try TernProcess.run(["migrate", store, "--out", out, "--resume", "--progress", "none"])
        #expect(resumed.status == 65, "\(resumed.standardError)")
        #expect(
            resumed.standardError.contains("the unfinished migration's record: the plan is not the one tern made")
                && resumed.standardError.contains("--restart"), "\(resumed.standardError)")
        #expect(!FileManager.default.fileExists(atPath: out))
        // Its status still reads, and --restart discards it, every work file with it.
        #expect(try TernProcess.run(["status", store, "--out", out]).status == 0)
        let restarted = try TernProcess.run(["migrate", "--model", Self.chain, "--step-by-step", store, "--out", out, "--restart", "--progress", "none"])
        #expect(restarted.status == 0, "\(restarted.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(".out.sqlite") }.isEmpty)
    }
}
