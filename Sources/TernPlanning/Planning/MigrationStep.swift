import TernModel
import TernStore
import TernMapping
/// One version-to-version step of a migration: the mapping models that run in order (passes)
/// from `source` into one new store of `destination`, and how — decided here, once, while
/// planning: the run reads these values and decides nothing again.
public struct MigrationStep: Sendable {
    /// The model version the step reads.
    public let source: ObjectModel
    /// The model version the step writes.
    public let destination: ObjectModel
    /// One validated mapping model per pass, run in order into the same destination.
    public let passes: [ValidatedMapping]
    /// True when the mapping was inferred rather than read from a file.
    public let isInferred: Bool
    /// Where each pass's mapping came from, for reports ("inferred" for an inferred one).
    public let origins: [String]
    /// Why a step that qualifies to run in place is planned as a copy of the store: its schema
    /// changes, rehearsed on the store's schema while planning, did not give the destination's
    /// layout (`InPlaceRehearsal`), or an earlier Tern laid the store out.
    public private(set) var copiedInstead: String?
    /// Whose rules laid out the store the step reads: Core Data's, or an earlier Tern's for the
    /// first step from a store that release wrote (a copy, which writes Core Data's layout).
    public private(set) var sourceRules: StoreLayout.Rules = .coreData
    /// The SQL that applies the step inside the store (`LightweightInPlace`), when it qualifies
    /// and was not planned as a copy; nil when the step copies the store.
    public private(set) var schemaChanges: [String]?

    /// Join tables the store the step reads names from the other side of their relationship
    /// (`StoreLayout.namedByInverse`): read as the store has them, never derived.
    public private(set) var sourceNamedByInverse: Set<String> = []

    /// How each entity mapping that copies objects runs (SQL or Swift, keys kept, its
    /// association table), decided once by `decide(with:)` while planning; nil until then.
    public private(set) var decisions: [MappingDecision]?

    /// Every entity mapping of every pass, in order.
    public var entityMappings: [EntityMapping] { passes.flatMap { $0.entities.map(\.mapping) } }
    /// The layout of the store the step reads.
    public var sourceLayout: StoreLayout { StoreLayout(model: source, rules: sourceRules, namedByInverse: sourceNamedByInverse) }

    /// A step running `passes` in order; see the properties for what each argument means.
    public init(
        source: ObjectModel, destination: ObjectModel, passes: [ValidatedMapping], isInferred: Bool, origins: [String]
    ) {
        self.source = source
        self.destination = destination
        self.passes = passes
        self.isInferred = isInferred
        self.origins = origins
        self.schemaChanges = LightweightInPlace.statements(for: self)
    }

    /// Plans the step as a copy of the store, saying why.
    package mutating func copy(because reason: String) {
        copiedInstead = reason
        schemaChanges = nil
    }

    /// Plans the step to read join tables the store names from the other side (a copy: its
    /// tables are not the layout the destination's schema changes start from).
    package mutating func readJoinTables(namedByInverse relationships: Set<String>) {
        sourceNamedByInverse = relationships
        decisions = nil  // keys kept depend on how the source is read: decided again, later
        copy(because: "the store names join tables from the other side of \(relationships.sorted().joined(separator: ", ")): the step reads them as they are")
    }

    /// Decides how each entity mapping runs (`MappingDecision.decide`), with the policies
    /// `registry` holds: the last thing planning does to a step, after anything that changes
    /// how its source is read.
    package mutating func decide(with registry: PolicyRegistry) {
        decisions = MappingDecision.decide(self, registry: registry)
    }

    /// Whether `registry` would run an entity mapping otherwise than the saved decisions say (in
    /// Swift rather than SQL, or its values no longer following their expressions): a plan runs
    /// only with policies that run its mappings the way it was planned. The rest of a decision
    /// (order, keys kept) follows from these and the step, so comparing these compares all.
    package func decisionsDiffer(from registry: PolicyRegistry) -> Bool {
        guard let decisions else { return true }
        return decisions.contains { decision in
            let mapping = passes[decision.pass].entities[decision.entity].mapping
            return registry.runsInSwift(mapping) != decision.runsInSwift || registry.valuesFollowExpressions(mapping) != decision.valuesFollowExpressions
        }
    }

