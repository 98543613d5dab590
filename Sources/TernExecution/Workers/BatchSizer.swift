import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability
/// Sizes the batches of an entity mapping that runs in Swift by what they cost, not only by how
/// many objects they hold: a batch of 10,000 objects is 200 MB when each has a 20 KB title, and a
/// minute when each runs a slow policy. The next batch's object count is the largest that keeps
/// the last ones' bytes per object within the batch's share of the memory budget and their time
/// per object within the target time, never above `--batch-size`, growing at most twofold a batch
/// (as gh-ost and pt-online-schema-change size their chunks).
///
/// Batch boundaries do not change what is written: objects are created, given keys and written
/// in key order whatever the batches, so a resumed run sized otherwise gives the same store.
struct BatchSizer {
    /// `--batch-size`: the most objects a batch holds.
    let maximumObjects: Int
    /// The most bytes of source values one batch should read into memory.
    let bytesPerBatch: Int
    /// How long reading and transforming a batch should take: a stop request or a checkpoint is
    /// then never much further away.
    let targetSeconds: Double
    /// The next batch's object count.
    private(set) var objects: Int

    /// Batches start small and grow once their cost is known.
    static let firstBatch = 64
    /// A batch's values are held about this many times over: as read, as the policy's objects,
    /// and as bound for writing.
    static let copiesInMemory = 3

    /// - Parameters:
    ///   - memoryBudget: the bytes of values all batches in flight may hold at once.
    ///   - inFlight: how many batches are held at once (read ahead, and the one being written).
    init(maximumObjects: Int, memoryBudget: Int, inFlight: Int, targetSeconds: Double = 0.5) {
        self.maximumObjects = max(1, maximumObjects)
        bytesPerBatch = max(1, memoryBudget / max(1, inFlight) / Self.copiesInMemory)
        self.targetSeconds = targetSeconds
        objects = min(self.maximumObjects, Self.firstBatch)
    }

    /// Learns from a batch just read and transformed.
    mutating func observe(objects read: Int, bytes: Int, seconds: Double) {
        guard read > 0 else { return }
        let byBytes = bytes > 0 ? Int(min(Double(Int.max / 2), Double(bytesPerBatch) * Double(read) / Double(bytes))) : maximumObjects
        let byTime = seconds > 0 ? Int(min(Double(Int.max / 2), targetSeconds * Double(read) / seconds)) : maximumObjects
        objects = max(1, min(maximumObjects, byBytes, byTime, 2 * max(read, objects)))
    }
}
