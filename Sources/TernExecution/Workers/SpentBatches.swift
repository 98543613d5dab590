import Synchronization
import TernPlanning
import TernDurability

/// Batches written, waiting to be released on the worker thread that made them. glibc's malloc
/// gives each thread an arena of its own, and a block freed on another thread takes its arena's
/// lock: a batch's many small blocks (values, strings, dictionaries) freed on the writer's
/// thread met the workers allocating the next batches there, and the writer waited on those
/// locks some 1,900 times in a three-second policy pass.
///
/// The writer still holds a batch for a moment after keeping it (the pool's outcome, the
/// completion's result), and whoever lets go last frees it. So a worker releases the batches kept
/// before its previous batch began, one batch's time later, by when the writer has let go. As a
/// rule a worker holds one or two spent batches: those of its own written while it makes one
/// more, and those of the time before; behind a late batch, every one it read ahead meanwhile.
/// What is left when its reader goes is released with it, on its thread.
final class SpentBatches: Sendable {
    private let batches = Mutex<(kept: [TransformedBatch], aged: [TransformedBatch])>(([], []))

    /// Keeps `batch`, written, for its worker to release.
    func keep(_ batch: TransformedBatch) {
        var spent = batch
        // Not kept by what keeps it: a batch naming its own keeper would never be released.
        spent.spent = nil
        batches.withLock { $0.kept.append(spent) }
    }

    /// Releases, on the calling thread (their worker's), the batches kept before the last call.
    func releaseAged() {
        let released = batches.withLock { batches in
            defer { (batches.aged, batches.kept) = (batches.kept, []) }
            return batches.aged
        }
        // Outside the lock, on this thread: its blocks are freed into this thread's arena.
        withExtendedLifetime(released) {}
    }
}
