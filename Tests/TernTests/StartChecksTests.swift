import Foundation
import Synchronization
import Testing
@_spi(Testing) @testable import Tern
@testable import TernDurability
@_spi(Testing) @testable import TernExecution
@testable import TernPlanning
import TernGenerate
import TernSQLite
import TernTesting

/// A new run reads its source's digest (and scans it for rows Core Data never writes) beside the
/// first pass when it has a second worker (`StartChecks`): these tests hold that thread at its
/// milestone to put a commit, or a stop, exactly where a race would put it.
/// A flag the run's threads set and read.
private final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
    /// Sets it; true the first time.
    func setFirst() -> Bool { !value.exchange(true, ordering: .relaxed) }
}

/// A count the run's threads add to.
private final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    var count: Int { value.load(ordering: .relaxed) }
    func add() { value.add(1, ordering: .relaxed) }
}

@Suite("Start checks beside the first pass")
struct StartChecksTests {
    let directory: TemporaryDirectory
    let model: VersionedModel
    let source: String

    init() throws {
        let bench = try BenchSource(books: 3000, seed: 3)
        (directory, model, source) = (bench.directory, bench.model, bench.path)
        // A rollback-journal store: its commit counter lets the run see every commit from the
        // start, which is what the checks need to read beside the pass.
        let connection = try Connection(path: source, configuration: .init(mode: .readWrite))
        try connection.execute("PRAGMA journal_mode = DELETE")
        try connection.close()
    }

    private func rows(_ path: String, _ table: String) throws -> [String] {
        let connection = try Connection(path: path, configuration: .init(mode: .readOnly))
        var result: [String] = []
        var rows = try connection.prepare("SELECT * FROM \(table) ORDER BY Z_PK").rows()
        while let row = try rows.next() { result.append(row.values.map(\.sqlLiteral).joined(separator: "|")) }
        return result
    }

    private func expectSameStore(_ store: String, as reference: String) throws {
        for table in ["ZPUBLICATION", "ZCATEGORY", "ZPAGE"] {
            #expect(try rows(store, table) == rows(reference, table), "\(table)")
        }
    }

    /// A run of the SQL path in batches of 100, with `reached` told of each milestone.
    private func migration(
        workers: Int = 2, clock: WallClock = .system, shouldStop: @escaping @Sendable () -> Bool = { false },
        reached: (@Sendable (MigrationOptions.Milestone) -> Void)? = nil
    )
        -> StoreMigration
    {
        var options = MigrationOptions(batchSize: 100, workers: workers, shouldStop: shouldStop)
        options.reached = reached
        options.wallClock = clock
        return StoreMigration(store: source, model: model, options: options)
    }

    private func reference() throws -> String {
        let path = directory.path("reference.sqlite")
        let plain = migration(workers: 1)
        _ = try plain.runBlocking(try plain.plan(), output: path)
        return path
    }

    private func record(of output: String) -> String { MigrationRun.path(for: output) }

    @Test(
        "a commit after the pass read a row and before the digest read it is refused as a change to the store (the digest alone would hide it), not left for verification to find as a wrong value"
    )
    func commitInsideTheWindow() throws {
        let firstBatch = DispatchSemaphore(value: 0)
        let signalled = Flag()
        let source = self.source
        let run = migration(reached: { milestone in
            switch milestone {
            case .batchCommitted:
                if signalled.setFirst() { firstBatch.signal() }
            case .readingStartDigest:
                // The pass has read and written its first batch: change a row it read.
                firstBatch.wait()
                let writer = try! Connection(path: source, configuration: .init(mode: .readWrite))
                try! writer.execute("UPDATE ZBOOK SET ZTITLE = 'edited meanwhile' WHERE Z_PK = (SELECT min(Z_PK) FROM ZBOOK)")
                try! writer.close()
            default: break
            }
        })
        let output = directory.path("window.sqlite")
        let plan = try run.plan()
        let failure = try #require(throws: TernFailure.self) { try run.runBlocking(plan, output: output) }
        #expect("\(failure)".contains("the store changed while it was being migrated"), "\(failure)")
        #expect("\(failure)".contains("a commit landed while the run read its content at the start"), "\(failure)")
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(!FileManager.default.fileExists(atPath: record(of: output)))
    }

