import Foundation
import Tern
import Synchronization

/// A live migration's progress: as lines on standard error, each phase as it ends and the lag
/// at most once a second while rounds run; with `--progress json`, as JSON lines on standard
/// output too (`event` "live", `phase`, and the figures), every round included.
package final class LiveProgressLines: Sendable {
    private let lastRound = Mutex<ContinuousClock.Instant?>(nil)
    private let json: Bool

    init(json: Bool) {
        self.json = json
    }

    /// One JSON line of a live event.
    struct Line: Encodable {
        var event = "live"
        var phase: String
        var tables: Int?
        var position: Int64?
        var seconds: Double?
        var entries: Int64?
        var objects: Int?
        var lagEntries: Int64?
        var lagSeconds: Double?
        var processes: [String]?
    }

    func print(_ event: LiveEvent) {
        if json { JSONProgressWriter.write(Self.line(event)) }
        let line: String
        switch event {
        case .capturing(let tables): line = "live: logging changes to \(tables) tables"
        case .mirrored(let seconds, let position): line = String(format: "live: copied the store as of change %lld in %.2f s", position, seconds)
        case .copied(let seconds): line = String(format: "live: the copy is migrated and verified (%.2f s)", seconds)
        case .round(let entries, let objects, let behind, let seconds):
            let now = ContinuousClock.now
            let due = lastRound.withLock { last in
                guard last.map({ now - $0 >= .seconds(1) }) ?? true else { return false }
                last = now
                return true
            }
            guard due else { return }
            line = String(format: "live: caught up %lld changes (%d objects); %lld behind (%.2f s)", entries, objects, behind, seconds)
        case .verified(let seconds):
            line = String(format: "live: every object verified against the store as of one instant, while it was written (%.2f s)", seconds)
        case .waitingForClose(let processes):
            line = "live: caught up; waiting for \(processes.joined(separator: ", ")) to close the store (the app must reopen it for the new model)"
        case .cutOver(let seconds, let entries):
            line = String(format: "live: cut over in %.0f ms (the last %lld changes applied under the lock)", seconds * 1000, entries)
        }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    static func line(_ event: LiveEvent) -> Line {
        switch event {
        case .capturing(let tables): Line(phase: "capturing", tables: tables)
        case .mirrored(let seconds, let position): Line(phase: "mirrored", position: position, seconds: seconds)
        case .copied(let seconds): Line(phase: "copied", seconds: seconds)
        case .round(let entries, let objects, let behind, let seconds):
            Line(phase: "round", entries: entries, objects: objects, lagEntries: behind, lagSeconds: seconds)
        case .verified(let seconds): Line(phase: "verified", seconds: seconds)
        case .waitingForClose(let processes): Line(phase: "waitingForClose", processes: processes)
        case .cutOver(let seconds, let entries): Line(phase: "cutOver", seconds: seconds, entries: entries)
        }
    }

    /// The last JSON line of a live run that finished; `tern bench live` reads it back.
    package struct Finished: Codable {
        package var event = "liveFinished"
        package var rounds: Int
        package var entries: Int64
        package var objects: Int
        package var verificationSeconds: Double
        package var cutOverSeconds: Double
        package var cutOverEntries: Int64
        /// The cut-over's parts (`CutOverParts`), in seconds.
        package var cutOverLockSeconds: Double
        package var cutOverRoundSeconds: Double
        package var cutOverVerificationSeconds: Double
        package var cutOverFinishSeconds: Double
        package var backup: String
        package var seconds: Double

        init(_ report: LiveReport) {
            rounds = report.rounds
            entries = report.entries
            objects = report.objects
            verificationSeconds = report.verification.seconds
            cutOverSeconds = report.cutOver.seconds
            cutOverEntries = report.cutOverEntries
            cutOverLockSeconds = report.cutOverParts.lock.seconds
            cutOverRoundSeconds = report.cutOverParts.round.seconds
            cutOverVerificationSeconds = report.cutOverParts.verification.seconds
            cutOverFinishSeconds = report.cutOverParts.finish.seconds
            backup = report.backup
            seconds = report.duration.seconds
        }
    }

    static func summary(_ report: LiveReport) -> String {
        String(
            format:
                "Migrated live: %lld changes caught up in %d rounds (%d objects written again); Tern's part of the downtime %.0f ms; the original is kept as %@ (%.2f s in all)",
            report.entries, report.rounds, report.objects, report.cutOver.seconds * 1000, report.backup, report.duration.seconds)
    }
}
