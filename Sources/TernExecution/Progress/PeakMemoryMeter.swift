import TernLoop
import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability

/// The peak resident memory of one stretch of work (a pass), read from the kernel.
///
/// On Linux the kernel's high-water mark is reset when the stretch starts, so the figure is exact
/// and includes every allocation inside a batch. Where that is refused, the meter falls back to
/// the highest of the readings `sample()` takes at batch boundaries.
package struct PeakMemoryMeter {
    private let usesHighWaterMark: Bool
    private var sampled: Int

    package init() {
        usesHighWaterMark = ProcessStats.resetPeakResidentMemory()
        sampled = (try? ProcessStats.residentMemory()) ?? 0
    }

    mutating func sample() {
        guard !usesHighWaterMark else { return }
        sampled = max(sampled, (try? ProcessStats.residentMemory()) ?? 0)
    }

    /// The peak so far, in bytes.
    package mutating func peak() -> Int {
        if usesHighWaterMark, let highWater = ProcessStats.peakResidentMemorySinceReset() { return highWater }
        sample()
        return sampled
    }
}