    @Test(
        "stopped before the checks end, on a source written a moment ago, a run keeps nothing and starts over; stopped after, it resumes from its record; both equal an uninterrupted run"
    )
    func stoppedBeforeAndAfterTheRecord() throws {
        let reference = try reference()
        for recorded in [false, true] {
            let output = directory.path("stopped-\(recorded).sqlite")
            let record = record(of: output)
            let stop = Flag()
            let checksHeld = DispatchSemaphore(value: 0)
            let checksEnded = DispatchSemaphore(value: 0)
            let firstBatch = Flag()
            let run = migration(shouldStop: { stop.isSet }) { milestone in
                switch milestone {
                case .readingStartDigest where !recorded:
                    // Held until the pass has been stopped: the record cannot have been written.
                    checksHeld.wait()
                case .batchCommitted where !recorded:
                    stop.set()
                    checksHeld.signal()
                case .startChecksEnded where recorded:
                    checksEnded.signal()
                case .batchCommitted where recorded:
                    // The first batch waits for the checks: its boundary writes the record, and
                    // the next one stops.
                    if firstBatch.setFirst() { checksEnded.wait() } else { stop.set() }
                default: break
                }
            }
            let plan = try run.plan()
            let failure = try #require(throws: TernFailure.self) { try run.runBlocking(plan, output: output) }
            #expect(failure.kind == .interrupted, "\(failure)")
            #expect(FileManager.default.fileExists(atPath: record) == recorded)
            if recorded {
                #expect(try MigrationRun.load(at: record)?.inputs != nil)
            } else {
                // Nothing to continue: the step's file goes, and the words say so.
                #expect("\(failure)".contains("interrupted in its first seconds, before it had read its source"), "\(failure)")
                let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(".stopped") }
                #expect(left.isEmpty, "\(left)")
            }
            let resumed = migration()
            _ = try resumed.runBlocking(plan, output: output, resume: true)
            try expectSameStore(output, as: reference)
            #expect(!FileManager.default.fileExists(atPath: record))
        }
    }

    @Test(
        "stopped before the checks end, on a source still for a while, the record waits for its digest: a resume that finds the file unchanged goes on, its checks read beside the pass; one that finds it touched starts over"
    )
    func stoppedOnAStillSource() throws {
        let reference = try reference()
        let whole = Counter()
        let counted = migration(reached: { if $0 == .batchCommitted { whole.add() } })
        _ = try counted.runBlocking(try counted.plan(), output: directory.path("counted.sqlite"))
        let fullRun = whole.count
        // Still for longer than a file state needs to prove anything (`StoreFileState.stillFor`),
        // by a clock moved ahead rather than by waiting.
        let later = WallClock.shifted(by: 10)
        for touched in [false, true] {
            let output = directory.path("still-\(touched).sqlite")
            let record = record(of: output)
            let stop = Flag()
            let checksHeld = DispatchSemaphore(value: 0)
            let run = migration(clock: later, shouldStop: { stop.isSet }) { milestone in
                switch milestone {
                case .readingStartDigest: checksHeld.wait()
                case .batchCommitted:
                    stop.set()
                    checksHeld.signal()
                default: break
                }
            }
            let plan = try run.plan()
            let failure = try #require(throws: TernFailure.self) { try run.runBlocking(plan, output: output) }
            #expect(failure.kind == .interrupted && "\(failure)".contains("the work done so far is saved"), "\(failure)")
            let pending = try #require(try MigrationRun.load(at: record))
            #expect(pending.sourcePending == true && pending.sourceFile != nil)
            if touched {
                // The same bytes, but a write the file's times show: no longer provably unchanged.
                let connection = try Connection(path: source, configuration: .init(mode: .readWrite))
                try connection.execute("UPDATE ZCATEGORY SET ZNAME = ZNAME || 'x'; UPDATE ZCATEGORY SET ZNAME = substr(ZNAME, 1, length(ZNAME) - 1)")
                try connection.close()
            }
            // Gone on from its first batch, or made everything again; either way with its checks
            // read beside the pass: held until a batch is written, with the digest still pending.
            let batches = Counter()
            let pendingAtABatch = Flag()
            let firstBatch = DispatchSemaphore(value: 0)
            let resumed = migration(
                clock: later,
                reached: { milestone in
                    switch milestone {
                    case .readingStartDigest: _ = firstBatch.wait(timeout: .now() + 5)  // bounded: read before the pass, no batch comes
                    case .batchCommitted:
                        batches.add()
                        if batches.count == 1 {
                            if (try? MigrationRun.load(at: record))??.sourcePending == true { pendingAtABatch.set() }
                            firstBatch.signal()
                        }
                    default: break
                    }
                })
            _ = try resumed.runBlocking(plan, output: output, resume: true)
            try expectSameStore(output, as: reference)
            #expect(!FileManager.default.fileExists(atPath: record))
            #expect(touched ? batches.count == fullRun : batches.count < fullRun, "\(batches.count) batches, \(fullRun) in a whole run")
            #expect(pendingAtABatch.isSet)
        }
    }

    @Test(
        "a record whose digest an earlier hash took: a resume on the very file reads it again with this hash and goes on; on a touched file it is refused, saying the hashes differ, not that the store changed"
    )
    func digestOfAnEarlierHash() throws {
        let reference = try reference()
        let later = WallClock.shifted(by: 10)
        for touched in [false, true] {
            let output = directory.path("rehashed-\(touched).sqlite")
            let record = record(of: output)
            let stop = Flag()
            let checksEnded = DispatchSemaphore(value: 0)
            let firstBatch = Flag()
            let run = migration(clock: later, shouldStop: { stop.isSet }) { milestone in
                switch milestone {
                case .startChecksEnded: checksEnded.signal()
                case .batchCommitted: if firstBatch.setFirst() { checksEnded.wait() } else { stop.set() }
                default: break
                }
            }
            let plan = try run.plan()
            #expect(throws: TernFailure.self) { try run.runBlocking(plan, output: output) }
            // As an earlier Tern recorded it: no scheme, and its own checksums.
            var earlier = try #require(try MigrationRun.load(at: record))
            var digest = try #require(earlier.inputs?.source)
            #expect(digest.takenWithCurrentHash && earlier.sourceFile != nil)
            digest.scheme = nil
            for table in digest.tables.keys { digest.tables[table]!.checksum &+= 1 }
            earlier.inputs?.source = digest
            try earlier.save(at: record)
            if touched {
                let connection = try Connection(path: source, configuration: .init(mode: .readWrite))
                try connection.execute("UPDATE ZCATEGORY SET ZNAME = ZNAME || 'x'; UPDATE ZCATEGORY SET ZNAME = substr(ZNAME, 1, length(ZNAME) - 1)")
                try connection.close()
                let failure = try #require(throws: TernFailure.self) { try migration(clock: later).runBlocking(plan, output: output, resume: true) }
                #expect("\(failure)".contains("the source's digest was read by a Tern that hashes content differently (scheme 1, now 2)"), "\(failure)")
                #expect(!"\(failure)".contains("the source store changed"), "\(failure)")
                continue
            }
            // Read again with this Tern's hash, not the earlier digest relabelled.
            let now = try StoreDigest.read(storeAt: source)
            let rehashed = Flag()
            let resumed = migration(
                clock: later,
                reached: { milestone in
                    if milestone == .batchCommitted, let digest = (try? MigrationRun.load(at: record))??.inputs?.source,
                        digest.takenWithCurrentHash, digest.tables == now.tables
                    {
                        rehashed.set()
                    }
                })
            _ = try resumed.runBlocking(plan, output: output, resume: true)
            try expectSameStore(output, as: reference)
            #expect(rehashed.isSet)
        }
    }

    @Test("read beside the pass, the checks still refuse a store with rows Core Data never writes, naming them, and leave nothing behind")
    func anomaliesBesideThePass() throws {
        let connection = try Connection(path: source, configuration: .init(mode: .readWrite))
        try connection.execute("UPDATE ZPAGE SET ZBOOK = 99999999 WHERE Z_PK = (SELECT max(Z_PK) FROM ZPAGE)")
        try connection.close()
        let readingDigest = Flag()
        let run = migration(reached: { milestone in if milestone == .readingStartDigest { readingDigest.set() } })
        let output = directory.path("anomalies.sqlite")
        let plan = try run.plan()
        let failure = try #require(throws: TernFailure.self) { try run.runBlocking(plan, output: output) }
        #expect("\(failure)".contains("referring to a Book that does not exist"), "\(failure)")
        #expect(!readingDigest.isSet)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(".") || $0.hasPrefix("anomalies") }
        #expect(left.isEmpty, "\(left)")
    }

    @Test(
        "a row's own anomaly is counted in the digest's scan, which reads every row once, and refused naming it; with a dangling key too, both are named",
        arguments: [false, true])
    func rowAnomaliesCountedWithTheDigest(withDanglingKey: Bool) throws {
        let connection = try Connection(path: source, configuration: .init(mode: .readWrite))
        try connection.execute("UPDATE ZPAGE SET Z_ENT = 99 WHERE Z_PK = (SELECT min(Z_PK) FROM ZPAGE)")
        if withDanglingKey { try connection.execute("UPDATE ZPAGE SET ZBOOK = 99999999 WHERE Z_PK = (SELECT max(Z_PK) FROM ZPAGE)") }
        try connection.close()
        let readingDigest = Flag()
        let run = migration(reached: { milestone in if milestone == .readingStartDigest { readingDigest.set() } })
        let output = directory.path("anomalies.sqlite")
        let failure = try #require(throws: TernFailure.self) { try run.runBlocking(try run.plan(), output: output) }
        #expect("\(failure)".contains("ZPAGE: 1 row whose Z_ENT is not one of the table's entities"), "\(failure)")
        #expect("\(failure)".contains("referring to a Book that does not exist") == withDanglingKey, "\(failure)")
        // Found by the digest's scan alone, or with the keys' before any digest is read.
        #expect(readingDigest.isSet == !withDanglingKey)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(".") || $0.hasPrefix("anomalies") }
        #expect(left.isEmpty, "\(left)")
    }
}
