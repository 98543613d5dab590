import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability
/// What a running migration reports, as it happens, through `MigrationOptions.progress`.
///
/// `ProgressTracker` turns these into fractions, rates and ETAs; the command line renders those.
/// Each reads as a line of a log (`description`) and encodes as JSON (`Codable`), for a program
/// that keeps or forwards them.
public enum MigrationEvent: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The run begins (or resumes): what it will do, for weighting progress.
    case started(MigrationOutline)
    /// A step (one version to the next) begins; it runs in `passes` passes.
    case stepStarted(step: Int, steps: Int, passes: Int, source: String, destination: String)
    /// A pass of the current step begins: its entity mappings, in run order. Passes count from 1.
    case passStarted(pass: Int, passes: Int, mappings: [String])
    /// A batch of `rows` source objects of an entity mapping committed: `done` of the mapping's
    /// `total` so far (counting what an interrupted run committed before). Passes count from 1,
    /// as in `PassReport`.
    case batchCommitted(mapping: String, pass: Int, rows: Int, done: Int, total: Int)
    /// An entity mapping created all its objects.
    case entityMappingFinished(mapping: String, pass: Int, objects: Int)
    /// A pass finished all three stages (or a step was applied in place as schema changes).
    case passFinished(PassReport)
    /// A step's passes are done and it checks its result against the source, then builds its
    /// indexes: long stretches without batches, so they are announced.
    case stepStage(StepStage)
    /// A step finished; `inPlace` when it ran as schema changes.
    case stepFinished(step: Int, inPlace: Bool)

    /// The event as a line of a log: "step 1 of 2: Bench 1 → Bench 2, 1 pass".
    public var description: String {
        switch self {
        case .started(let outline):
            let steps = outline.steps.map(\.description).joined(separator: ", ")
            return "started: \(outline.steps.count) \(Self.plural("step", outline.steps.count)) (\(steps)), \(outline.objects) objects"
                + (outline.completedSteps > 0 ? ", \(outline.completedSteps) finished by an earlier run" : "")
        case .stepStarted(let step, let steps, let passes, let source, let destination):
            return "step \(step) of \(steps): \(source) → \(destination), \(passes) \(Self.plural("pass", passes))"
        case .passStarted(let pass, let passes, let mappings):
            return "pass \(pass) of \(passes): \(mappings.joined(separator: ", "))"
        case .batchCommitted(let mapping, let pass, let rows, let done, let total):
            return "pass \(pass), \(mapping): \(rows) objects committed, \(done) of \(total)"
        case .entityMappingFinished(let mapping, let pass, let objects):
            return "pass \(pass), \(mapping): finished, \(objects) objects created"
        case .passFinished(let report):
            return "pass \(report.pass) of \(report.passes) finished: \(report.objects) objects in \(String(format: "%.2f", report.seconds)) s, "
                + "peak memory \(report.peakResidentMemory >> 20) MiB"
        case .stepStage(let stage):
            return stage == .verifying ? "verifying the step's result against its source" : "building indexes"
        case .stepFinished(let step, let inPlace):
            return "step \(step) finished" + (inPlace ? " (applied in place)" : "")
        }
    }

    private static func plural(_ word: String, _ count: Int) -> String {
        count == 1 ? word : (word.hasSuffix("s") ? word + "es" : word + "s")
    }
}

/// What a step does after its passes.
public enum StepStage: String, Sendable, Equatable, Codable {
    case verifying, indexing
}

/// The shape of a run, known before it starts.
public struct MigrationOutline: Sendable, Equatable, Codable {
    /// Each step, in order.
    public var steps: [StepIdentity]
    /// Whether each step runs as schema changes without reading rows.
    public var inPlace: [Bool]
    /// Steps an earlier, interrupted run finished.
    public var completedSteps: Int
    /// Objects in the store being migrated: what every step carries, about.
    public var objects: Int

    /// An outline; `inPlace` has one entry per element of `steps`.
    public init(steps: [StepIdentity], inPlace: [Bool], completedSteps: Int, objects: Int) {
        self.steps = steps
        self.inPlace = inPlace
        self.completedSteps = completedSteps
        self.objects = objects
    }
}

/// What one pass did: for the summary table, and to watch memory per pass.
public struct PassReport: Sendable, Equatable, Codable {
    /// 1-based within its step; `passes` is how many the step has.
    public var pass: Int
    /// How many passes the pass's step has.
    public var passes: Int
    /// Its entity mappings, by name ("schema changes" for a step applied in place).
    public var mappings: [String]
    /// Destination objects it created (for a step applied in place: the objects the store holds).
    public var objects: Int
    /// Wall-clock time the pass took, in seconds.
    public var seconds: Double
    /// The process's peak resident memory during the pass, in bytes.
    public var peakResidentMemory: Int

    /// A pass's report: its place in its step, what it made, its time and memory.
    public init(pass: Int, passes: Int, mappings: [String], objects: Int, seconds: Double, peakResidentMemory: Int) {
        self.pass = pass
        self.passes = passes
        self.mappings = mappings
        self.objects = objects
        self.seconds = seconds
        self.peakResidentMemory = peakResidentMemory
    }

    /// `objects` over `seconds`; 0 when no time was measured.
    public var objectsPerSecond: Double { seconds > 0 ? Double(objects) / seconds : 0 }
}