    /// Plans the step to read a store an earlier Tern laid out (a copy into Core Data's layout).
    package mutating func readEarlierTernLayout() {
        sourceRules = .earlierTern
        decisions = nil  // keys kept depend on how the source is read: decided again, later
        copy(because: "an earlier Tern laid the store out by its own rules: the step reads its tables and writes Core Data's layout and hashes")
    }
}

/// A plan is a value that can be saved (`tern plan --json`) and run later (`tern migrate --plan`,
/// `MigrationPlan.read(from:)`): the versions, the mappings (with the instant `now()`
/// gives), the schema changes of steps applied in place — everything the run needs, so it
/// decides nothing again. Decoding checks what it trusts: each version is a valid model, each
/// mapping validates against its versions, and schema changes are exactly what the step's
/// versions give (a plan file never runs SQL of its own).
extension MigrationStep: Codable {
    private enum CodingKeys: String, CodingKey {
        case source, destination, sourceRules, sourceNamedByInverse, passes, isInferred, origins, copiedInstead, schemaChanges, decisions
    }

    /// A pass as saved: the mapping model as written, and what it was validated with.
    private struct Pass: Codable {
        var mapping: MappingModel
        var now: Double
        var earlierMappings: [String]
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func version(_ key: CodingKeys) throws -> ObjectModel {
            let model = try container.decode(ObjectModel.self, forKey: key)
            let problems = model.problems()
            guard problems.isEmpty else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "version \(model.versionName) is not a valid model: \(problems.joined(separator: "; "))")
            }
            return model
        }
        let (source, destination) = (try version(.source), try version(.destination))
        self.source = source
        self.destination = destination
        passes = try container.decode([Pass].self, forKey: .passes).map { pass in
            try pass.mapping.validate(source: source, destination: destination, now: pass.now, earlierMappings: Set(pass.earlierMappings))
        }
        isInferred = try container.decode(Bool.self, forKey: .isInferred)
        origins = try container.decode([String].self, forKey: .origins)
        copiedInstead = try container.decodeIfPresent(String.self, forKey: .copiedInstead)
        sourceRules = try container.decode(StoreLayout.Rules.self, forKey: .sourceRules)
        sourceNamedByInverse = try container.decodeIfPresent(Set<String>.self, forKey: .sourceNamedByInverse) ?? []
        guard passes.count == origins.count, !passes.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: .origins, in: container, debugDescription: "a step needs one origin per pass, and a pass")
        }
        schemaChanges = nil
        if let saved = try container.decodeIfPresent([String].self, forKey: .schemaChanges) {
            guard copiedInstead == nil, saved == LightweightInPlace.statements(for: self) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .schemaChanges, in: container,
                    debugDescription: "the schema changes are not those of step \(source.versionName) → \(destination.versionName)")
            }
            schemaChanges = saved
        }
        decisions = try container.decodeIfPresent([MappingDecision].self, forKey: .decisions)
        if let decisions {
            // Each names an entity mapping that copies objects, once, numbered in order.
            let copying = passes.enumerated().flatMap { pass, mapping in
                mapping.entities.indices.filter { mapping.entities[$0].mapping.sourceEntity != nil && mapping.entities[$0].mapping.destinationEntity != nil }
                    .map { [pass, $0] }
            }
            guard Set(decisions.map { [$0.pass, $0.entity] }) == Set(copying), decisions.count == copying.count,
                decisions.map(\.number) == Array(decisions.indices.map { $0 + 1 })
            else {
                throw DecodingError.dataCorruptedError(
                    forKey: .decisions, in: container,
                    debugDescription:
                        "the decisions do not name each entity mapping of step \(source.versionName) → \(destination.versionName) that copies objects once")
            }
            // Only the Swift-or-SQL answers are the policies' to give; the order, the keys kept and
            // the association tables follow from them and the step: made again, they must match.
            let answers = Dictionary(decisions.map { ([$0.pass, $0.entity], $0) }, uniquingKeysWith: { first, _ in first })
            let passes = self.passes
            let answer = { (pass: Int, mapping: EntityMapping) in
                passes[pass].entities.firstIndex { $0.mapping.name == mapping.name }.flatMap { answers[[pass, $0]] }
            }
            let remade = MappingDecision.decide(
                self, runsInSwift: { answer($0, $1)?.runsInSwift ?? false }, valuesFollowExpressions: { answer($0, $1)?.valuesFollowExpressions ?? true })
            guard remade == decisions else {
                throw DecodingError.dataCorruptedError(
                    forKey: .decisions, in: container,
                    debugDescription:
                        "the decisions of step \(source.versionName) → \(destination.versionName) are not what planning decides from their Swift-or-SQL answers (keys kept, order, numbering)"
                )
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(source, forKey: .source)
        try container.encode(destination, forKey: .destination)
        try container.encode(
            passes.map { Pass(mapping: $0.model, now: encoder.userInfo[.omittingInstants] != nil ? 0 : $0.now, earlierMappings: $0.earlierMappings.sorted()) },
            forKey: .passes)
        try container.encode(isInferred, forKey: .isInferred)
        try container.encode(origins, forKey: .origins)
        try container.encodeIfPresent(copiedInstead, forKey: .copiedInstead)
        try container.encode(sourceRules, forKey: .sourceRules)
        if !sourceNamedByInverse.isEmpty { try container.encode(sourceNamedByInverse.sorted(), forKey: .sourceNamedByInverse) }
        try container.encodeIfPresent(schemaChanges, forKey: .schemaChanges)
        try container.encodeIfPresent(decisions, forKey: .decisions)
    }
}

