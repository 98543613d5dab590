import ArgumentParser
import Foundation
import Tern
import TernCommands
import TernLoop
import TernSQLite

/// The floor under every workload: the source rewritten by SQLite's `VACUUM INTO`, page by page
/// with its indexes, migrating nothing. No tool that reads every row and writes a new store can
/// take less; the table shows how far each workload is from it.
struct VacuumFloorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vacuum-floor", abstract: "Rewrite the source with VACUUM INTO: the floor (used by tern bench).", shouldDisplay: false)

    @Argument(help: "The store to read.")
    var source: String

    @Argument(help: "The copy to write; it must not exist.")
    var destination: String

    @Option(help: "The store's model (unused: the copy is of the file, whatever its model).")
    var model: String?

    func run() throws {
        let started = ContinuousClock.now
        let connection = try Connection(path: source, configuration: .init(mode: .readOnly))
        try connection.execute("VACUUM INTO \(quoteLiteral(destination))")
        let objects = try connection.scalar("SELECT coalesce(sum(Z_MAX), 0) FROM Z_PRIMARYKEY WHERE Z_SUPER = 0")?.int64 ?? 0
        try connection.close()
        try BenchCommand.report(
            BaselineResult(seconds: (ContinuousClock.now - started).seconds, objects: Int(objects), peakResidentMemory: ProcessStats.peakResidentMemory()))
    }
}
