import Foundation
import Logging
import Synchronization
import Tern
import TernCommands
import TernLoop

/// Runs one shard of a fleet: every store of the shard, `parallel` at once, each under its lease,
/// each outcome recorded; one store's failure never stops the others.
struct FleetRunner: Sendable {
    struct Settings: Sendable {
        var parallel = 1
        /// Seconds a lease lasts unless renewed.
        var leaseLength = 60.0
        /// Seconds to wait for a store whose lease another live task holds before giving up on it
        /// (retryably).
        var leaseWait = 300.0
        var keepBackups = true
        var batchSize = 10_000
        var workers = 1
        var memoryBudget = MigrationOptions.defaultMemoryBudget
    }

    /// What the shard's run came to: the exit status follows from it.
    struct Summary: Sendable {
        var counts: [StoreOutcome.Status: Int] = [:]
        /// Stores left for a retry: interrupted, their lease held elsewhere, or not reached.
        var retryable = 0
        var permanent = 0

        var exitCode: Int32 { TernExitCode.fleet(retryable: retryable > 0, permanent: permanent > 0) }
    }

    let manifest: FleetManifest
    let model: VersionedModel
    let appleHashes: [String: [String: String]]
    let shard: Shard
    let results: ResultsFolder
    let identity: LeaseIdentity
    let settings: Settings
    let registry: PolicyRegistry
    let shouldStop: @Sendable () -> Bool
    let logger: Logger

    /// Runs the shard to its end, or until a stop is asked for.
    func run() throws -> Summary {
        let stores = shard.stores(of: manifest)
        let queue = Mutex(StoreQueue(stores: stores))
        let summary = Mutex(Summary())
        let keeper = try LeaseKeeper(interval: settings.leaseLength / 3)
        onThreads(min(settings.parallel, stores.count)) { _ in
            while !shouldStop() {
                guard let next = queue.withLock({ $0.next(now: Date().timeIntervalSince1970) }) else { return }
                guard case .store(let entry, let heldSince) = next else {
                    if case .wait(let seconds) = next { Latch.pause(seconds: min(seconds, 1)) }
                    continue
                }
                switch attempt(entry, heldSince: heldSince, keeper: keeper) {
                case .done(let outcome):
                    summary.withLock {
                        $0.counts[outcome.status, default: 0] += 1
                        if outcome.status == .failed { $0.permanent += 1 }
                        if outcome.status == .interrupted { $0.retryable += 1 }
                    }
                    report(outcome)
                case .held(let holder, let since):
                    if Date().timeIntervalSince1970 - since >= settings.leaseWait {
                        summary.withLock { $0.retryable += 1 }
                        print(
                            "held        \(entry.path): its lease is held by \(holder.summary) until \(Date(timeIntervalSince1970: holder.expires).formatted(.iso8601)); left for a retry"
                        )
                    } else {
                        queue.withLock { $0.later(entry, heldSince: since, now: Date().timeIntervalSince1970) }
                    }
                }
            }
        }
        keeper.stop()
        var final = summary.withLock { $0 }
        let untouched = queue.withLock { $0.remaining }
        final.retryable += untouched
        if untouched > 0 { print("stopped: \(untouched) stores of this shard were not reached; a retry of the shard continues") }
        return final
    }

    private enum Attempt {
        case done(StoreOutcome)
        case held(LeaseHolder, since: Double)
    }

    private func attempt(_ entry: FleetManifest.Entry, heldSince: Double?, keeper: LeaseKeeper) -> Attempt {
        let path = manifest.storePath(entry)
        // A hand-made manifest may name what `fleet plan` leaves out: never migrate a backup.
        if let reason = StoreList.ternsOwnFile(path) {
            return .done(withoutLease(entry, FleetError(class: .permanent, kind: "badInput", message: "\(path): not a store but \(reason)")))
        }
        let lease: StoreLease
        do {
            switch try StoreLease.acquire(store: path, identity: identity, length: settings.leaseLength) {
            case .acquired(let acquired): lease = acquired
            case .held(let holder): return .held(holder, since: heldSince ?? Date().timeIntervalSince1970)
            }
        } catch {
            let failure = FleetError(error)
            return .done(failure.isPermanent ? withoutLease(entry, failure) : unrecorded(entry, failure))
        }
        keeper.hold(lease)
        defer { keeper.drop(lease); lease.release() }
        var outcome = StoreOutcome(
            id: entry.id, path: entry.path, status: .started, from: nil, to: manifest.header.target,
            attempt: results.nextAttempt(of: entry.id),
            shard: shard.description, task: identity.task, host: identity.host, started: Date().timeIntervalSince1970)
        do { try results.append(outcome) } catch {
            return .done(unrecorded(entry, FleetError(error)))
        }
        // Messages are made in the fleet's words: the next attempt resumes, not a flag.
        RecoveryWording.$current.withValue(.fleet) {
            do {
                try StorePermissions.restricting(for: path) { try migrate(entry, at: path, lease: lease, into: &outcome) }
            } catch {
                outcome.error =
                    lease.isLost
                    ? FleetError(
                        class: .retryable, kind: "leaseLost",
                        message: "the store's lease was lost (taken over after it expired, or removed): stopped so two tasks never migrate it at once")
                    : FleetError(error)
                outcome.status = outcome.error!.isPermanent ? .failed : .interrupted
            }
        }
        outcome.finished = Date().timeIntervalSince1970
        outcome.seconds = outcome.finished! - outcome.started
        // A lost lease is someone else's now, and so is the results file: what this attempt did
        // is left for the next one to find and record (a store at the target is recorded then).
        guard !lease.isLost else {
            return .done(
                unrecorded(
                    entry,
                    FleetError(
                        class: .retryable, kind: "leaseLost",
                        message: "the store's lease was lost before its outcome was recorded: the next attempt records it")))
        }
        do { try results.append(outcome) } catch {
            return .done(unrecorded(entry, FleetError(error)))
        }
        return .done(outcome)
    }

