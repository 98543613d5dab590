import Foundation
import Testing

/// An inferred step that drops data says so, counted, in `tern plan` and in the summary, and
/// `--no-data-loss` refuses it.
@Suite("Data an inferred step drops is never dropped silently")
struct DataLossTests {
    /// Removed with the suite's instance, whatever the test did.
    let scratch: ScratchFolder
    var directory: URL { scratch.url }

    init() throws {
        scratch = try ScratchFolder("tern-loss")
        // Version 2 drops an entity, an attribute, and a relationship from both of its ends.
        let files = [
            "model.yaml": "name: Notes\ncurrent: Notes 2\nversions: [v1.yaml, v2.yaml]\n",
            "v1.yaml": """
            version: Notes 1
            entities:
              Folder:
                attributes: { name: string }
                relationships:
                  notes: { destination: Note, toMany: true, inverse: folder }
              Note:
                attributes: { title: string, body: string }
                relationships:
                  folder: { destination: Folder, inverse: notes }
              Tag:
                attributes: { label: string }
            """,
            "v2.yaml": """
            version: Notes 2
            entities:
              Folder:
                attributes: { name: string }
              Note:
                attributes: { title: string }
            """,
        ]
        for (name, text) in files { try text.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8) }
    }

    /// A model folder `name` in the test's directory, with `files` (name → YAML text).
    private func writeModel(_ name: String, _ files: [String: String]) throws -> URL {
        let model = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        for (file, text) in files { try text.write(to: model.appendingPathComponent(file), atomically: true, encoding: .utf8) }
        return model
    }

    @Test("tern plan and the summary count what is dropped; --no-data-loss refuses it (65) and writes nothing")
    func droppedDataIsCounted() throws {
        let store = directory.appendingPathComponent("Notes.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", directory.path, "--version", "Notes 1", "--rows", "40", store]).status == 0)
        try SQLiteShell.run(store, "UPDATE ZNOTE SET ZBODY = NULL WHERE Z_PK <= 10;")
        let bodies = Int(try SQLiteShell.run(store, "SELECT count(ZBODY) FROM ZNOTE;").trimmingCharacters(in: .whitespacesAndNewlines))!
        let folders = Int(try SQLiteShell.run(store, "SELECT count(ZFOLDER) FROM ZNOTE;").trimmingCharacters(in: .whitespacesAndNewlines))!
        #expect(bodies > 0 && bodies <= 30 && folders > 0)
        let expected = [
            "entity Tag: 40 objects (not in the new version)", "Note.body: \(bodies) non-NULL values (not in the new version)",
            "Note.folder: \(folders) non-NULL values (not in the new version)",
        ]

        let plan = try TernProcess.run(["plan", store, "--model", directory.path])
        #expect(plan.status == 0, "\(plan.standardError)")
        for line in expected { #expect(plan.standardOutput.contains("drops: \(line)"), "\(plan.standardOutput)") }

        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let refused = try TernProcess.run(["migrate", store, "--model", directory.path, "--no-data-loss", "--progress", "none"])
        #expect(refused.status == 65, "\(refused.standardError)")
        for line in expected { #expect(refused.standardError.contains("  - \(line)"), "\(refused.standardError)") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)

        let migrated = try TernProcess.run(["migrate", store, "--model", directory.path, "--progress", "none"])
        #expect(migrated.status == 0, "\(migrated.standardError)")
        for line in expected { #expect(migrated.standardOutput.contains("dropped: \(line)"), "\(migrated.standardOutput)") }
    }

    @Test("links are data: a many-to-many removed loses its links, a to-many made to-one all but one per object; both counted, refused with --no-data-loss")
    func droppedLinksAreCounted() throws {
        let files = [
            "model.yaml": "name: Links\ncurrent: Links 2\nversions: [v1.yaml, v2.yaml]\n",
            "v1.yaml": """
            version: Links 1
            entities:
              Label:
                attributes: { name: string }
                relationships:
                  notes: { destination: Note, toMany: true, inverse: labels }
              Note:
                attributes: { title: string }
                relationships:
                  labels: { destination: Label, toMany: true, inverse: notes }
                  related: { destination: Note, toMany: true }
                  folders: { destination: Folder, toMany: true, inverse: notes }
              Folder:
                attributes: { name: string }
                relationships:
                  notes: { destination: Note, toMany: true, inverse: folders }
            """,
            "v2.yaml": """
            version: Links 2
            entities:
              Label:
                attributes: { name: string }
              Note:
                attributes: { title: string }
                relationships:
                  related: { destination: Note }
                  folders: { destination: Folder, inverse: notes }
              Folder:
                attributes: { name: string }
                relationships:
                  notes: { destination: Note, toMany: true, inverse: folders }
            """,
        ]
        let model = try writeModel("links", files)
        let store = directory.appendingPathComponent("Links.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", model.path, "--version", "Links 1", "--rows", "60", "--seed", "3", store]).status == 0)
        // Counted here by hand, where Core Data's layout keeps the links (Folder 1, Label 2,
        // Note 3): join tables, whose column Z_<n><REL> holds the keys reached through REL, and
        // for `related`, which has no inverse, the owner's key in each Note's Z3RELATED.
        func count(_ sql: String) throws -> Int { Int(try SQLiteShell.run(store, sql).trimmingCharacters(in: .whitespacesAndNewlines))! }
        let labelLinks = try count("SELECT count(*) FROM Z_2NOTES;")
        let foldersLost = try count("SELECT count(*) - count(DISTINCT Z_3NOTES) FROM Z_1NOTES;")
        let relatedLost = try count("SELECT count(Z3RELATED) - count(DISTINCT Z3RELATED) FROM ZNOTE;")
        #expect(labelLinks > 0 && relatedLost > 0 && foldersLost > 0)
        let expected = [
            "Label.notes: \(labelLinks) links (not in the new version)",
            "Note.folders: \(foldersLost) links beyond the first of each object (a to-one in the new version)",
            "Note.related: \(relatedLost) links beyond the first of each object (a to-one in the new version)",
        ]

        let plan = try TernProcess.run(["plan", store, "--model", model.path])
        #expect(plan.status == 0, "\(plan.standardError)")
        let drops = plan.standardOutput.split(separator: "\n").filter { $0.contains("drops: ") }.map {
            String($0.drop { $0 == " " }.dropFirst("drops: ".count))
        }
        #expect(drops == expected)
        let refused = try TernProcess.run(["migrate", store, "--model", model.path, "--no-data-loss", "--progress", "none"])
        #expect(refused.status == 65, "\(refused.standardError)")
        for line in expected { #expect(refused.standardError.contains("  - \(line)"), "\(refused.standardError)") }
        let migrated = try TernProcess.run(["migrate", store, "--model", model.path, "--progress", "none"])
        #expect(migrated.status == 0, "\(migrated.standardError)")
        for line in expected { #expect(migrated.standardOutput.contains("dropped: \(line)"), "\(migrated.standardOutput)") }
    }

    @Test(
        "tables outside the model (persistent history, an app's own) are counted as dropped by the first step that copies the store; steps applied in place keep them"
    )
    func tablesOutsideTheModel() throws {
        let repository = CheckAndGenerateCommandTests.repository
        let history =
            "CREATE TABLE ACHANGE (Z_PK INTEGER PRIMARY KEY, ZCHANGETYPE INTEGER); INSERT INTO ACHANGE VALUES (1, 0), (2, 1), (3, 2); CREATE TABLE EMPTY (x);"
        let expected = "table ACHANGE: 3 rows (outside the model's tables: a copied step does not carry it)"
        // Library 1 → 2 copies the store.
        let library = repository.appendingPathComponent("configs/library").path
        let copied = directory.appendingPathComponent("Library.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", library, "--version", "Library 1", "--rows", "20", copied]).status == 0)
        try SQLiteShell.run(copied, history)
        let plan = try TernProcess.run(["plan", copied, "--model", library])
        #expect(plan.standardOutput.contains("  drops: \(expected)\n"), "\(plan.standardOutput)")
        let refused = try TernProcess.run(["migrate", copied, "--model", library, "--no-data-loss", "--progress", "none"])
        #expect(refused.status == 65 && refused.standardError.contains("  - \(expected)"), "\(refused.standardError)")
        let migrated = try TernProcess.run(["migrate", copied, "--model", library, "--progress", "none"])
        #expect(migrated.status == 0 && migrated.standardOutput.contains("  dropped: \(expected)"), "\(migrated.standardOutput)")
        // BookStore 1 → 2 is applied in place: the table stays, and nothing is said.
        let bookstore = repository.appendingPathComponent("configs/bookstore").path
        let kept = directory.appendingPathComponent("BookStore.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", bookstore, "--version", "BookStore 1", "--rows", "20", kept]).status == 0)
        try SQLiteShell.run(kept, history)
        let inPlace = try TernProcess.run(["migrate", kept, "--model", bookstore, "--to", "BookStore 2", "--no-data-loss", "--progress", "none"])
        #expect(inPlace.status == 0 && !inPlace.standardOutput.contains("dropped"), "\(inPlace.standardOutput)\(inPlace.standardError)")
        #expect(try SQLiteShell.run(kept, "SELECT count(*) FROM ACHANGE;").trimmingCharacters(in: .whitespacesAndNewlines) == "3")
    }

    @Test(
        "--progress json ends with a failed line when the run is refused: kind, exit code, resumable, message; and with a finished line when there is nothing to do"
    )
    func jsonLastLine() throws {
        let chain = CheckAndGenerateCommandTests.repository.appendingPathComponent("configs/chain").path
        let store = directory.appendingPathComponent("Chain.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", chain, "--version", "Chain 1", "--rows", "20", store]).status == 0)
        let refused = try TernProcess.run(["migrate", store, "--model", chain, "--strict", "--progress", "json"])
        #expect(refused.status == 65)
        let last = try #require(refused.standardOutput.split(separator: "\n").last)
        let line = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        #expect(line["event"] as? String == "failed" && line["exitCode"] as? Int == 65 && line["resumable"] as? Bool == false, "\(line)")
        #expect((line["message"] as? String)?.contains("Book.notes") == true, "\(line)")
        let current = directory.appendingPathComponent("Current.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", chain, "--version", "Chain 4", "--rows", "5", current]).status == 0)
        let nothing = try TernProcess.run(["migrate", current, "--model", chain, "--progress", "json"])
        #expect(nothing.status == 0 && nothing.standardOutput.contains("\"event\":\"finished\""), "\(nothing.standardOutput)")
    }

    @Test(
        "a step that qualifies to run in place but cannot on this store (an app's own column in a model table) is planned as the copy it becomes: plan and migrate agree"
    )
    func inPlaceRehearsedWhilePlanning() throws {
        let bookstore = CheckAndGenerateCommandTests.repository.appendingPathComponent("configs/bookstore").path
        let store = directory.appendingPathComponent("Extra.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", bookstore, "--version", "BookStore 1", "--rows", "20", store]).status == 0)
        // Core Data's hashes still say BookStore 1; the column is the app's own, in a table the
        // step does not rebuild.
        try SQLiteShell.run(store, "ALTER TABLE ZCATEGORY ADD COLUMN ZAPPCACHE TEXT; UPDATE ZCATEGORY SET ZAPPCACHE = 'x' WHERE Z_PK <= 3;")
        let plan = try TernProcess.run(["plan", store, "--model", bookstore, "--to", "BookStore 2"])
        #expect(plan.status == 0, "\(plan.standardError)")
        #expect(
            plan.standardOutput.contains("not in place: its schema changes, rehearsed on the store's schema, do not give BookStore 2's tables"),
            "\(plan.standardOutput)")
        #expect(!plan.standardOutput.contains("ALTER TABLE"), "\(plan.standardOutput)")
        let migrated = try TernProcess.run(["migrate", store, "--model", bookstore, "--to", "BookStore 2", "--progress", "none"])
        #expect(migrated.status == 0, "\(migrated.standardError)")
        #expect(migrated.standardOutput.contains("not in place:") && migrated.standardOutput.contains("created"), "\(migrated.standardOutput)")
        // What the copy drops is said, as for any data a step drops.
        #expect(
            plan.standardOutput.contains("drops: table ZCATEGORY, column ZAPPCACHE: 3 non-NULL values (outside the model's columns: no step carries it)"),
            "\(plan.standardOutput)")
        #expect(migrated.standardOutput.contains("dropped: table ZCATEGORY, column ZAPPCACHE: 3 non-NULL values"), "\(migrated.standardOutput)")
        #expect(try TernProcess.run(["check", store, "--model", bookstore]).status == 3)
        // Without the column, the same step is applied in place.
        let plain = directory.appendingPathComponent("Plain.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", bookstore, "--version", "BookStore 1", "--rows", "20", plain]).status == 0)
        let inPlace = try TernProcess.run(["plan", plain, "--model", bookstore, "--to", "BookStore 2"])
        #expect(!inPlace.standardOutput.contains("not in place") && inPlace.standardOutput.contains("ALTER TABLE"), "\(inPlace.standardOutput)")
    }

    @Test(
        "a many-to-many moved down to one subentity keeps that subentity's links and loses the others', though both sides are still read: counted, refused with --no-data-loss"
    )
    func linksOfOtherSubentitiesAreCounted() throws {
        let entities = { (tagsOn: String, items: String) in
            """
            entities:
              A:
                attributes: { name: string }\(tagsOn == "A" ? "\n    relationships:\n      tags: { destination: Tag, toMany: true, inverse: items }" : "")
              B:
                parent: A
                attributes: { weight: integer32 }\(tagsOn == "B" ? "\n    relationships:\n      tags: { destination: Tag, toMany: true, inverse: items }" : "")
              C:
                parent: A
                attributes: { color: string }
              Tag:
                attributes: { label: string }
                relationships:
                  items: { destination: \(items), toMany: true, inverse: tags }
            """
        }
        // Move 3 puts the relationship back on A: Move 1 → 3, one mapping as Core Data infers it, loses nothing.
        let files = [
            "model.yaml": "name: Move\ncurrent: Move 3\nversions: [v1.yaml, v2.yaml, v3.yaml]\n",
            "v1.yaml": "version: Move 1\n" + entities("A", "A"),
            "v2.yaml": "version: Move 2\n" + entities("B", "B"),
            "v3.yaml": "version: Move 3\n" + entities("A", "A") + "\n  Shelf:\n    attributes: { label: string }\n",
        ]
        let model = try writeModel("move", files)
        let store = directory.appendingPathComponent("Move.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", model.path, "--version", "Move 1", "--rows", "30", "--seed", "5", store]).status == 0)
        // By hand: A 1, B 2, C 3, Tag 4; Z_1ITEMS holds the A-family keys of the join table.
        func links(of entity: Int) throws -> Int {
            Int(
                try SQLiteShell.run(store, "SELECT count(*) FROM Z_1TAGS j JOIN ZA a ON a.Z_PK = j.Z_1ITEMS WHERE a.Z_ENT = \(entity);").trimmingCharacters(
                    in: .whitespacesAndNewlines))!
        }
        let (ofA, ofB, ofC) = (try links(of: 1), try links(of: 2), try links(of: 3))
        #expect(ofA > 0 && ofB > 0 && ofC > 0)
        let expected = [
            "A.tags: \(ofA) links between A and Tag objects (no relationship of the new version joins their new entities)",
            "C.tags: \(ofC) links between C and Tag objects (no relationship of the new version joins their new entities)",
        ]
        let plan = try TernProcess.run(["plan", store, "--model", model.path, "--to", "Move 2"])
        let drops = plan.standardOutput.split(separator: "\n").filter { $0.contains("drops: ") }.map {
            String($0.drop { $0 == " " }.dropFirst("drops: ".count))
        }
        #expect(drops == expected, "\(plan.standardOutput)\(plan.standardError)")
        let refused = try TernProcess.run(["migrate", store, "--model", model.path, "--to", "Move 2", "--no-data-loss", "--progress", "none"])
        #expect(refused.status == 65, "\(refused.standardError)")
        // To the current version, one mapping inferred from Move 1: every link arrives.
        let direct = try TernProcess.run(["plan", store, "--model", model.path])
        #expect(!direct.standardOutput.contains("drops:") && direct.standardOutput.contains("Move 1 → Move 3"), "\(direct.standardOutput)")
        let whole = directory.appendingPathComponent("Move-3.sqlite").path
        #expect(try TernProcess.run(["migrate", store, "--model", model.path, "--no-data-loss", "--out", whole, "--progress", "none"]).status == 0)
        // Without it, B's links arrive and the others are reported as dropped.
        let output = directory.appendingPathComponent("Move-out.sqlite").path
        let migrated = try TernProcess.run(["migrate", store, "--model", model.path, "--to", "Move 2", "--out", output, "--progress", "none"])
        #expect(migrated.status == 0, "\(migrated.standardError)")
        for line in expected { #expect(migrated.standardOutput.contains("dropped: \(line)"), "\(migrated.standardOutput)") }
        let kept = try SQLiteShell.run(
            output, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'Z\\_%TAGS' ESCAPE '\\' OR name LIKE 'Z\\_%ITEMS' ESCAPE '\\';")
        #expect(kept.trimmingCharacters(in: .whitespacesAndNewlines) == "1")
    }

    @Test("an ordered to-many made unordered loses its order: counted in the keys the source holds, refused with --no-data-loss")
    func lostOrderIsCounted() throws {
        let version = { (name: String, ordered: Bool) in
            "version: \(name)\nentities:\n  Person:\n    attributes: { name: string }\n    relationships:\n      friends: { destination: Person, toMany: true, ordered: \(ordered) }\n"
        }
        let files = [
            "model.yaml": "name: Order\ncurrent: Order 2\nversions: [v1.yaml, v2.yaml]\n", "v1.yaml": version("Order 1", true),
            "v2.yaml": version("Order 2", false),
        ]
        let model = try writeModel("order", files)
        let store = directory.appendingPathComponent("Order.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", model.path, "--version", "Order 1", "--rows", "40", "--seed", "2", store]).status == 0)
        // Person is entity 1; `friends` has no inverse, so Core Data keeps it in Person's own
        // table: the owner in Z1FRIENDS, the order in Z_FOK_1FRIENDS.
        let keys = try SQLiteShell.run(store, "SELECT count(Z_FOK_1FRIENDS) FROM ZPERSON;").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect((Int(keys) ?? 0) > 0, "\(keys)")
        let plan = try TernProcess.run(["plan", store, "--model", model.path])
        #expect(plan.standardOutput.contains("drops: Person.friends: the order of \(keys) links (unordered in the new version)"), "\(plan.standardOutput)")
        #expect(try TernProcess.run(["migrate", store, "--model", model.path, "--no-data-loss", "--progress", "none"]).status == 65)
    }

    @Test("a many-to-many made one-to-one is reported once, with the links that cannot stay (at least all but one per object of the smaller side)")
    func manyToManyMadeOneToOne() throws {
        let version = { (name: String, many: Bool) in
            "version: \(name)\nentities:\n  Item:\n    attributes: { name: string }\n    relationships:\n      tag: { destination: Tag, toMany: \(many), inverse: item }\n"
                + "  Tag:\n    attributes: { label: string }\n    relationships:\n      item: { destination: Item, toMany: \(many), inverse: tag }\n"
        }
        let files = [
            "model.yaml": "name: Pairs\ncurrent: Pairs 2\nversions: [v1.yaml, v2.yaml]\n", "v1.yaml": version("Pairs 1", true),
            "v2.yaml": version("Pairs 2", false),
        ]
        let model = try writeModel("pairs", files)
        let store = directory.appendingPathComponent("Pairs.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", model.path, "--version", "Pairs 1", "--rows", "40", "--seed", "4", store]).status == 0)
        // Item 1, Tag 2: the join table Z_1TAG holds Z_1ITEM (items) and Z_2TAG (tags).
        let lost = try SQLiteShell.run(store, "SELECT count(*) - min(count(DISTINCT Z_1ITEM), count(DISTINCT Z_2TAG)) FROM Z_1TAG;").trimmingCharacters(
            in: .whitespacesAndNewlines)
        #expect(Int(lost)! > 0)
        let plan = try TernProcess.run(["plan", store, "--model", model.path])
        let drops = plan.standardOutput.split(separator: "\n").filter { $0.contains("drops: ") }
        #expect(
            drops.count == 1
                && drops[0].hasSuffix("at least \(lost) links lost: at most one link per object on either side stays (a one-to-one in the new version)"),
            "\(plan.standardOutput)")
        #expect(try TernProcess.run(["migrate", store, "--model", model.path, "--no-data-loss", "--progress", "none"]).status == 65)
    }

    @Test(
        "a wrong --model never empties a store: a step that keeps none of its objects is refused (65) by plan and migrate, in place and with --out, naming what the store holds and what the model has; nothing is written"
    )
    func wrongModelIsRefused() throws {
        let store = directory.appendingPathComponent("cars.sqlite").path
        try FileManager.default.copyItem(
            atPath: CheckAndGenerateCommandTests.fixtures + "/alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite", toPath: store)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
        let bookStore = CheckAndGenerateCommandTests.bookStore
        for arguments in [
            ["plan", store, "--model", bookStore], ["migrate", store, "--model", bookStore, "--progress", "none"],
            ["migrate", store, "--model", bookStore, "--out", directory.appendingPathComponent("out.sqlite").path, "--progress", "none", "--no-data-loss"],
        ] {
            let outcome = try TernProcess.run(arguments)
            #expect(outcome.status == 65, "\(arguments[0]): \(outcome.standardOutput)\(outcome.standardError)")
            #expect(
                outcome.standardError.contains("keeps none of the store's objects, so the store would be left empty. The store holds "),
                "\(outcome.standardError)")
            #expect(outcome.standardError.contains("version BookStore 5 has "), "\(outcome.standardError)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == files)
    }

    @Test(
        "an entity made abstract keeps none of its own objects (Core Data holds none): counted as dropped, refused with --no-data-loss, never written, on the SQL path and through Swift; its subentity's objects and links stay",
        arguments: [false, true])
    func madeAbstract(inSwift: Bool) throws {
        let version = { (name: String, abstract: Bool) in
            """
            version: \(name)
            entities:
              P:
                abstract: \(abstract)
                attributes: { a: string }
                relationships:
                  tags: { destination: Tag, toMany: true, ordered: \(abstract), inverse: ps }
              C:
                parent: P
                attributes: { c: string }
              Tag:
                attributes: { label: string }
                relationships:
                  ps: { destination: P, toMany: true, inverse: tags }
            """
        }
        let model = try writeModel(
            "abstract",
            [
                "model.yaml": "name: Abstract\ncurrent: Abstract 2\nversions: [v1.yaml, v2.yaml]\n",
                "v1.yaml": version("Abstract 1", false), "v2.yaml": version("Abstract 2", true),
            ])
        let store = directory.appendingPathComponent("abstract.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", model.path, "--version", "Abstract 1", "--rows", "10", "--seed", "4", store]).status == 0)
        let swift = inSwift ? ["--in-swift"] : []
        let plan = try TernProcess.run(["plan", store, "--model", model.path] + swift)
        #expect(
            plan.standardOutput.contains("drops: entity P: 10 objects (abstract in the new version: Core Data keeps no object of an abstract entity)"),
            "\(plan.standardOutput)")
        #expect(try TernProcess.run(["migrate", store, "--model", model.path, "--no-data-loss", "--progress", "none"] + swift).status == 65)
        let output = directory.appendingPathComponent("abstract-out.sqlite").path
        let migrated = try TernProcess.run(["migrate", store, "--model", model.path, "--out", output, "--progress", "none"] + swift)
        #expect(migrated.status == 0, "\(migrated.standardError)")
        func count(_ path: String, _ sql: String) throws -> String { try SQLiteShell.run(path, sql).trimmingCharacters(in: .whitespacesAndNewlines) }
        // P is entity 2 (C 1, P 2, Tag 3 by name, C under P): none of its own objects remain.
        #expect(try count(output, "SELECT count(*) FROM ZP WHERE Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'P');") == "0")
        #expect(try count(output, "SELECT count(*) FROM ZP;") == "10")
        #expect(
            try count(output, "SELECT group_concat(Z_PK) FROM (SELECT Z_PK FROM ZP ORDER BY Z_PK);")
                == count(
                    store,
                    "SELECT group_concat(Z_PK) FROM (SELECT Z_PK FROM ZP WHERE Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'C') ORDER BY Z_PK);"))
        #expect(try TernProcess.run(["check", output, "--model", model.path]).status == 0)
    }

    @Test(
        "an app's view over a column an in-place step drops is refused by plan and migrate (65) naming it and what to do; views, triggers and indexes of the app that still hold are kept"
    )
    func appViewsAndTriggers() throws {
        let version = { (name: String, attributes: String) in "version: \(name)\nentities:\n  A:\n    attributes: { \(attributes) }\n" }
        let model = try writeModel(
            "views",
            [
                "model.yaml": "name: V\ncurrent: V 2\nversions: [v1.yaml, v2.yaml]\n",
                "v1.yaml": version("V 1", "n: string, t: string"), "v2.yaml": version("V 2", "n: string"),
            ])
        let store = directory.appendingPathComponent("views.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", model.path, "--version", "V 1", "--rows", "5", store]).status == 0)
        #expect(try SQLiteShell.run(store, "CREATE VIEW appview AS SELECT ZN, ZT FROM ZA;").isEmpty)
        for command in ["plan", "migrate"] {
            let refused = try TernProcess.run([command, store, "--model", model.path])
            #expect(refused.status == 65, "\(command): \(refused.standardError)")
            #expect(
                refused.standardError.contains("the store's view appview would not hold after step V 1 → V 2")
                    && refused.standardError.contains("no such column: ZT")
                    && refused.standardError.contains("Drop the view before migrating"), "\(refused.standardError)")
        }
        // Views, triggers and app tables' indexes that still hold: kept through the in-place step.
        #expect(
            try SQLiteShell.run(
                store,
                """
                DROP VIEW appview; CREATE VIEW appnames AS SELECT ZN FROM ZA;
                CREATE TABLE applog (n TEXT); CREATE INDEX applog_n ON applog (n);
                CREATE TRIGGER applogger AFTER INSERT ON ZA BEGIN INSERT INTO applog VALUES (NEW.ZN); END;
                """
            ).isEmpty)
        let migrated = try TernProcess.run(["migrate", store, "--model", model.path, "--progress", "none"])
        #expect(migrated.status == 0, "\(migrated.standardError)")
        #expect(
            try SQLiteShell.run(store, "SELECT type, name FROM sqlite_master WHERE name IN ('appnames', 'applog', 'applog_n', 'applogger') ORDER BY name;")
                == "table|applog\nindex|applog_n\ntrigger|applogger\nview|appnames\n")
        #expect(try SQLiteShell.run(store, "SELECT count(*) FROM appnames;") == "5\n")
    }

    @Test(
        "an app's index on a model table survives an in-place step; a copied step makes again the app's views, triggers and indexes that hold, and reports those that do not (refused with --no-data-loss)"
    )
    func appObjectsOnBothPaths() throws {
        let model = try writeModel(
            "objects",
            [
                "model.yaml": "name: O\ncurrent: O 3\nversions: [v1.yaml, v2.yaml, v3.yaml]\n",
                "v1.yaml": "version: O 1\nentities:\n  A:\n    attributes: { n: string, t: string }\n  B:\n    attributes: { x: string }\n",
                // In place: B gains a column.
                "v2.yaml": "version: O 2\nentities:\n  A:\n    attributes: { n: string, t: string }\n  B:\n    attributes: { x: string, y: string }\n",
                // A copy: AA comes between A and B, which B's entity number moves for; A loses t.
                "v3.yaml":
                    "version: O 3\nentities:\n  A:\n    attributes: { n: string }\n  AA:\n    attributes: { m: string }\n  B:\n    attributes: { x: string }\n",
            ])
        let objects = """
            CREATE INDEX app_a_n ON ZA (ZN); CREATE VIEW appnames AS SELECT ZN FROM ZA;
            CREATE TRIGGER appcount AFTER INSERT ON ZA BEGIN SELECT 1; END; CREATE VIEW appt AS SELECT ZT FROM ZA;
            """
        let inPlace = directory.appendingPathComponent("objects-inplace.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", model.path, "--version", "O 1", "--rows", "5", inPlace]).status == 0)
        #expect(try SQLiteShell.run(inPlace, "CREATE INDEX app_a_n ON ZA (ZN); CREATE VIEW appnames AS SELECT ZN FROM ZA;").isEmpty)
        let step = try TernProcess.run(["migrate", inPlace, "--model", model.path, "--to", "O 2", "--progress", "none"])
        #expect(step.status == 0 && step.standardOutput.contains("applied in place"), "\(step.standardOutput)\(step.standardError)")
        #expect(try SQLiteShell.run(inPlace, "SELECT type, name FROM sqlite_master WHERE name LIKE 'app%' ORDER BY name;") == "index|app_a_n\nview|appnames\n")

        let store = directory.appendingPathComponent("objects.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", model.path, "--version", "O 1", "--rows", "5", store]).status == 0)
        #expect(try SQLiteShell.run(store, objects).isEmpty)
        let notCarried = "the store's view appt (it would not hold over the new version's tables: no such column: ZT"
        let plan = try TernProcess.run(["plan", store, "--model", model.path])
        #expect(plan.status == 0 && plan.standardOutput.contains("drops: \(notCarried)"), "\(plan.standardOutput)\(plan.standardError)")
        let refused = try TernProcess.run(["migrate", store, "--model", model.path, "--no-data-loss", "--progress", "none"])
        #expect(refused.status == 65 && refused.standardError.contains(notCarried), "\(refused.standardError)")
        let output = directory.appendingPathComponent("objects-out.sqlite").path
        let copied = try TernProcess.run(["migrate", store, "--model", model.path, "--out", output, "--progress", "none"])
        #expect(copied.status == 0, "\(copied.standardError)")
        #expect(copied.standardOutput.contains("dropped: \(notCarried)"), "\(copied.standardOutput)")
        #expect(
            try SQLiteShell.run(output, "SELECT type, name FROM sqlite_master WHERE name LIKE 'app%' ORDER BY name;")
                == "index|app_a_n\ntrigger|appcount\nview|appnames\n")
        #expect(try SQLiteShell.run(output, "SELECT count(*) FROM appnames;") == "5\n")
    }

    @Test(
        "the app's schema, as apps have it: an FTS5 table with its shadow tables, an INSTEAD OF trigger on a view, a trigger on a WITHOUT ROWID table — kept in place, not refused; a trigger a later in-place step would break is refused before any work"
    )
    func appSchemasAsAppsHaveThem() throws {
        let model = try writeModel(
            "apps",
            [
                "model.yaml": "name: S\ncurrent: S 3\nversions: [v1.yaml, v2.yaml, v3.yaml]\n",
                "v1.yaml": "version: S 1\nentities:\n  B:\n    attributes: { n: string, t: string }\n",
                // A copy: A comes before B, which B's entity number moves for.
                "v2.yaml": "version: S 2\nentities:\n  A:\n    attributes: { m: string }\n  B:\n    attributes: { n: string, t: string }\n",
                // In place: B loses t.
                "v3.yaml": "version: S 3\nentities:\n  A:\n    attributes: { m: string }\n  B:\n    attributes: { n: string }\n",
            ])
        let objects = """
            CREATE VIRTUAL TABLE notes_fts USING fts5(body);
            CREATE TRIGGER fts_sync AFTER INSERT ON ZB BEGIN INSERT INTO notes_fts (body) VALUES (NEW.ZN); END;
            CREATE VIEW names AS SELECT Z_PK, ZN FROM ZB;
            CREATE TRIGGER names_insert INSTEAD OF INSERT ON names BEGIN INSERT INTO ZB (ZN) VALUES (NEW.ZN); END;
            CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
            CREATE TRIGGER settings_touch AFTER UPDATE ON settings BEGIN SELECT 1; END;
            """
        let store = directory.appendingPathComponent("apps.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", model.path, "--version", "S 2", "--rows", "5", store]).status == 0)
        #expect(try SQLiteShell.run(store, objects).isEmpty)
        let inPlace = try TernProcess.run(["migrate", store, "--model", model.path, "--progress", "none"])
        #expect(inPlace.status == 0 && inPlace.standardOutput.contains("applied in place"), "\(inPlace.standardOutput)\(inPlace.standardError)")
        #expect(
            try SQLiteShell.run(
                store, "SELECT type, name FROM sqlite_master WHERE name IN ('fts_sync', 'names', 'names_insert', 'settings_touch') ORDER BY name;")
                == "trigger|fts_sync\nview|names\ntrigger|names_insert\ntrigger|settings_touch\n")

        // Step by step from S 1: a copy to S 2 keeps the trigger, then S 3 in place would break it.
        let chained = directory.appendingPathComponent("chained.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", model.path, "--version", "S 1", "--rows", "5", chained]).status == 0)
        #expect(try SQLiteShell.run(chained, "CREATE TRIGGER keep_t AFTER INSERT ON ZB BEGIN UPDATE ZB SET ZN = NEW.ZT WHERE Z_PK = NEW.Z_PK; END;").isEmpty)
        let refused = try TernProcess.run(["migrate", chained, "--model", model.path, "--step-by-step", "--progress", "none"])
        #expect(refused.status == 65, "\(refused.standardError)")
        #expect(refused.standardError.contains("the store's trigger keep_t would not hold after step S 2 → S 3"), "\(refused.standardError)")
    }

    @Test("a mapping model that leaves out an entity of both versions says what it drops (its objects, counted), and --no-data-loss refuses it")
    func entityLeftOutByMapping() throws {
        let version = { (name: String, modifier: String) in
            "version: \(name)\nentities:\n  Note:\n    hashModifier: \"\(modifier)\"\n    attributes: { title: string }\n  Tag:\n    attributes: { label: string }\n"
        }
        let model = try writeModel(
            "leftout",
            [
                "model.yaml": "name: L\ncurrent: L 2\nversions: [v1.yaml, v2.yaml]\n",
                "v1.yaml": version("L 1", "1"), "v2.yaml": version("L 2", "2"),
            ])
        let mapping = model.appendingPathComponent("notes-only.yaml").path
        try """
        source: L 1
        destination: L 2
        entityMappings:
          - { name: NoteToNote, type: copy, source: Note, destination: Note, attributes: { title: $source.title } }
        """.write(toFile: mapping, atomically: true, encoding: .utf8)
        let store = directory.appendingPathComponent("leftout.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", model.path, "--version", "L 1", "--rows", "7", store]).status == 0)
        let plan = try TernProcess.run(["plan", store, "--model", model.path, "--mapping", mapping])
        #expect(
            plan.standardOutput.contains("drops: entity Tag: 7 objects (in both versions, but no entity mapping of the mapping model reads it)"),
            "\(plan.standardOutput)\(plan.standardError)")
        #expect(try TernProcess.run(["migrate", store, "--model", model.path, "--mapping", mapping, "--no-data-loss", "--progress", "none"]).status == 65)
    }

    @Test(
        "objects no entity mapping's filter selects are dropped objects: counted, refused with --no-data-loss; a step keeping none of them is refused whatever the flags"
    )
    func filteredOutObjectsAreCounted() throws {
        let store = directory.appendingPathComponent("Filtered.sqlite").path
        #expect(try TernProcess.run(["generate", "--model", directory.path, "--version", "Notes 1", "--rows", "40", store]).status == 0)
        try SQLiteShell.run(store, "UPDATE ZNOTE SET ZTITLE = 'keep' WHERE Z_PK <= 15; UPDATE ZNOTE SET ZTITLE = NULL WHERE Z_PK > 35;")
        func mapping(noteFilter: String, folderFilter: String? = nil) throws -> String {
            let path = directory.appendingPathComponent("map-\(UUID().uuidString).yaml").path
            try """
            source: Notes 1
            destination: Notes 2
            entityMappings:
              - name: FolderToFolder
                type: transform
                source: Folder
                destination: Folder\(folderFilter.map { "\n    filter: '\($0)'" } ?? "")
                attributes:
                  name: '$source.name'
              - name: NoteToNote
                type: transform
                source: Note
                destination: Note
                filter: '\(noteFilter)'
                attributes:
                  title: '$source.title'

            """.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let some = try mapping(noteFilter: "title == \"keep\"")
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let refused = try TernProcess.run(["migrate", store, "--model", directory.path, "--mapping", some, "--no-data-loss", "--progress", "none"])
        #expect(refused.status == 65, "\(refused.standardError)")
        // 40 notes, 15 titled "keep": 25 left out, the 5 NULL titles among them.
        #expect(
            refused.standardError.contains("entity Note: 25 objects no entity mapping selects (the filter of NoteToNote leaves them out)"),
            "\(refused.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)

        let output = directory.appendingPathComponent("filtered-out.sqlite").path
        let migrated = try TernProcess.run(["migrate", store, "--model", directory.path, "--mapping", some, "--out", output, "--progress", "none"])
        #expect(migrated.status == 0, "\(migrated.standardError)")
        #expect(migrated.standardOutput.contains("dropped: entity Note: 25 objects no entity mapping selects"), "\(migrated.standardOutput)")
        #expect(try SQLiteShell.run(output, "SELECT count(*) FROM ZNOTE;") == "15\n")

        let none = try mapping(noteFilter: "title == \"never\"", folderFilter: "name == \"never\"")
        let emptied = directory.appendingPathComponent("emptied.sqlite").path
        let keepsNothing = try TernProcess.run(["migrate", store, "--model", directory.path, "--mapping", none, "--out", emptied, "--progress", "none"])
        #expect(keepsNothing.status == 65, "\(keepsNothing.standardError)")
        #expect(keepsNothing.standardError.contains("select none of the store's objects"), "\(keepsNothing.standardError)")
        #expect(!FileManager.default.fileExists(atPath: emptied))
    }
}
