import Foundation
import Synchronization
import Testing
@_spi(Testing) import TernLoop

/// Counts jobs running at the same moment, from worker threads.
final class ConcurrencyGauge: Sendable {
    private let current = Atomic<Int>(0)
    private let highest = Atomic<Int>(0)

    func enter() {
        let now = current.add(1, ordering: .sequentiallyConsistent).newValue
        var seen = highest.load(ordering: .sequentiallyConsistent)
        while now > seen {
            let (exchanged, original) = highest.compareExchange(expected: seen, desired: now, ordering: .sequentiallyConsistent)
            if exchanged { break }
            seen = original
        }
    }

    func leave() { current.subtract(1, ordering: .sequentiallyConsistent) }
    var peak: Int { highest.load(ordering: .sequentiallyConsistent) }
}

@Suite("libuv worker pool")
struct WorkerPoolTests {
    @Test("jobs run on worker threads, completions arrive on the loop thread, in bounded flight")
    func runsOffLoopDeliversOnLoop() throws {
        let loop = try EventLoop()
        let gauge = ConcurrencyGauge()
        let pool = try WorkerPool<Int>(loop: loop, workers: 3, maxInFlight: 4) { index in index }
        var results: [Int: Int] = [:]
        var completionThreads: [ThreadID] = []
        var workerThreads: [ThreadID] = []
        var highestInFlight = 0
        var loopThread: ThreadID?
        let jobs = 200

        for number in 0..<jobs {
            try pool.submit(
                { (worker: inout Int, _) -> (Int, ThreadID, Int) in
                    gauge.enter()
                    defer { gauge.leave() }
                    var sum = 0
                    for value in 0..<(number * 100) { sum &+= value }
                    return (number * 2, ThreadID.current, worker)
                },
                completion: { result in
                    guard case .success(let (doubled, thread, workerIndex)) = result else {
                        Issue.record("job \(number) did not succeed: \(result)")
                        return
                    }
                    #expect((0..<3).contains(workerIndex))
                    results[number] = doubled
                    workerThreads.append(thread)
                    completionThreads.append(ThreadID.current)
                    loopThread = loop.threadID
                    highestInFlight = max(highestInFlight, pool.inFlightCount)
                    if results.count == jobs { pool.shutdown() }
                })
            highestInFlight = max(highestInFlight, pool.inFlightCount)
        }
        #expect(pool.inFlightCount == 4)
        #expect(pool.backlogCount == jobs - 4)
        #expect(!pool.hasCapacity)

        loop.run()
        try loop.close()

        #expect(results.count == jobs)
        #expect(results.allSatisfy { $0.value == $0.key * 2 })
        let loopID = try #require(loopThread)
        #expect(completionThreads.allSatisfy { $0 == loopID })
        #expect(completionThreads.first == ThreadID.current)  // run() was called on this thread
        #expect(workerThreads.allSatisfy { $0 != loopID })
        #expect(highestInFlight <= 4)
        #expect(gauge.peak <= 3)
    }

    @Test("each worker keeps its own state across jobs, built on its own thread")
    func workerStateStaysWithItsThread() throws {
        let loop = try EventLoop()
        final class Box { var jobsRun = 0; let thread = ThreadID.current }
        let pool = try WorkerPool<Box>(loop: loop, workers: 2) { _ in Box() }
        var mismatches = 0
        var finished = 0
        var totalRuns = 0
        for _ in 0..<50 {
            try pool.submit(
                { (box: inout Box, _) -> (Bool, Int) in
                    box.jobsRun += 1
                    return (box.thread == ThreadID.current, box.jobsRun)
                },
                completion: { result in
                    if case .success(let (sameThread, runs)) = result {
                        if !sameThread { mismatches += 1 }
                        totalRuns = max(totalRuns, runs)
                    }
                    finished += 1
                    if finished == 50 { pool.shutdown() }
                })
        }
        loop.run()
        try loop.close()
        #expect(mismatches == 0)
        #expect(totalRuns >= 25)  // at least one worker ran half of the jobs with the same state
    }

