import Foundation
import Tern
import TernCommands

/// Which part of a fleet one task runs: from flags, or from the job engine that started it.
struct Shard: Equatable, Sendable, CustomStringConvertible {
    var index: Int
    var count: Int
    /// Where the index came from, for the task's first line.
    var source: String

    var description: String { "\(index)/\(count)" }

    /// The engines' variables, in the order they are looked for: a Kubernetes Indexed Job, an AWS
    /// Batch array job, a Slurm job array. Slurm's ids start where `--array` says, so its index is
    /// counted from `SLURM_ARRAY_TASK_MIN`; Kubernetes and AWS Batch give no count, which then
    /// comes from `--shard-count`.
    static func resolve(index: Int?, count: Int?, environment: [String: String]) throws -> Shard {
        func number(_ name: String) throws -> Int? {
            guard let text = environment[name] else { return nil }
            guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else {
                throw TernError(.badInput, "\(name)=\(text) is not a whole number")
            }
            return value
        }
        var found: (index: Int, count: Int?, source: String)?
        if let index {
            found = (index, nil, "--shard-index")
        } else if let value = try number("JOB_COMPLETION_INDEX") {
            found = (value, nil, "JOB_COMPLETION_INDEX")
        } else if let value = try number("AWS_BATCH_JOB_ARRAY_INDEX") {
            found = (value, nil, "AWS_BATCH_JOB_ARRAY_INDEX")
        } else if let value = try number("SLURM_ARRAY_TASK_ID") {
            // `--array=0-7` and `--array=10-24:2` number their tasks evenly; `--array=1,4,9` does
            // not, and cannot name shards: refused below, as its index falls outside the count.
            let offset = value - (try number("SLURM_ARRAY_TASK_MIN") ?? 0), step = max(1, try number("SLURM_ARRAY_TASK_STEP") ?? 1)
            guard offset % step == 0 else {
                throw TernError(
                    .badInput,
                    "SLURM_ARRAY_TASK_ID=\(value) is not on the array's step of \(step): submit an evenly numbered array (--array=0-N) or pass --shard-index")
            }
            found = (offset / step, try number("SLURM_ARRAY_TASK_COUNT"), "SLURM_ARRAY_TASK_ID")
        }
        guard let found else {
            guard count == nil || count == 1 else {
                throw TernError(.badInput, "--shard-count \(count!) needs --shard-index, or a job engine's index variable")
            }
            return Shard(index: 0, count: 1, source: "the whole manifest")
        }
        guard let total = count ?? found.count else {
            throw TernError(
                .badInput, "the shard index comes from \(found.source), but not the number of shards: pass --shard-count (the job's completions or array size)")
        }
        guard total >= 1, (0..<total).contains(found.index) else {
            let hint = found.source == "SLURM_ARRAY_TASK_ID" ? ": submit an evenly numbered array (--array=0-N, or A-B:STEP), or pass --shard-index" : ""
            throw TernError(.badInput, "shard index \(found.index) (from \(found.source)) is not within 0..<\(total)\(hint)")
        }
        return Shard(index: found.index, count: total, source: found.source)
    }

    /// This shard's stores. Every task computes the same split from the same manifest: stores in
    /// decreasing size (objects; ties by id), dealt to the shards back and forth (0, 1, …, n−1,
    /// n−1, …, 0), so each shard gets a like share of the objects and of the stores.
    func stores(of manifest: FleetManifest) -> [FleetManifest.Entry] {
        guard count > 1 else { return manifest.entries }
        let bySize = manifest.entries.sorted { $0.objects != $1.objects ? $0.objects > $1.objects : $0.id < $1.id }
        return bySize.enumerated().filter { position, _ in
            let round = position / count, place = position % count
            return (round % 2 == 0 ? place : count - 1 - place) == index
        }.map(\.element)
    }
}
