import Foundation
import TernModel
import TernStore
import TernMapping
import TernPlanning

/// Why a call into Tern failed, as one type, out of every public entry point that plans or runs
/// (`StoreMigration.plan`, `run`, `runBlocking`, `RunningMigration.report`, `TestStore`): what
/// kind of failure it is (the exit code `tern` gives it), whether running again with
/// `resume: true` may get further, where in the run it happened, and the error Tern's layers
/// threw (`underlying`: a `TernError`, `MigrationError`, `MigrationFailure`,
/// `MigrationInterrupted`, `SQLiteError`…).
///
/// Any error Tern throws can be classified the same way: `TernFailure(error)`.
///
/// ```swift
/// do {
///     let report = try await migration.run(plan, output: "/data/Books-v5.sqlite")
/// } catch where error.isResumable {
///     // Interrupted, or the disk failed: the work so far is kept.
///     _ = try await migration.run(plan, output: "/data/Books-v5.sqlite", resume: true)
/// }
/// ```
public struct TernFailure: Error, CustomStringConvertible, LocalizedError {
    /// Who must act, and the exit code `tern` gives it.
    public let kind: FailureKind
    /// Whether running the same migration again with `resume: true` may get further: it was
    /// interrupted, or the disk or a lock failed rather than the data. The work so far is kept
    /// then; otherwise nothing is left behind, and the original store is untouched either way.
    public let isResumable: Bool
    /// The step that was running (BookStore 3 → BookStore 4), when the failure came during one.
    public let step: StepIdentity?
    /// The pass of `step` that was running, 1-based; nil between passes.
    public let pass: Int?
    /// For a failure of a migration policy (or the manager hook): the policy, its entity mapping
    /// and the key of the source object it was given, when there was one.
    public let policy: String?
    /// The entity mapping the policy ran for.
    public let entityMapping: String?
    /// The source object the policy was given, when the failure came with one.
    public let sourceKey: Int64?
    /// What was thrown.
    public let underlying: any Error

    /// Classifies any error Tern throws; a `TernFailure` stays as it is.
    public init(_ error: any Error, step: StepIdentity? = nil, pass: Int? = nil) {
        if let failure = error as? TernFailure {
            self = failure
            return
        }
        kind = FailureKind(of: error)
        isResumable = FailureKind.isResumable(error)
        self.step = step
        self.pass = pass
        underlying = error
        if case .policyFailed(let policy, let mapping, let key, _) = error as? MigrationError {
            (self.policy, entityMapping, sourceKey) = (policy, mapping, key)
        } else {
            (self.policy, entityMapping, sourceKey) = (nil, nil, nil)
        }
    }

    /// Runs `body`, turning whatever it throws into a `TernFailure`: how a public entry point
    /// keeps to one error type.
    public static func wrapping<Value>(_ body: () throws -> Value) throws -> Value {
        do {
            return try body()
        } catch {
            throw TernFailure(error)
        }
    }

    /// `wrapping(_:)` for an asynchronous body.
    public static func wrapping<Value>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Value) async throws -> Value {
        do {
            return try await body()
        } catch {
            throw TernFailure(error)
        }
    }

    /// The message, as `description` words it: what `localizedDescription` gives.
    public var errorDescription: String? { description }

    /// The message, worded for a program (`RecoveryWording`), with the step and pass.
    public var description: String {
        let place = [step.map { "step \($0)" }, pass.map { "pass \($0)" }].compactMap { $0 }.joined(separator: ", ")
        return (place.isEmpty ? "" : "\(place): ") + "\(underlying)"
    }
}
