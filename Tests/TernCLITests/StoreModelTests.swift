import Foundation
import Testing

/// `SampleModel2_V2.sqlite` (CoreDataPlus) was written by a model defined in code: it exists
/// nowhere but in the store's `Z_MODELCACHE`. Tern reads it, exports it, and migrates the store
/// from it to a version written for it.
@Suite("A store migrated from the model it carries")
struct StoreModelTests {
    /// Removed with the suite's instance, whatever the test did.
    let scratch: ScratchFolder
    var directory: URL { scratch.url }
    let store: String

    init() throws {
        scratch = try ScratchFolder("tern-storemodel")
        store = scratch.url.appendingPathComponent("SampleModel2_V2.sqlite").path
        try FileManager.default.copyItem(
            atPath: CheckAndGenerateCommandTests.fixtures + "/alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite",
            toPath: store)
    }

    /// Every row of `table` in `store`, over `columns`, as text: content, not counts.
    private func rows(_ store: String, _ table: String, _ columns: String) throws -> String {
        try SQLiteShell.run(store, "SELECT \(columns) FROM \(table) ORDER BY Z_PK;")
    }

    @Test("inspect lists the carried model and exports it; the export recognises the store; a version written from it migrates the store, every row kept")
    func inspectExportMigrate() throws {
        let exported = directory.appendingPathComponent("exported").path
        let inspected = try TernProcess.run(["inspect", store, "--export-model", exported])
        #expect(inspected.status == 0, "\(inspected.standardError)")
        #expect(inspected.standardOutput.contains("model carried (Z_MODELCACHE), 6 entities:"))
        #expect(inspected.standardOutput.contains("Writer, abstract: age integer16"))
        let again = try TernProcess.run(["inspect", store, "--export-model", exported])
        #expect(again.status == 65 && again.standardError.contains("exists and is not empty: Tern never overwrites a model"), "\(again.standardError)")
        let recognised = try TernProcess.run(["check", store, "--model", exported])
        #expect(
            recognised.status == 0 && recognised.standardOutput.hasPrefix("compatible: the store was written by SampleModel2_V2"),
            "\(recognised.standardOutput)\(recognised.standardError)")

        // The target: the carried model with a new attribute, given as the only version.
        let target = directory.appendingPathComponent("target")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        let version = try String(contentsOfFile: exported + "/v1.yaml", encoding: .utf8)
            .replacingOccurrences(of: "version: SampleModel2_V2", with: "version: SampleModel2_V3")
            .replacingOccurrences(
                of: "  Book:\n    attributes:\n", with: "  Book:\n    attributes:\n      subtitle:\n        optional: true\n        type: string\n")
        try version.write(to: target.appendingPathComponent("v2.yaml"), atomically: true, encoding: .utf8)
        try "name: SampleModel2\ncurrent: SampleModel2_V3\nversions: [v2.yaml]\n".write(
            to: target.appendingPathComponent("model.yaml"), atomically: true, encoding: .utf8)

        let check = try TernProcess.run(["check", store, "--model", target.path])
        #expect(check.status == 4)
        #expect(
            check.standardOutput.contains("the store carries its own model (Z_MODELCACHE): tern plan and tern migrate take it as the source version"),
            "\(check.standardOutput)")
        let plan = try TernProcess.run(["plan", store, "--model", target.path])
        #expect(plan.status == 0, "\(plan.standardError)")
        #expect(plan.standardOutput.hasPrefix("No version of the model wrote the store; it carries its own model (Z_MODELCACHE), which is the source version."))
        let output = directory.appendingPathComponent("Out.sqlite").path
        let migrated = try TernProcess.run(["migrate", store, "--model", target.path, "--out", output, "--progress", "none"])
        #expect(migrated.status == 0, "\(migrated.standardError)")
        #expect(try TernProcess.run(["check", output, "--model", target.path]).status == 0)
        for (table, columns) in [
            ("ZBOOK", "Z_PK, Z_ENT, ZTITLE, ZPRICE, hex(ZUNIQUEID), ZPUBLISHEDAT, hex(ZFRONTCOVER), ZAUTHOR, ZISBLACKANDWHITE"),
            ("ZPAGE", "Z_PK, ZNUMBER, ZISBOOKMARKED, hex(ZCONTENT), ZBOOK"), ("ZFEEDBACK", "*"), ("ZWRITER", "*"),
        ] {
            #expect(try rows(output, table, columns) == rows(store, table, columns), "\(table)")
        }
        #expect(try rows(output, "ZBOOK", "count(ZSUBTITLE)") == "0\n")
        // The derived `pagesCount = pages.@count`: the value Core Data's triggers keep, and the
        // same five triggers Core Data made in the source.
        #expect(try rows(output, "ZBOOK", "Z_PK, ZPAGESCOUNT") == rows(store, "ZBOOK", "Z_PK, (SELECT count(*) FROM ZPAGE WHERE ZBOOK = ZBOOK.Z_PK)"))
        let triggers = "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name;"
        #expect(try SQLiteShell.run(output, triggers) == SQLiteShell.run(store, triggers))
        #expect(try SQLiteShell.run(output, triggers).split(separator: "\n").count == 5)
    }

    @Test(
        "a carried model with an inheritance cycle of two entities (each its own superentity, or each the other's): inspect, check, plan and migrate refuse the store or name the cycle, never crash",
        arguments: [["Car", "SportCar"], ["SportCar", "Car"]])
    func carriedModelCycle(superentities: [String]) throws {
        let cars = directory.appendingPathComponent("cars.sqlite").path
        try FileManager.default.copyItem(
            atPath: CheckAndGenerateCommandTests.fixtures + "/alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite", toPath: cars)
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        python.arguments =
            [
                "-c",
                """
                import plistlib, sqlite3, sys, zlib
                db = sqlite3.connect(sys.argv[1])
                d = plistlib.loads(zlib.decompress(db.execute('SELECT Z_CONTENT FROM Z_MODELCACHE').fetchone()[0], -15)); objects = d['$objects']
                index = {objects[o['NSEntityName'].data]: i for i, o in enumerate(objects) if isinstance(o, dict) and 'NSEntityName' in o and 'NSProperties' in o}
                objects[index['Car']]['NSSuperentity'] = plistlib.UID(index[sys.argv[2]])
                objects[index['SportCar']]['NSSuperentity'] = plistlib.UID(index[sys.argv[3]])
                deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
                db.execute('UPDATE Z_MODELCACHE SET Z_CONTENT = ?', (deflate.compress(plistlib.dumps(d, fmt=plistlib.FMT_BINARY)) + deflate.flush(),))
                db.commit()
                """, cars,
            ] + superentities
        try python.run()
        python.waitUntilExit()
        #expect(python.terminationStatus == 0)
        let bookStore = CheckAndGenerateCommandTests.bookStore
        for arguments in [
            ["inspect", cars], ["check", cars, "--model", bookStore], ["plan", cars, "--model", bookStore],
            ["migrate", cars, "--model", bookStore, "--progress", "none"],
        ] {
            let outcome = try TernProcess.run(arguments)
            #expect([0, 4, 65].contains(outcome.status), "\(arguments[0]): \(outcome.status) \(outcome.standardError)")
        }
    }
}
