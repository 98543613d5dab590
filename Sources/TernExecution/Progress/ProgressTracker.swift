import Synchronization
import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability

/// Where a running migration stands, for people and log pipelines.
public struct ProgressSnapshot: Sendable, Equatable, Codable {
    /// From 0 to 1, never going backwards; weighted by rows (see `ProgressTracker`).
    public var fraction: Double
    /// The step in progress (or, on `stepFinished`, the one that finished), 1-based.
    public var step: Int
    /// How many steps the run has, including any an interrupted run finished.
    public var steps: Int
    /// "V1 → V2".
    public var stepName: String
    /// The pass in progress, 1-based; nil before the step's first batch or pass report.
    public var pass: Int?
    /// How many passes the current step has; nil before the first step starts.
    public var passes: Int?
    /// The entity mapping whose batches are committing, if any.
    public var entityMapping: String?
    /// What the step does after its passes (verifying, indexing), while it does it.
    public var stage: StepStage?
    /// Source objects committed by this run (not counting an interrupted run's).
    public var rows: Int
    /// `rows` over `elapsedSeconds`; 0 until time has passed.
    public var rowsPerSecond: Double
    /// Seconds since the run started (or resumed), by the monotonic clock.
    public var elapsedSeconds: Double
    /// Nil until there is a rate to go by.
    public var etaSeconds: Double?
}

/// Turns `MigrationEvent`s into `ProgressSnapshot`s.
///
/// The work of a run is counted in rows. A step that copies objects counts each of its passes
/// as an equal part, and within a pass each source object twice (once when its destination
/// object is created, once when the pass recreates relationships and validates); its passes
/// make `passShare` of the step: verification and
/// the index build after them take the rest (`verifyingShare`, then the index build), so the
/// fraction reaches 1 only when the last step has verified and indexed its store. A step applied
/// as schema changes counts each object once, as it copies pages rather than rows. Steps not
/// started yet are estimated from the store's object count; the fraction never goes backwards
/// when an estimate turns out high.
public final class ProgressTracker: Sendable {
    private let state: Mutex<State>
    /// A copying step's passes, as a share of the step: `tern bench` measures verification at
    /// about a tenth of a step and the indexes left after it at about a third.
    static let passShare = 0.6
    /// Verification's share of a copying step; the index build has what is left.
    static let verifyingShare = 0.1

    private struct State {
        var started = ContinuousClock.now
        var outline = MigrationOutline(steps: [], inPlace: [], completedSteps: 0, objects: 0)
        var step = 0
        var pass: Int?
        var passes: Int?
        var mapping: String?
        var stage: StepStage?
        /// Rows done in the current pass, per entity mapping, and their totals.
        var done: [String: Int] = [:]
        var totals: [String: Int] = [:]
        /// Passes of the current step that finished.
        var finishedPasses = 0
        var rowsThisRun = 0
        var fraction = 0.0
        var fractionAtStart = 0.0
    }

    /// A tracker with nothing recorded; the `started` event sets the run's shape and start time.
    public init() {
        state = Mutex(State())
    }

    /// Records an event and returns where the run stands now.
    @discardableResult
    public func record(_ event: MigrationEvent, at now: ContinuousClock.Instant = .now) -> ProgressSnapshot {
        state.withLock { state in
            if case .stepStage = event {} else { state.stage = nil }
            switch event {
            case .started(let outline):
                state = State(started: now, outline: outline, step: outline.completedSteps)
                state.fraction = Self.fraction(of: state)
                state.fractionAtStart = state.fraction
            case .stepStarted(let step, _, let passes, _, _):
                state.step = step - 1
                state.done = [:]
                state.totals = [:]
                state.finishedPasses = 0
                state.pass = nil
                state.passes = passes
                state.mapping = nil
            case .passStarted(let pass, let passes, _):
                state.pass = pass
                state.passes = passes
                state.mapping = nil
            case .batchCommitted(let mapping, let pass, let rows, let done, let total):
                state.mapping = mapping
                state.pass = pass
                state.done[mapping] = done
                state.totals[mapping] = total
                state.rowsThisRun += rows
            case .entityMappingFinished(let mapping, let pass, _):
                state.mapping = mapping
                state.pass = pass
            case .passFinished(let report):
                state.pass = report.pass
                state.passes = report.passes
                state.mapping = nil
                state.finishedPasses = report.pass
                state.done = [:]
                state.totals = [:]
            case .stepStage(let stage):
                state.stage = stage
                state.mapping = nil
            case .stepFinished(let step, _):
                state.step = step
                state.done = [:]
                state.totals = [:]
                state.finishedPasses = 0
            }
            state.fraction = max(state.fraction, Self.fraction(of: state))
            var snapshot = Self.snapshot(of: state, at: now)
            if case .stepFinished(let step, _) = event, step >= 1, step <= state.outline.steps.count {
                // The step that finished, not the one that comes next.
                snapshot.step = step
                snapshot.stepName = state.outline.steps[step - 1].description
            }
            return snapshot
        }
    }

    /// Steps before `state.step` done, the current one by its rows.
    private static func fraction(of state: State) -> Double {
        let outline = state.outline
        guard !outline.steps.isEmpty else { return 0 }
        let objects = max(outline.objects, 1)
        let weights = outline.inPlace.map { Double($0 ? objects : 2 * objects) }
        let total = weights.reduce(0, +)
        let finished = weights.prefix(min(state.step, weights.count)).reduce(0, +)
        guard state.step < weights.count else { return 1 }
        var current = 0.0
        if !outline.inPlace[state.step] {
            switch state.stage {
            case .verifying: current = passShare
            case .indexing: current = passShare + verifyingShare
            case nil:
                // Each pass an equal part; within one, its rows counted twice (created, then
                // related and validated, which its end marks). Entity mappings not begun yet
                // are not in `totals`: the pass is taken to read at least its share of the
                // store's objects, so a small first mapping does not pass for half the pass.
                let passes = Double(max(state.passes ?? 1, 1))
                let rows = max(Double(state.totals.values.reduce(0, +)), Double(objects) / passes)
                let inPass = rows > 0 ? min(1, Double(state.done.values.reduce(0, +)) / (2 * rows)) : 0
                current = passShare * min(1, (Double(state.finishedPasses) + inPass) / passes)
            }
        }
        return min(1, (finished + weights[state.step] * current) / total)
    }

    private static func snapshot(of state: State, at now: ContinuousClock.Instant) -> ProgressSnapshot {
        let elapsed = (now - state.started).seconds
        let gained = state.fraction - state.fractionAtStart
        let step = min(state.step, max(state.outline.steps.count - 1, 0))
        return ProgressSnapshot(
            fraction: state.fraction,
            step: step + 1,
            steps: state.outline.steps.count,
            stepName: state.outline.steps.isEmpty ? "" : state.outline.steps[step].description,
            pass: state.pass,
            passes: state.passes,
            entityMapping: state.mapping,
            stage: state.stage,
            rows: state.rowsThisRun,
            rowsPerSecond: elapsed > 0 ? Double(state.rowsThisRun) / elapsed : 0,
            elapsedSeconds: elapsed,
            etaSeconds: gained > 0.001 && elapsed > 0 ? (1 - state.fraction) * elapsed / gained : nil
        )
    }
}
