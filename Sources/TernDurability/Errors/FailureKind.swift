import Foundation
import TernModel
import TernStore
import TernMapping
import TernLoop
import TernSQLite
import TernPlanning

/// What kind of failure an error is, decided here once for every error Tern throws: the exit
/// code `tern` gives it. Whether running again with `--resume` can get further is decided beside
/// it (`isResumable`), in the same file, since one kind holds both cases (a full disk and a
/// permission are both I/O).
public enum FailureKind: Sendable, Equatable {
    /// The input is wrong (a file, a model, a mapping, a store's content): fix it and run again.
    case badInput
    /// An input file does not exist.
    case missingInput
    /// Migrated objects break the destination model's rules — a SQLite constraint included.
    case validation
    /// The result does not match its source as the mapping says.
    case verification
    /// No version of the model wrote the store.
    case noVersionMatches
    /// Another tern, or an app, has the store.
    case inUse
    /// The source changed while it was migrated.
    case sourceChanged
    /// An output is in the way.
    case outputExists
    /// A stop was asked for, or an unfinished run was found.
    case interrupted
    /// Reading or writing failed: I/O, permissions, a full disk, a busy database.
    case io
    /// Anything else: a bug.
    case `internal`

    /// The kind of `error`; an error Tern does not recognise is `.internal`.
    public init(of error: any Error) {
        switch error {
        case let failure as TernFailure: self = failure.kind
        case let error as TernError:
            switch error.kind {
            case .badInput: self = .badInput
            case .missingInput: self = .missingInput
            case .io: self = .io
            }
        case let error as SQLiteError:
            switch error.code.primary {
            // Two objects with one key is Tern's own fault; the rest are the data's (a uniqueness
            // the model asks for, built in the step's last transaction).
            case .SQLITE_CONSTRAINT_PRIMARYKEY: self = .internal
            case .SQLITE_CONSTRAINT: self = .validation
            case .SQLITE_CORRUPT, .SQLITE_NOTADB, .SQLITE_MISMATCH, .SQLITE_TOOBIG: self = .badInput
            case .SQLITE_INTERRUPT: self = .interrupted
            default: self = .io
            }
        case let failure as MigrationFailure:
            switch failure {
            case .validation: self = .validation
            case .verification: self = .verification
            }
        case let error as MigrationError:
            switch error {
            case .noVersionMatches: self = .noVersionMatches
            case .destinationExists, .finishedEarlier, .deliveryBlocked: self = .outputExists
            case .io, .diskFull: self = .io
            case .stoppedResumably(let cause, _): self = FailureKind(of: cause)
            case .unfinished, .liveUnfinished: self = .interrupted
            case .resumeMismatch, .sourceAnomalies, .dataLoss, .policyFailed: self = .badInput
            case .inUse, .openElsewhere, .liveBehind: self = .inUse
            case .changedDuringMigration: self = .sourceChanged
            }
        case is MigrationInterrupted: self = .interrupted
        case is UVError, is CocoaError, is POSIXError: self = .io
        default: self = .internal
        }
    }

    /// Whether running again with `--resume` may get further: an interruption, or a failure of
    /// the disk, the database's locks or the way out rather than of the data.
    public static func isResumable(_ error: any Error) -> Bool {
        switch error {
        case is MigrationInterrupted: return true
        case let failure as TernFailure: return failure.isResumable
        case let error as SQLiteError:
            return [.SQLITE_FULL, .SQLITE_IOERR, .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_INTERRUPT, .SQLITE_CANTOPEN].contains(error.code.primary)
        case let error as MigrationError:
            switch error {
            // An unfinished run found: its message offers `resume`.
            case .io, .openElsewhere(_, _, true), .deliveryBlocked, .stoppedResumably, .unfinished, .liveUnfinished, .liveBehind: return true
            default: return false
            }
        case let error as TernError: return error.kind == .io
        default: return false
        }
    }
}