    @Test("queued jobs are cancelled without running; running jobs see the request")
    func cancellation() throws {
        let loop = try EventLoop()
        let gate = Turnstile()
        let ran = Atomic<Int>(0)
        let pool = try WorkerPool<Void>(loop: loop, workers: 1, maxInFlight: 2) { _ in () }
        var outcomes: [Int: String] = [:]
        var ids: [JobID] = []
        for number in 0..<5 {
            let id = try pool.submit(
                { (_: inout Void, context) -> Int in
                    ran.add(1, ordering: .relaxed)
                    if number == 0 {
                        gate.pass()
                        if context.isCancelled { throw CancellationError() }
                    }
                    return number
                },
                completion: { result in
                    switch result {
                    case .success: outcomes[number] = "done"
                    case .failure(let error): outcomes[number] = error is CancellationError ? "stopped" : "failed"
                    case .cancelled: outcomes[number] = "cancelled"
                    }
                    if outcomes.count == 5 { pool.shutdown() }
                })
            ids.append(id)
        }
        // Job 0 is running, job 1 is queued for the worker, 2–4 wait in the backlog.
        gate.waitForArrival()
        pool.cancel(ids[3])
        #expect(outcomes[3] == "cancelled")  // delivered before cancel returns
        pool.cancel(ids[1])
        pool.cancel(ids[0])
        gate.open()
        loop.run()
        try loop.close()
        #expect(outcomes[1] == "cancelled")
        #expect(outcomes[3] == "cancelled")
        #expect(outcomes[2] == "done")
        #expect(outcomes[4] == "done")
        // Job 0 was running: it saw the request.
        #expect(outcomes[0] == "stopped")
        #expect(ran.load(ordering: .relaxed) == 3)
    }

    @Test("cancelAll then shutdown drops everything not started and leaves no open handle")
    func cancelAllAndShutdown() throws {
        let loop = try EventLoop()
        let gate = Turnstile()
        let pool = try WorkerPool<Void>(loop: loop, workers: 2) { _ in () }
        var cancelled = 0
        var completed = 0
        var shutDown = false
        for _ in 0..<100 {
            try pool.submit(
                { (_: inout Void, _) in gate.pass() },
                completion: { result in
                    if case .cancelled = result { cancelled += 1 } else { completed += 1 }
                })
        }
        pool.cancelAll()
        pool.shutdown { shutDown = true }
        #expect(throws: UVError.self) { try pool.submit({ (_: inout Void, _) in }, completion: { _ in }) }
        gate.open()
        loop.run()
        #expect(shutDown)
        #expect(cancelled + completed == 100)
        #expect(completed <= 4)  // only jobs already handed to the two workers could run
        #expect(loop.openHandleNames.isEmpty)
        try loop.close()
    }

    @Test("a worker whose setup fails fails its jobs with that error")
    func setupFailure() throws {
        struct SetupFailed: Error {}
        let loop = try EventLoop()
        let pool = try WorkerPool<Int>(loop: loop, workers: 1) { _ in throw SetupFailed() }
        var failure: (any Error)?
        try pool.submit(
            { (_: inout Int, _) in 1 },
            completion: { result in
                if case .failure(let error) = result { failure = error }
                pool.shutdown()
            })
        loop.run()
        try loop.close()
        #expect(failure is SetupFailed)
    }

    @Test("closing a loop with an open pool fails and names the handle")
    func closeWithOpenPool() throws {
        let loop = try EventLoop()
        let pool = try WorkerPool<Void>(loop: loop, workers: 1) { _ in () }
        let error = try #require(throws: UVError.self) { try loop.close() }
        #expect(error.name == "EBUSY")
        #expect(error.description.contains("async"))
        pool.shutdown()
        loop.run()
        try loop.close()
    }

    @Test("the pool size is validated before any thread starts")
    func invalidSizes() throws {
        let loop = try EventLoop()
        #expect(throws: UVError.self) { try WorkerPool<Void>(loop: loop, workers: 0) { _ in () } }
        #expect(throws: UVError.self) { try WorkerPool<Void>(loop: loop, workers: 4, maxInFlight: 2) { _ in () } }
        #expect(loop.openHandleNames.isEmpty)
        try loop.close()
    }
}

@Suite("Process statistics")
struct ProcessStatsTests {
    @Test("resident memory is read from the OS and the peak is at least the current")
    func memory() throws {
        let now = try ProcessStats.residentMemory()
        let peak = try ProcessStats.peakResidentMemory()
        #expect(now > 1024 * 1024)
        #expect(peak >= now)
        #expect(ProcessStats.availableParallelism >= 1)
    }
}
