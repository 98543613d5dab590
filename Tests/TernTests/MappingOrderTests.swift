import Foundation
import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore
import TernGenerate
import TernExamples
import TernSQLite

@Suite("Entity mappings run with relationship targets first")
struct MappingOrderTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// configs/bench's SQL mapping with PageToPage moved first and a filter on the books, so
    /// books get new keys and a page's book is known only once the books exist.
    private func mapping(policy: String?) throws -> String {
        var text = try String(contentsOfFile: Configs.path("bench") + "/mappings/1-to-2.yaml", encoding: .utf8)
        let pageStart = text.range(of: "  - name: PageToPage")!.lowerBound
        let page = String(text[pageStart...])
        text.removeSubrange(pageStart...)
        text = text.replacingOccurrences(of: "entityMappings:\n", with: "entityMappings:\n" + page)
        text = text.replacingOccurrences(
            of: "    destination: Publication\n", with: "    destination: Publication\n    filter: price >= 0\n" + (policy.map { "    policy: \($0)\n" } ?? ""))
        let path = directory.path("reordered-\(policy ?? "sql").yaml")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func migrate(policy: String?) throws -> (StepReport, Connection, Connection) {
        let model = try ModelLoader.load(Configs.path("bench"))
        let source = directory.path("bench.sqlite")
        if !FileManager.default.fileExists(atPath: source) {
            _ = try DataGenerator.generate(model: model.versions[0], at: source, rows: 400, counts: ["Page": 1200, "Category": 20], seed: 2)
        }
        let output = directory.path("out-\(policy ?? "sql").sqlite")
        let migration = StoreMigration(store: source, model: model, options: MigrationOptions(batchSize: 100, registry: .builtIn))
        let report = try migration.runBlocking(try migration.plan(mappingFiles: [try mapping(policy: policy)]), output: output)
        return (
            report.steps[0], try Connection(path: source, configuration: .init(mode: .readOnly)),
            try Connection(path: output, configuration: .init(mode: .readOnly))
        )
    }

    @Test("a page mapping listed before its books runs after them, and its book key is written with the page, not fixed up afterwards")
    func targetsFirst() throws {
        let (report, source, migrated) = try migrate(policy: nil)
        #expect(report.mappings.map(\.name) == ["CategoryToCategory", "BookToPublication", "PageToPage"])
        // No time spent writing them apart (from either side: the book's pages are an ordered
        // list): stage 1 wrote them, order keys too; verification counted them.
        #expect(report.linkSeconds["PageToPage.book"] == nil && report.linkSeconds["BookToPublication.pages"] == nil)
        #expect((report.links["PageToPage.book"] ?? report.links["BookToPublication.pages"] ?? 0) > 0)
        let query = "SELECT p.Z_PK, p.ZNUMBER, b.ZTITLE FROM ZPAGE p LEFT JOIN %@ b ON b.Z_PK = p.ZBOOK ORDER BY p.Z_PK"
        #expect(
            try rows(source, query.replacingOccurrences(of: "%@", with: "ZBOOK")) == rows(migrated, query.replacingOccurrences(of: "%@", with: "ZPUBLICATION")))
    }

    @Test("a pass with a mapping in Swift keeps the file's order")
    func policiesKeepOrder() throws {
        let (report, source, migrated) = try migrate(policy: "AuthorSplitPolicy")
        #expect(report.mappings.map(\.name) == ["PageToPage", "CategoryToCategory", "BookToPublication"])
        // Written in stage 2 (the books come after their pages), from the list's side.
        #expect(report.linkSeconds["PageToPage.book"] != nil || report.linkSeconds["BookToPublication.pages"] != nil)
        let query = "SELECT p.Z_PK, p.ZNUMBER, b.ZTITLE FROM ZPAGE p LEFT JOIN %@ b ON b.Z_PK = p.ZBOOK ORDER BY p.Z_PK"
        #expect(
            try rows(source, query.replacingOccurrences(of: "%@", with: "ZBOOK")) == rows(migrated, query.replacingOccurrences(of: "%@", with: "ZPUBLICATION")))
    }

    @Test("the plan says, before anything runs, how each mapping will run: order, SQL or Swift, keys kept or not — and the run follows it")
    func planWithoutRunning() throws {
        let model = try ModelLoader.load(Configs.path("bench"))
        let chain = try MigrationPlanner.chain(
            in: model, from: model.versions[0].versionName, to: model.currentVersionName,
            mappingFiles: [], overriding: [try mapping(policy: nil)], now: 0
        ).steps
        let sql = chain[0].planned(with: PolicyRegistry.builtIn(inSwift: false))
        #expect(sql.mappings.map(\.mapping.mapping.name) == ["CategoryToCategory", "BookToPublication", "PageToPage"])
        #expect(sql.mappings.map(\.runsInSwift) == [false, false, false])
        // The filtered books get new keys; categories and pages keep theirs.
        #expect(sql.mappings.map(\.keepsKeys) == [true, false, true])
        let swift = chain[0].planned(with: PolicyRegistry.builtIn(inSwift: true))
        #expect(swift.mappings.map(\.mapping.mapping.name) == ["PageToPage", "CategoryToCategory", "BookToPublication"])
        #expect(swift.mappings.allSatisfy { $0.runsInSwift && !$0.keepsKeys })
        let (report, _, _) = try migrate(policy: nil)
        #expect(report.mappings.map(\.name) == sql.mappings.map(\.mapping.mapping.name))
        #expect(report.mappings.map(\.keptKeys) == sql.mappings.map(\.keepsKeys))
    }
}
