import ArgumentParser
import Foundation
import Tern
import TernSQLite

/// The documented exit statuses of `tern` (the article "Exit codes and guarantees" lists the same).
package enum TernExitCode {
    /// `tern check`: the store was written by an older version of the model.
    package static let migrationNeeded: Int32 = 3
    /// `tern check`: no version of the model wrote the store.
    static let noVersionMatches: Int32 = 4
    /// `tern infer`: the mapping cannot be inferred (the reasons are listed).
    static let cannotInfer: Int32 = 5
    /// `tern migrate`: migrated objects break the destination model's rules (they are listed).
    static let validationFailed: Int32 = 6
    /// `tern migrate`: the migrated store does not match its source as the mapping says.
    static let verificationFailed: Int32 = 7
    /// `tern migrate`: another tern is migrating the same store now, or (in place) another
    /// process has the store open.
    static let inUse: Int32 = 8
    /// `tern migrate`: the source changed while it was being migrated; nothing was replaced.
    static let sourceChanged: Int32 = 9
    /// `tern fleet run` and `tern fleet status`: a store failed in a way retrying cannot help (bad
    /// input, validation, verification; or the manifest no longer matches the files), and no
    /// store is left for a retry. For `podFailurePolicy: FailIndex` and AWS Batch's
    /// `evaluateOnExit: EXIT`.
    package static let fleetPermanentFailure: Int32 = 12
    /// An output file already exists (EX_CANTCREAT).
    static let cannotCreate: Int32 = 73
    /// `tern migrate`: interrupted, or an earlier run did not finish; `--resume` continues it
    /// (EX_TEMPFAIL). `tern fleet run`: some store is left for a retry of the shard.
    package static let resumable: Int32 = 75
    /// Bad input data: a file that is not a store, a malformed model (sysexits EX_DATAERR).
    static let badInput: Int32 = 65
    /// An input file is missing (EX_NOINPUT).
    static let missingInput: Int32 = 66
    /// Reading or writing failed: I/O error, disk full, permissions (EX_IOERR).
    static let io: Int32 = 74
}

/// Runs a command body, turning Tern's and SQLite's errors into a message and the documented exit
/// code of their kind (`FailureKind`, decided once in the library).
package func reportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error where error is ExitCode || error is ValidationError || error is CleanExit {
        throw error  // the command line's own: ArgumentParser reports them
    } catch {
        // The library's one error type, opened: its underlying error decides the words.
        let error = (error as? TernFailure)?.underlying ?? error
        let kind = FailureKind(of: error)
        var message = "\(error)"
        switch error {
        case is MigrationFailure, is MigrationError, is MigrationInterrupted:
            if error is MigrationInterrupted, CommandEnvironment.current.stop.becauseOutputClosed {
                message = "standard output was closed (whatever read it has exited): " + message
            }
            message += "\nNothing was replaced; the original store is untouched."
        default:
            break
        }
        if kind == .internal { message = "unexpected failure (a bug: please report it with this message): \(message)" }
        printError(message)
        throw ExitCode(TernExitCode.of(kind))
    }
}

extension TernExitCode {
    /// The fleet's contract with job engines, decided here once: a store left for a retry wins
    /// (a retry may still finish it), then a permanent failure, else 0.
    package static func fleet(retryable: Bool, permanent: Bool) -> Int32 {
        retryable ? resumable : (permanent ? fleetPermanentFailure : 0)
    }

    /// The exit code of each kind of failure.
    static func of(_ kind: FailureKind) -> Int32 {
        switch kind {
        case .badInput: badInput
        case .missingInput: missingInput
        case .validation: validationFailed
        case .verification: verificationFailed
        case .noVersionMatches: noVersionMatches
        case .inUse: inUse
        case .sourceChanged: sourceChanged
        case .outputExists: cannotCreate
        case .interrupted: resumable
        case .io: io
        case .internal: 1
        }
    }
}
