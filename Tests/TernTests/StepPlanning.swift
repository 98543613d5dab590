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
    /// The plan with its steps decided again with `registry` (another set of policies), as
    /// planning with it decides them; everything else as it was.
    func deciding(with registry: PolicyRegistry) -> MigrationPlan {
        var plan = self
        for index in plan.steps.indices { plan.steps[index].decide(with: registry) }
        // Sealed again, as planning seals what it decided (a resume checks the recorded seal).
        let seal = try? plan.computedSeal()
        plan.origin?.seal = seal
        return plan
    }
}
