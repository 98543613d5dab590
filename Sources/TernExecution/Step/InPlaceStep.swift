import Foundation
import TernMapping
import TernModel
import TernSQLite
import TernStore
import TernPlanning
import TernDurability

/// A step planned in place (`MigrationStep.schemaChanges`), run on a copy of the store or on the
/// previous step's store: the schema changes in one transaction, checked against the
/// destination's layout before they commit.
package enum InPlaceStep {
    /// Applies a step planned in place (`statements`, its `StepPlan.inPlace`). The original
    /// store is never altered: its first step works on a copy made with `VACUUM INTO` (which
    /// reads pages, not rows, and takes in rows that live only in a `-wal`); later steps alter the
    /// previous temporary store. Planning rehearsed the changes on the store's schema, so changes
    /// that no longer give the destination's tables mean the store changed since it was planned:
    /// refused, never copied instead (the run decides nothing the plan did not).
    package static func apply(
        _ statements: [String], of step: MigrationStep, from current: String, working file: String, isOriginal: Bool,
        shouldStop: @escaping @Sendable () -> Bool = { false }
    ) throws -> StepReport {
        let started = ContinuousClock.now
        let fileManager = FileManager.default
        // Work on the step's own file: a copy of the original, or the previous temporary store
        // renamed (atomically) to it. Whatever a crash left, the file's schema says where it is.
        if fileManager.fileExists(atPath: file) {
            if try isAtDestination(file, step: step) { return inPlaceReport(statements, since: started) }
            if isOriginal, !(try isAtSource(file, step: step)) { StoreFiles.remove(file) }
        }
        if !fileManager.fileExists(atPath: file) {
            if isOriginal {
                let store = try ReadOnlyStore(path: current)
                defer { withExtendedLifetime(store) {} }  // its private copy, if it made one, lives on
                let reader = try store.connect()
                // The copy is the long part: a stop request interrupts it, and the partial copy goes.
                try reader.interrupt(when: shouldStop)
                do {
                    try MigrationInterrupted.whenAsked(shouldStop) { try reader.execute("VACUUM INTO \(quoteLiteral(file))") }
                } catch {
                    StoreFiles.remove(file)
                    throw error
                }
            } else {
                for suffix in ["-wal", "-shm"] where fileManager.fileExists(atPath: current + suffix) {
                    _ = rename(current + suffix, file + suffix)
                }
                guard rename(current, file) == 0 else {
                    throw MigrationError.io("cannot rename the previous step's store: \(String(cString: strerror(errno)))", path: current)
                }
            }
        }
        let connection = try Connection(path: file, configuration: .init(mode: .readWrite))
        try connection.interrupt(when: shouldStop)
        guard try MigrationInterrupted.whenAsked(shouldStop, { try LightweightInPlace.apply(statements, step: step, to: connection) }) else {
            try connection.close()
            if !isOriginal {
                _ = rename(file, current)  // give the previous step's store its name back
            } else {
                StoreFiles.remove(file)
            }
            throw TernError(
                .badInput,
                "step \(step.identity) was planned in place, but its schema changes no longer give the new version's tables: "
                    + "the store's schema changed since it was planned; plan the migration again", path: current)
        }
        try connection.setJournalMode(.wal)
        try connection.setPragma("user_version", .integer(StepWorkspace.completedMarker))
        // Closing checkpoints too, but ignores a failed fsync there; this one is checked.
        try connection.checkpointWAL()
        try connection.close()
        return inPlaceReport(statements, since: started)
    }

    private static func inPlaceReport(_ statements: [String], since started: ContinuousClock.Instant) -> StepReport {
        var report = StepReport()
        report.appliedInPlace = statements
        report.verified.append("the store's tables and columns equal the destination layout")
        report.duration = ContinuousClock.now - started
        return report
    }

    private static func isAtDestination(_ file: String, step: MigrationStep) throws -> Bool {
        guard let connection = try? Connection(path: file, configuration: .init(mode: .readOnly)),
            let signature = try? LayoutSignature(connection: connection)
        else { return false }
        return signature == LayoutSignature(layout: StoreLayout(model: step.destination))
            && (try? StoreMetadata.read(from: connection, path: file, countingRows: false).versionName) == step.destination.versionName
    }

    private static func isAtSource(_ file: String, step: MigrationStep) throws -> Bool {
        guard let connection = try? Connection(path: file, configuration: .init(mode: .readOnly)),
            let signature = try? LayoutSignature(connection: connection)
        else { return false }
        return signature == LayoutSignature(layout: step.sourceLayout)
    }
}
