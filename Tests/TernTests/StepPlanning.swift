@testable import TernPlanning

extension MigrationStep {
    /// The step as planning decides it with `registry`: what a test runs through `StepRunner`.
    func planned(with registry: PolicyRegistry) -> StepPlan {
        var step = self
        step.decide(with: registry)
        return StepPlan(step, decisions: step.decisions!)
    }
}

extension MigrationPlan {
    /// The plan with its steps decided again with `registry` (another set of policies).
    func deciding(with registry: PolicyRegistry) -> MigrationPlan {
        MigrationPlan(
            storeVersion: storeVersion, targetVersion: targetVersion,
            steps: steps.map { step in
                var step = step
                step.decide(with: registry)
                return step
            })
    }
}
