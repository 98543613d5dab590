import Testing
@testable import Tern
@testable import TernDurability
@testable import TernExecution
@testable import TernPlanning
@testable import TernMapping
@testable import TernModel
@testable import TernStore

@Suite("Progress: fractions weighted by rows, never backwards")
struct ProgressTrackerTests {
    let start = ContinuousClock.now

    private func at(_ seconds: Double) -> ContinuousClock.Instant {
        start + .milliseconds(Int(seconds * 1000))
    }

    private func pass(_ objects: Int) -> PassReport {
        PassReport(pass: 1, passes: 1, mappings: ["M"], objects: objects, seconds: 1, peakResidentMemory: 0)
    }

    @Test("a step applied in place weighs half a copied step; batches move the copied step by rows")
    func weighting() {
        let tracker = ProgressTracker()
        tracker.record(
            .started(
                MigrationOutline(
                    steps: [StepIdentity(source: "1", destination: "2"), StepIdentity(source: "2", destination: "3")], inPlace: [true, false],
                    completedSteps: 0, objects: 1000)), at: at(0))
        tracker.record(.stepStarted(step: 1, steps: 2, passes: 1, source: "1", destination: "2"), at: at(0))
        #expect(tracker.record(.stepFinished(step: 1, inPlace: true), at: at(1)).fraction == 1.0 / 3)
        tracker.record(.stepStarted(step: 2, steps: 2, passes: 1, source: "2", destination: "3"), at: at(1))
        let share = ProgressTracker.passShare
        let half = tracker.record(.batchCommitted(mapping: "M", pass: 1, rows: 500, done: 500, total: 1000), at: at(2))
        #expect(abs(half.fraction - (1.0 / 3 + 2.0 / 3 * 0.25 * share)) < 1e-9)
        #expect(half.rows == 500)
        #expect(half.rowsPerSecond == 250)
        #expect(half.entityMapping == "M")
        let created = tracker.record(.batchCommitted(mapping: "M", pass: 1, rows: 500, done: 1000, total: 1000), at: at(3))
        #expect(abs(created.fraction - (1.0 / 3 + 2.0 / 3 * 0.5 * share)) < 1e-9)
        // Rows done this run over time gives the ETA.
        let eta = (1 - created.fraction) * 3 / created.fraction
        #expect(abs((created.etaSeconds ?? 0) - eta) < 1e-6)
        #expect(abs(tracker.record(.passFinished(pass(1000)), at: at(4)).fraction - (1.0 / 3 + 2.0 / 3 * share)) < 1e-9)
        #expect(tracker.record(.stepFinished(step: 2, inPlace: false), at: at(4)).fraction == 1)
    }

    @Test("an estimate that was too high never moves the fraction back; a filter that selects less jumps forward")
    func monotonic() {
        let tracker = ProgressTracker()
        tracker.record(
            .started(
                MigrationOutline(
                    steps: [StepIdentity(source: "1", destination: "2"), StepIdentity(source: "2", destination: "3")], inPlace: [false, false],
                    completedSteps: 0, objects: 1000)))
        tracker.record(.stepStarted(step: 1, steps: 2, passes: 1, source: "1", destination: "2"))
        var last = 0.0
        for done in stride(from: 100, through: 300, by: 100) {
            let snapshot = tracker.record(.batchCommitted(mapping: "Filtered", pass: 1, rows: 100, done: done, total: 300))
            #expect(snapshot.fraction >= last)
            last = snapshot.fraction
        }
        let passDone = tracker.record(.passFinished(pass(300)))
        #expect(passDone.fraction >= last)
        let stepDone = tracker.record(.stepFinished(step: 1, inPlace: false))
        #expect(stepDone.fraction == 0.5)
        let next = tracker.record(.stepStarted(step: 2, steps: 2, passes: 1, source: "2", destination: "3"))
        #expect(next.fraction == 0.5)
        #expect(next.step == 2)
    }

    @Test("a pass whose first entity mapping is small moves by the rows of the whole store, not to half the pass at its first batch")
    func smallFirstMapping() {
        let tracker = ProgressTracker()
        tracker.record(
            .started(MigrationOutline(steps: [StepIdentity(source: "1", destination: "2")], inPlace: [false], completedSteps: 0, objects: 4_001_000)))
        tracker.record(.stepStarted(step: 1, steps: 1, passes: 1, source: "1", destination: "2"))
        let share = ProgressTracker.passShare
        let categories = tracker.record(.batchCommitted(mapping: "Categories", pass: 1, rows: 1000, done: 1000, total: 1000))
        #expect(categories.fraction < 0.001)
        let books = tracker.record(.batchCommitted(mapping: "Books", pass: 1, rows: 1_000_000, done: 1_000_000, total: 1_000_000))
        #expect(abs(books.fraction - share * 1_001_000 / 8_002_000) < 1e-9)
        let pages = tracker.record(.batchCommitted(mapping: "Pages", pass: 1, rows: 3_000_000, done: 3_000_000, total: 3_000_000))
        #expect(abs(pages.fraction - share / 2) < 1e-9)
    }