    /// An attempt that could not record its outcome: left for a retry when one may help.
    private func unrecorded(_ entry: FleetManifest.Entry, _ failure: FleetError) -> StoreOutcome {
        StoreOutcome(
            id: entry.id, path: entry.path, status: failure.isPermanent ? .failed : .interrupted, attempt: 0, error: failure,
            shard: shard.description, task: identity.task, host: identity.host, started: Date().timeIntervalSince1970)
    }

    /// A permanent failure before any lease could be taken — the store is tern's own file, or its
    /// folder is gone or not writable, for every task alike, so no task holds its lease either —
    /// recorded all the same, so `fleet status` shows it with its reason.
    private func withoutLease(_ entry: FleetManifest.Entry, _ failure: FleetError) -> StoreOutcome {
        var outcome = unrecorded(entry, failure)
        outcome.attempt = results.nextAttempt(of: entry.id)
        outcome.finished = outcome.started
        try? results.append(outcome)
        return outcome
    }

    /// Migrates one store in place with the default process — or finds it at the target, or
    /// resumes what a killed attempt began.
    private func migrate(_ entry: FleetManifest.Entry, at path: String, lease: StoreLease, into outcome: inout StoreOutcome) throws {
        var options = MigrationOptions(batchSize: settings.batchSize, workers: settings.workers, registry: registry)
        options.memoryBudget = settings.memoryBudget
        options.route = manifest.header.stepByStep ? .stepByStep : .coreData
        let stop = shouldStop
        options.shouldStop = { stop() || lease.isLost }
        let migration = StoreMigration(store: path, model: model, options: options, logger: logger)
        let plan = try migration.plan(
            to: manifest.header.target, mappingFiles: manifest.header.mappingOverrides.map(manifest.resolve), appleHashes: appleHashes)
        outcome.from = plan.storeVersion
        guard !plan.steps.isEmpty else {
            _ = try migration.runBlocking(plan)  // finishes the clean-up of an attempt killed right after its swap
            outcome.status = .skipped
            if entry.state != .current, !results.outcomes(of: entry.id).contains(where: { $0.status == .migrated }) {
                // Not at the target when planned, never recorded as migrated: an attempt was
                // stopped between putting the migrated store in place and recording it.
                // Recorded now, once.
                outcome.status = .migrated
                outcome.from = entry.version
                outcome.objects = try FleetPlanner.objects(inStoreAt: path)
                outcome.note = "found at the target: an earlier attempt put it in place and was stopped before recording it"
            }
            return
        }
        // An earlier attempt's record means its work is there to resume.
        let report = try migration.runBlocking(plan, resume: try MigrationRun.load(at: MigrationRun.path(for: path)) != nil)
        // The objects of the migrated store: what its last step created.
        outcome.objects = report.steps.last?.mappings.reduce(0) { $0 + $1.created } ?? 0
        outcome.peakMemory = report.steps.flatMap(\.passes).map(\.peakResidentMemory).max()
        if !settings.keepBackups, let backup = report.backup {
            StoreMigration.remove(backup)
            try? FileManager.default.removeItem(atPath: ExternalBinaryData.folder(forStore: backup))
        }
        outcome.status = .migrated
    }

    /// One line per store: what happened, and why when it failed.
    private func report(_ outcome: StoreOutcome) {
        var line = outcome.status.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0) + outcome.path
        switch outcome.status {
        case .migrated:
            line +=
                ": \(outcome.from ?? "?") → \(outcome.to ?? "?"), \(Formatting.count(outcome.objects)) objects, " + String(format: "%.2f s", outcome.seconds)
        case .skipped:
            line += ": at \(outcome.from ?? "the target") already"
        case .failed, .interrupted, .started:
            line += outcome.error.map { ": \($0.class), \($0.kind): \($0.message)" } ?? ""
        }
        print(line)
    }
}

/// The stores a shard has yet to try, and those whose lease was held, tried again every second.
struct StoreQueue {
    enum Next {
        /// Try this store; `heldSince` is set for one whose lease was held before.
        case store(FleetManifest.Entry, heldSince: Double?)
        /// Only held stores are left: try again after this many seconds.
        case wait(Double)
    }

    private var waiting: [FleetManifest.Entry]
    private var position = 0
    private var held: [(entry: FleetManifest.Entry, since: Double, retryAt: Double)] = []

    init(stores: [FleetManifest.Entry]) { waiting = stores }

    /// What to do next; nil when no store is left.
    mutating func next(now: Double) -> Next? {
        if position < waiting.count {
            position += 1
            return .store(waiting[position - 1], heldSince: nil)
        }
        guard let first = held.first else { return nil }
        guard first.retryAt <= now else { return .wait(first.retryAt - now) }
        held.removeFirst()
        return .store(first.entry, heldSince: first.since)
    }

    mutating func later(_ entry: FleetManifest.Entry, heldSince: Double, now: Double) {
        held.append((entry, heldSince, now + 1))
    }

    /// Stores never tried, or held and not tried again.
    var remaining: Int { waiting.count - position + held.count }
}
