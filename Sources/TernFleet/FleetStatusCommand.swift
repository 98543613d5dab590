import ArgumentParser
import Foundation
import Tern
import TernCommands
import TernLoop

struct FleetStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show where a fleet stands: stores per outcome, failures with reasons, the slowest stores, throughput.",
        discussion:
            "Reads the manifest, the results folder and the leases held now; safe while tasks run. Exit status: 0 every store is at the target; 75 stores are pending, running or left for a retry; 12 the rest failed permanently."
    )

    @Option(help: ArgumentHelp("The fleet's manifest.", valueName: "file.jsonl"))
    var manifest: String

    @Option(help: ArgumentHelp("The results folder (default: beside the manifest, NAME.results).", valueName: "folder"))
    var results: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Flag(help: "Wait until no store is pending, running or left for a retry, then show the status.")
    var wait = false

    @Option(help: "Seconds between looks with --wait.")
    var interval = 5.0

    @Option(help: "With --wait, give up after this many seconds (a store the engine gave up on stays pending for ever).")
    var timeout: Double?

    func validate() throws {
        guard (0.1...3600).contains(interval) else { throw ValidationError("--interval must be from 0.1 to 3600 seconds") }
        guard timeout.map({ $0 > 0 && $0.isFinite }) ?? true else { throw ValidationError("--timeout must be a positive number of seconds") }
    }

    func run() throws {
        let report = try reportingFleetErrors { () -> FleetStatusReport in
            let manifest = try FleetManifest.read(manifest)
            let folder = ResultsFolder(reading: results ?? manifest.defaultResultsFolder)
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) {
                try? CommandEnvironment.current.errors.write("tern: note: no results folder at \(folder.path) yet: no task has recorded an outcome\n")
            } else if !isDirectory.boolValue {
                throw TernError(.badInput, "is not a folder: name the fleet's results folder", path: folder.path)
            }
            var report = FleetStatusReport(manifest: manifest, results: folder)
            let deadline = Date().addingTimeInterval(timeout ?? .infinity)
            while wait, !report.finished, !CommandEnvironment.current.stop.isRequested(), Date() < deadline {
                Latch.pause(seconds: interval)
                report = FleetStatusReport(manifest: manifest, results: folder)
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                print(report.text)
            }
            return report
        }
        if report.exitCode != 0 { throw ExitCode(report.exitCode) }
    }
}