    @Test("a resumed run starts at the steps it had finished, and its rate counts only its own rows")
    func resumed() {
        let tracker = ProgressTracker()
        let started = tracker.record(
            .started(
                MigrationOutline(
                    steps: [StepIdentity(source: "1", destination: "2"), StepIdentity(source: "2", destination: "3")], inPlace: [false, false],
                    completedSteps: 1, objects: 1000)), at: at(0))
        #expect(started.fraction == 0.5)
        #expect(started.step == 2)
        #expect(started.etaSeconds == nil)
        tracker.record(.stepStarted(step: 2, steps: 2, passes: 1, source: "2", destination: "3"), at: at(0))
        // The first batch after resuming reports the interrupted run's 600 rows too, but only 100 are new.
        let batch = tracker.record(.batchCommitted(mapping: "M", pass: 1, rows: 100, done: 700, total: 1000), at: at(1))
        #expect(batch.rows == 100)
        #expect(batch.rowsPerSecond == 100)
        #expect(abs(batch.fraction - (0.5 + 0.5 * 0.35 * ProgressTracker.passShare)) < 1e-9)
    }

    @Test("a step of two passes over the same objects moves through both: the second pass does not stall where the first ended")
    func twoPasses() {
        let tracker = ProgressTracker()
        let share = ProgressTracker.passShare
        tracker.record(.started(MigrationOutline(steps: [StepIdentity(source: "1", destination: "2")], inPlace: [false], completedSteps: 0, objects: 100)))
        tracker.record(.stepStarted(step: 1, steps: 1, passes: 2, source: "1", destination: "2"))
        tracker.record(.passStarted(pass: 1, passes: 2, mappings: ["A"]))
        tracker.record(.batchCommitted(mapping: "A", pass: 1, rows: 100, done: 100, total: 100))
        let first = tracker.record(.passFinished(PassReport(pass: 1, passes: 2, mappings: ["A"], objects: 100, seconds: 1, peakResidentMemory: 0)))
        #expect(abs(first.fraction - share * 0.5) < 1e-9)
        tracker.record(.passStarted(pass: 2, passes: 2, mappings: ["B"]))
        let half = tracker.record(.batchCommitted(mapping: "B", pass: 2, rows: 50, done: 50, total: 100))
        #expect(abs(half.fraction - share * (1 + 0.25) / 2) < 1e-9)
        let second = tracker.record(.passFinished(PassReport(pass: 2, passes: 2, mappings: ["B"], objects: 100, seconds: 1, peakResidentMemory: 0)))
        #expect(abs(second.fraction - share) < 1e-9)
    }

    @Test("verification and the index build count: a copied step is not at 100% until its store is verified and indexed")
    func verifyingAndIndexingCount() {
        let tracker = ProgressTracker()
        tracker.record(.started(MigrationOutline(steps: [StepIdentity(source: "1", destination: "2")], inPlace: [false], completedSteps: 0, objects: 100)))
        tracker.record(.stepStarted(step: 1, steps: 1, passes: 1, source: "1", destination: "2"))
        let passStarted = tracker.record(.passStarted(pass: 1, passes: 1, mappings: ["M"]))
        #expect(passStarted.pass == 1 && passStarted.passes == 1)
        tracker.record(.batchCommitted(mapping: "M", pass: 1, rows: 100, done: 100, total: 100))
        let passed = tracker.record(.passFinished(pass(100)))
        #expect(passed.fraction <= ProgressTracker.passShare + 1e-9 && passed.fraction < 1)
        let verifying = tracker.record(.stepStage(.verifying))
        #expect(verifying.stage == .verifying && abs(verifying.fraction - ProgressTracker.passShare) < 1e-9)
        let indexing = tracker.record(.stepStage(.indexing))
        #expect(indexing.fraction > verifying.fraction && indexing.fraction < 1)
        #expect(tracker.record(.stepFinished(step: 1, inPlace: false)).fraction == 1)
    }
    @Test("stepFinished names the step that finished, not the next one")
    func stepFinishedNamesItsStep() {
        let tracker = ProgressTracker()
        tracker.record(
            .started(
                MigrationOutline(
                    steps: [StepIdentity(source: "1", destination: "2"), StepIdentity(source: "2", destination: "3")], inPlace: [true, false],
                    completedSteps: 0, objects: 1000)), at: at(0))
        tracker.record(.stepStarted(step: 1, steps: 2, passes: 1, source: "1", destination: "2"), at: at(1))
        let first = tracker.record(.stepFinished(step: 1, inPlace: true), at: at(2))
        #expect(first.step == 1)
        #expect(first.stepName == "1 → 2")
        tracker.record(.stepStarted(step: 2, steps: 2, passes: 1, source: "2", destination: "3"), at: at(3))
        let second = tracker.record(.stepFinished(step: 2, inPlace: false), at: at(4))
        #expect(second.step == 2)
        #expect(second.stepName == "2 → 3")
        #expect(second.fraction == 1)
    }
}
