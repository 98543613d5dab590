import Foundation
import Synchronization
import Tern
import TernLoop

/// Samples the process's resident memory every 50 ms on a thread of its own while a migration
/// runs, beside the objects its progress reports and where each pass and stage begins or ends,
/// for `tern migrate --report FILE.svg`. Sampling from outside the engine sees the set-based SQL
/// passes too, which report progress only per batch.
final class MemorySampler: Sendable {
    private struct State {
        var samples: [MemoryChart.Sample] = []
        var marks: [MemoryChart.Mark] = []
        var objects = 0
        var step = 1
        var stopped = false
    }

    private let started = ContinuousClock.now
    private let state = Mutex(State())

    init() {
        let thread = try? OSThread(stackSize: 1 << 20) { [self] in
            while true {
                let resident = (try? ProcessStats.residentMemory()) ?? 0
                let done = state.withLock { state -> Bool in
                    state.samples.append(.init(seconds: elapsed, residentBytes: resident, objects: state.objects))
                    return state.stopped
                }
                if done { return }
                Latch.pause(seconds: 0.05)
            }
        }
        // The sampler stops itself when `chart` is drawn; a thread that could not start samples nothing.
        thread?.detach()
    }

    private var elapsed: Double { (ContinuousClock.now - started).seconds }

    /// Counts objects written and marks where passes end and stages begin.
    func observe(_ event: MigrationEvent) {
        state.withLock { state in
            switch event {
            case .stepStarted(let number, _, _, _, _): state.step = number
            case .batchCommitted(_, _, let rows, _, _): state.objects += rows
            case .passFinished(let pass):
                state.marks.append(.init(seconds: elapsed, label: "step \(state.step) pass \(pass.pass)"))
            case .stepStage(let stage): state.marks.append(.init(seconds: elapsed, label: "\(stage)"))
            default: break
            }
        }
    }

    /// Stops sampling and draws the chart.
    func chart(title: String) -> String {
        let (taken, marked) = state.withLock { state -> ([MemoryChart.Sample], [MemoryChart.Mark]) in
            state.stopped = true
            state.samples.append(.init(seconds: elapsed, residentBytes: (try? ProcessStats.residentMemory()) ?? 0, objects: state.objects))
            return (state.samples, state.marks)
        }
        return MemoryChart.svg(title: title, samples: taken, marks: marked)
    }
}
