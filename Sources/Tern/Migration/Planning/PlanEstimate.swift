import TernSQLite

/// What a migration will do, worked out without writing anything: for `tern plan` and
/// `tern migrate --dry-run`. Row counts of the first step are counted in the store (filters
/// applied); later steps are estimated from what the steps before them create, one destination
/// object per selected source object.
public struct PlanEstimate: Sendable, Codable {
    public struct Step: Sendable, Codable {
        public var source: String
        public var destination: String
        /// Where the mapping comes from: file names, or "inferred".
        public var origin: [String]
        /// The versions of the inferred steps composed into this one ("V1 → V2 → V3").
        public var composedFrom: String?
        /// Why this inferred step was not composed with the next.
        public var notComposed: String?
        /// The SQL that applies the step in place, when it runs as schema changes.
        public var schemaChanges: [String]?
        public var passes: [Pass]
        /// What an inferred step drops: counted in the store for the first step (elements that
        /// hold nothing left out), listed without counts for later ones.
        public var dropped: [DroppedData]
    }

    public struct Pass: Sendable, Codable {
        public var number: Int
        public var entityMappings: [EntityMapping]
        public var rows: Int
        public var batches: Int
    }

    public struct EntityMapping: Sendable, Codable {
        public var name: String
        public var type: String
        public var source: String?
        public var destination: String?
        public var filter: String?
        public var policy: String?
        /// "SQL" when SQLite runs the whole mapping, "Swift" when batches go through a policy.
        public var runsIn: String
        public var rows: Int
        /// False when the count is estimated from an earlier step rather than counted.
        public var rowsCounted: Bool
        public var batches: Int
        public var properties: [Property]
    }

    public struct Property: Sendable, Codable {
        public var name: String
        /// "attribute" or "relationship".
        public var kind: String
        public var expression: String?
        /// "SQL" or "Swift"; relationships are always recreated in SQL, from the association tables.
        public var runsIn: String
    }

    public var storeVersion: String
    public var targetVersion: String
    public var batchSize: Int
    public var workers: Int
    public var steps: [Step]
}

extension StoreMigration {
    /// Estimates `plan` against the store: rows and batches per pass and entity mapping, and where
    /// each property mapping runs.
    public func estimate(_ plan: Plan) throws -> PlanEstimate {
        let reader = try ReadOnlyStore(path: store)
        let connection = try reader.connect()
        // A filter may read values stored outside the store.
        try SQLCompiler.prepare(connection, externalData: ExternalDataFolders(source: store, destination: nil))
        var steps: [PlanEstimate.Step] = []
        // Objects per entity of the step's source: counted for the store, estimated afterwards.
        var objects: [String: Int] = [:]
        for (index, step) in plan.steps.enumerated() {
            let sourceLayout = StoreLayout(model: step.source)
            var created: [String: Int] = [:]
            var passes: [PlanEstimate.Pass] = []
            let stepPlan = StepPlan(step, registry: options.registry)
            for number in step.passes.indices {
                var mappings: [PlanEstimate.EntityMapping] = []
                for (entity, planned) in stepPlan.entityMappings(inPass: number) {
                    let mapping = entity.mapping
                    var rows = 0
                    if let sourceName = mapping.sourceEntity, mapping.destinationEntity != nil, let layout = sourceLayout.entities[sourceName] {
                        if index == 0 {
                            var compiler = SQLCompiler(layout: sourceLayout, schema: "main")
                            let selection = SourceBatches.selection(of: layout, filter: entity.filter, compiler: &compiler)
                            let count = try connection.prepare((SQLFragment("SELECT count(*) FROM \(quoteIdentifier(layout.table)) s WHERE ") + selection).sql)
                            try count.bind(selection.arguments)
                            _ = try count.step()
                            rows = Int(count.row.int64(at: 0))
                        } else {
                            rows = objects[sourceName, default: 0]
                        }
                        created[mapping.destinationEntity!, default: 0] += rows
                    }
                    let where_ = planned?.runsInSwift == true ? "Swift" : "SQL"
                    let properties = mapping.attributeMappings.map { PlanEstimate.Property(name: $0.name, kind: "attribute", expression: $0.valueExpression, runsIn: where_) }
                        + mapping.relationshipMappings.map { PlanEstimate.Property(name: $0.name, kind: "relationship", expression: $0.valueExpression, runsIn: "SQL") }
                    mappings.append(PlanEstimate.EntityMapping(
                        name: mapping.name, type: mapping.type.rawValue, source: mapping.sourceEntity, destination: mapping.destinationEntity,
                        filter: mapping.filterPredicate, policy: mapping.policy, runsIn: where_, rows: rows, rowsCounted: index == 0,
                        batches: Self.batches(rows, options.batchSize), properties: properties))
                }
                let rows = mappings.reduce(0) { $0 + $1.rows }
                passes.append(PlanEstimate.Pass(number: number + 1, entityMappings: mappings, rows: rows,
                                                batches: mappings.reduce(0) { $0 + $1.batches }))
            }
            let dropped = DataLoss.dropped(by: step)
            steps.append(PlanEstimate.Step(source: step.source.versionName, destination: step.destination.versionName,
                                           origin: step.isInferred ? ["inferred"] : step.origins, composedFrom: step.composedFrom,
                                           notComposed: step.notComposed, schemaChanges: stepPlan.inPlace, passes: passes,
                                           dropped: index == 0 ? try DataLoss.count(dropped, of: step, in: store) : dropped))
            objects = created
        }
        return PlanEstimate(storeVersion: plan.storeVersion, targetVersion: plan.targetVersion, batchSize: options.batchSize,
                            workers: options.workers, steps: steps)
    }

    private static func batches(_ rows: Int, _ size: Int) -> Int {
        (rows + size - 1) / size
    }
}