extension CodingUserInfoKey {
    /// Set (to anything) for an encoding that writes each pass's `now()` instant as 0: what a
    /// plan decides, compared across plans made at different instants (`MigrationPlan.contentDigest()`).
    package static let omittingInstants = CodingUserInfoKey(rawValue: "tern.omittingInstants")!
}

/// A step's identity: the versions it goes between. What a run's record, a resume, progress
/// events and a failure name a step by; written (and encoded) as `A → B`.
public struct StepIdentity: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The version the step reads.
    public let source: String
    /// The version the step writes.
    public let destination: String

    /// The step from `source` to `destination`.
    public init(source: String, destination: String) {
        self.source = source
        self.destination = destination
    }

    public var description: String { "\(source) → \(destination)" }

    private static let arrow = " → "

    /// Reads `A → B`: one arrow between two version names.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        let parts = text.components(separatedBy: Self.arrow)
        guard parts.count == 2 else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a step (\"SOURCE → DESTINATION\"): \(text)")
        }
        self.init(source: parts[0], destination: parts[1])
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// An entity mapping of a plan: its step, its pass, and its name, which Core Data keeps unique
/// only in one mapping model — two steps, or two passes of a step split by a filter, may each
/// have a `BookToBook`.
public struct EntityMappingIdentity: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The step whose mapping models hold it.
    public let step: StepIdentity
    /// Its pass in the step, from 1.
    public let pass: Int
    /// Its name in the pass's mapping model.
    public let name: String

    /// The entity mapping `name` of `pass` (from 1) in `step`.
    public init(step: StepIdentity, pass: Int, name: String) {
        self.step = step
        self.pass = pass
        self.name = name
    }

    public var description: String { "\(name) (\(step), pass \(pass))" }
}

extension MigrationStep {
    /// The versions the step goes between.
    public var identity: StepIdentity { StepIdentity(source: source.versionName, destination: destination.versionName) }
}
