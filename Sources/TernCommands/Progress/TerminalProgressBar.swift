import Foundation
import Synchronization
import Tern

/// A one-line live progress bar on standard error, redrawn at most ten times a second; a line
/// above it for every pass that finishes.
final class TerminalProgressBar: ProgressRenderer {
    private let lastDrawn = Mutex<ContinuousClock.Instant?>(nil)
    private let width = 24

    func render(_ event: MigrationEvent, _ snapshot: ProgressSnapshot) {
        let now = ContinuousClock.now
        var line = ""
        if case .passFinished(let pass) = event {
            line += "\r\u{1B}[K" + Self.describe(pass, step: snapshot.step, steps: snapshot.steps) + "\n"
        } else if case .batchCommitted = event {
            let due = lastDrawn.withLock { last -> Bool in
                guard last.map({ now - $0 < .milliseconds(100) }) != true else { return false }
                last = now
                return true
            }
            guard due else { return }
        }
        line += "\r\u{1B}[K" + bar(snapshot)
        try? CommandEnvironment.current.errors.write(line)
    }

    func finish() {
        try? CommandEnvironment.current.errors.write("\r\u{1B}[K")
    }

    private func bar(_ snapshot: ProgressSnapshot) -> String {
        let filled = Int((snapshot.fraction * Double(width)).rounded(.down))
        var parts = [
            "[" + String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled) + "]",
            String(format: "%3.0f%%", snapshot.fraction * 100),
            "step \(snapshot.step)/\(snapshot.steps) \(snapshot.stepName)",
        ]
        if let pass = snapshot.pass, let passes = snapshot.passes, passes > 1 { parts.append("pass \(pass)/\(passes)") }
        if let mapping = snapshot.entityMapping { parts.append(mapping) }
        if let stage = snapshot.stage { parts.append(stage.rawValue) }
        if snapshot.rowsPerSecond > 0 { parts.append("\(Formatting.count(Int(snapshot.rowsPerSecond))) rows/s") }
        parts.append(Formatting.clock(snapshot.elapsedSeconds) + " elapsed")
        if let eta = snapshot.etaSeconds { parts.append("ETA " + Formatting.clock(eta)) }
        return parts.joined(separator: "  ")
    }

    static func describe(_ pass: PassReport, step: Int, steps: Int) -> String {
        let which = pass.passes > 1 ? "step \(step)/\(steps), pass \(pass.pass)/\(pass.passes)" : "step \(step)/\(steps)"
        return
            "  \(which) done: \(Formatting.count(pass.objects)) objects in \(String(format: "%.2f", pass.seconds)) s, peak \(Formatting.mebibytes(pass.peakResidentMemory)) — \(pass.mappings.joined(separator: ", "))"
    }
}
