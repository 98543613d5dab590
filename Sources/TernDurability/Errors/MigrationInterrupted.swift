import TernSQLite
import TernModel
import TernStore
import TernMapping
import TernPlanning

extension MigrationInterrupted {
    /// Runs `body`, turning a statement interrupted because a stop was asked for
    /// (`Connection.interrupt(when:)`) into `MigrationInterrupted`.
    package static func whenAsked<Result>(_ shouldStop: () -> Bool, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as SQLiteError where error.code.primary == .SQLITE_INTERRUPT && shouldStop() {
            throw MigrationInterrupted()
        }
    }
}

/// A migration stopped at a batch boundary because it was asked to (SIGINT, SIGTERM, a cancelled
/// task); its checkpoint is committed and a resumed run continues from it.
public struct MigrationInterrupted: Error, CustomStringConvertible {
    /// False when the run stopped before its start checks ended, on a source no resume could
    /// prove untouched since: there is nothing to continue, and running again starts over.
    public var saved = true

    /// An interruption; `saved` false when nothing is left to continue.
    public init(saved: Bool = true) { self.saved = saved }

    public var description: String {
        saved
            ? "interrupted; the work done so far is saved: \(RecoveryWording.resume) to continue"
            : "interrupted in its first seconds, before it had read its source; nothing was kept: run the same migration again"
    }
}
