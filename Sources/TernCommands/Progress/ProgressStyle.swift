import ArgumentParser
import Foundation
import Tern

/// How `tern migrate` shows progress (`--progress`).
enum ProgressStyle: String, ExpressibleByArgument, CaseIterable {
    /// A live bar on standard error when it is a terminal, else nothing.
    case auto
    /// A live bar on standard error, terminal or not.
    case bar
    /// One JSON object per line on standard output, and the summary as the last line.
    case json
    /// Nothing until the summary.
    case none

    /// Shows the progress of migrations run with `options` this way; returns the renderer to
    /// `finish` when the run ends, or nil for silence.
    func attach(to options: inout MigrationOptions) -> (any ProgressRenderer)? {
        guard let renderer = makeRenderer() else { return nil }
        let tracker = ProgressTracker()
        options.progress = { event in renderer.render(event, tracker.record(event)) }
        return renderer
    }

    /// The renderer for this style, or nil for silence.
    private func makeRenderer() -> (any ProgressRenderer)? {
        switch self {
        case .auto: CommandEnvironment.current.errors.isTerminal ? TerminalProgressBar() : nil
        case .bar: TerminalProgressBar()
        case .json: JSONProgressWriter()
        case .none: nil
        }
    }
}

/// Shows a running migration's events; called on the migrating thread.
protocol ProgressRenderer: Sendable {
    func render(_ event: MigrationEvent, _ snapshot: ProgressSnapshot)
    /// The run ended (finished, failed or interrupted): leave the output tidy.
    func finish()
}
