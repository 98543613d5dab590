import Foundation
import Tern
import TernLoop

/// Samples the process's resident memory every 50 ms on a thread of its own while a migration
/// runs, beside the objects its progress reports and where each pass and stage begins or ends,
/// for `tern migrate --report FILE.svg`. Sampling from outside the engine sees the set-based SQL
/// passes too, which report progress only per batch.
final class MemorySampler: @unchecked Sendable {
    private let lock = NSLock()
    private let started = ContinuousClock.now
    private var samples: [MemoryChart.Sample] = []
    private var marks: [MemoryChart.Mark] = []
    private var objects = 0
    private var step = 1
    private var stopped = false

    init() {
        let thread = Thread { [self] in
            while true {
                let resident = (try? ProcessStats.residentMemory()) ?? 0
                let done = lock.withLock { () -> Bool in
                    samples.append(.init(seconds: elapsed, residentBytes: resident, objects: objects))
                    return stopped
                }
                if done { return }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        thread.start()
    }

    private var elapsed: Double { (ContinuousClock.now - started).seconds }

    /// Counts objects written and marks where passes end and stages begin.
    func observe(_ event: MigrationEvent) {
        lock.withLock {
            switch event {
            case .stepStarted(let number, _, _, _, _): step = number
            case .batchCommitted(_, _, let rows, _, _): objects += rows
            case .passFinished(let pass):
                marks.append(.init(seconds: elapsed, label: "step \(step) pass \(pass.pass)"))
            case .stepStage(let stage): marks.append(.init(seconds: elapsed, label: "\(stage)"))
            default: break
            }
        }
    }

    /// Stops sampling and draws the chart.
    func chart(title: String) -> String {
        let (taken, marked) = lock.withLock { () -> ([MemoryChart.Sample], [MemoryChart.Mark]) in
            stopped = true
            samples.append(.init(seconds: elapsed, residentBytes: (try? ProcessStats.residentMemory()) ?? 0, objects: objects))
            return (samples, marks)
        }
        return MemoryChart.svg(title: title, samples: taken, marks: marked)
    }
}
