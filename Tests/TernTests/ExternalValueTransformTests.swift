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
import TernSQLite

/// A hook or policy that changes a value Core Data may store outside the store sees the value's
/// bytes (never its marker or file name), and what it makes is stored as Core Data would: a new
/// file when large, inline when small; values it leaves alone keep their files.
@Suite("Transformed external values")
struct ExternalValueTransformTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Reverses the attachment of every document whose source key is even, and remembers what
    /// it was given.
    final class ReversingHook: MigrationManagerDelegate, @unchecked Sendable {
        private let lock = NSLock()
        private var given: [Int64: SQLiteValue] = [:]

        var seen: [Int64: SQLiteValue] { lock.withLock { given } }

        func observes(_ mapping: EntityMapping) -> Bool { mapping.name == "DocumentToDocument" }

        func associate(source: SourceObject, destination: inout DestinationObject, mapping: EntityMapping) {
            let value = source.values["attachment"] ?? .null
            lock.withLock { given[source.key] = value }
            if source.key % 2 == 0, case .blob(let bytes) = value {
                destination.values["attachment"] = .blob(bytes.reversed())
            }
        }
    }

    private static func appBytes(_ stored: SQLiteValue, folder: String) throws -> [UInt8]? {
        try CoreDataBinary.appValue(stored, folder: folder).blob
    }

    private static func folder(_ store: String) -> String { CoreDataBinary.folder(ofStore: store) }

    private static func documents(_ store: String, title: String) throws -> [(key: Int64, title: String, stored: SQLiteValue)] {
        let connection = try Connection(path: store, configuration: .init(mode: .readOnly))
        defer { try? connection.close() }
        let statement = try connection.prepare("SELECT Z_PK, \(title), ZATTACHMENT FROM ZDOCUMENT ORDER BY Z_PK")
        var rows = statement.rows()
        var documents: [(Int64, String, SQLiteValue)] = []
        while let row = try rows.next() { documents.append((row.int64(at: 0), row.value(at: 1).text ?? "", row.value(at: 2))) }
        return documents
    }

    @Test(
        "a manager hook reverses half the attachments: it sees their bytes; large results are new files, small ones inline; the rest keep their files — --out and in place",
        arguments: [false, true])
    func hookTransformsAttachments(inPlace: Bool) throws {
        let model = try ModelLoader.load(Configs.path("attachments"))
        let source = directory.path("Docs.sqlite")
        _ = try DataGenerator.generate(model: model.version(named: "Attachments 1")!, at: source, rows: 90, seed: 5)
        let sourceFolder = Self.folder(source)
        let originalFiles = try FileManager.default.contentsOfDirectory(atPath: sourceFolder).sorted()
        let before = try Self.documents(source, title: "ZTITLE")
        let beforeBytes = try Dictionary(uniqueKeysWithValues: before.map { ($0.key, try Self.appBytes($0.stored, folder: sourceFolder)) })
        #expect(before.filter { $0.stored.blob?.first == 0x02 }.count > 10)

        let hook = ReversingHook()
        var registry = PolicyRegistry()
        registry.delegate = hook
        let migration = StoreMigration(store: source, model: model, options: MigrationOptions(batchSize: 7, workers: 2, registry: registry))
        let output = inPlace ? source : directory.path("Out.sqlite")
        _ = try migration.runBlocking(try migration.plan(to: "Attachments 2"), output: inPlace ? nil : output)

        // The hook was given each attachment's bytes.
        #expect(hook.seen.count == before.count)
        for (key, value) in hook.seen {
            #expect(value.blob == beforeBytes[key]!, "source Document \(key): the hook was not given the attachment's bytes")
        }
        // Each document's attachment as the app reads it: reversed for even keys, else the same.
        let after = try Self.documents(output, title: "ZNAME")
        let outputFolder = Self.folder(output)
        let expected = before.map { "\($0.title) \(($0.key % 2 == 0 ? beforeBytes[$0.key]!.map { Array($0.reversed()) } : beforeBytes[$0.key]!) ?? [])" }
            .sorted()
        #expect(try after.map { "\($0.title) \(try Self.appBytes($0.stored, folder: outputFolder) ?? [])" }.sorted() == expected)
        // In Core Data's forms: every value behind a marker; a reversed large value in a new
        // file; an unchanged value stored exactly as before.
        let unchanged = Set(before.filter { $0.key % 2 == 1 }.compactMap { $0.stored.blob })
        let reversedLarge = before.filter { $0.key % 2 == 0 && (beforeBytes[$0.key]!?.count ?? 0) > ExternalBinaryData.threshold }.count
        let stored = after.compactMap { $0.stored.blob }
        #expect(stored.allSatisfy { $0.first == 0x01 || $0.first == 0x02 })
        #expect(unchanged.isSubset(of: Set(stored)))
        let newFiles = stored.filter { $0.first == 0x02 && !unchanged.contains($0) }
        #expect(newFiles.count == reversedLarge && reversedLarge > 3)
        #expect(newFiles.allSatisfy { !originalFiles.contains(String(decoding: $0[1..<37], as: UTF8.self)) })
        // The original's files are all still there; no work folder is left.
        let originalNow = inPlace ? Self.folder(directory.path("Docs~.sqlite")) : sourceFolder
        #expect(try FileManager.default.contentsOfDirectory(atPath: originalNow).sorted() == originalFiles)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains("tern-step") }.isEmpty)
    }
}
