import Foundation
import TernDurability
import TernMapping
import TernModel
import TernPlanning
import TernStore

extension MigrationPlan {
    /// Reads a plan `tern plan --json` saved (its `plan`), refusing anything it would not have
    /// written: a key it does not know, a value of another type, a version that is not a valid
    /// model, a mapping that does not validate, schema changes that are not the step's.
    public static func read(from path: String) throws -> MigrationPlan {
        try TernFailure.wrapping {
            guard let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int else {
                throw TernError(.missingInput, "no such file", path: path)
            }
            guard size <= 64 << 20 else { throw TernError(.badInput, "a plan file is at most 64 MiB; this one has \(size) bytes", path: path) }
            guard let data = FileManager.default.contents(atPath: path) else { throw TernError(.missingInput, "cannot read the plan", path: path) }
            let estimate: PlanEstimate
            do {
                estimate = try JSONDecoder().decode(PlanEstimate.self, from: data)
            } catch let error as DecodingError {
                throw TernError(.badInput, "not a plan tern plan --json wrote: \(PlanCodingError.describe(error))", path: path)
            } catch let error as TernError {
                throw TernError(.badInput, "the plan's mapping does not validate: \(error.message)", path: path)
            }
            if let extra = try PlanCodingError.firstDifference(saved: data, decoded: PlanEstimate.encoder.encode(estimate)) {
                throw TernError(
                    .badInput, "the plan has \(extra), which tern plan does not write: was it edited? Make it again with tern plan --json", path: path)
            }
            guard estimate.plan.origin != nil else {
                throw TernError(.badInput, "the plan has no origin (plan.origin): tern plan writes one; make the plan again with tern plan --json", path: path)
            }
            try estimate.plan.checkVersions()
            try estimate.plan.checkSeal(path: path)
            return estimate.plan
        }
    }
}
