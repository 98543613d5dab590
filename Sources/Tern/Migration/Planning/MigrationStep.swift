/// One version-to-version step of a migration: the mapping models that run in order (passes)
/// from `source` into one new store of `destination`.
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
    /// The versions of the inferred steps this one was composed of ("V1 → V2 → V3"), if any.
    public let composedFrom: String?
    /// Why this step was not composed with the next one, when both are inferred.
    public internal(set) var notComposed: String?
    /// Why a step that qualifies to run in place is planned as a copy of the store: its schema
    /// changes, rehearsed on the store's schema while planning, did not give the destination's
    /// layout (`InPlaceRehearsal`).
    public internal(set) var copiedInstead: String?
    /// Whose rules laid out the store the step reads: Core Data's, or an earlier Tern's for the
    /// first step from a store that release wrote (a copy, which writes Core Data's layout).
    public internal(set) var sourceRules: StoreLayout.Rules = .coreData

    /// The layout of the store the step reads.
    public var sourceLayout: StoreLayout { StoreLayout(model: source, rules: sourceRules) }

    /// A step running `passes` in order; see the properties for what each argument means.
    public init(
        source: ObjectModel, destination: ObjectModel, passes: [ValidatedMapping], isInferred: Bool, origins: [String],
        composedFrom: String? = nil
    ) {
        self.source = source
        self.destination = destination
        self.passes = passes
        self.isInferred = isInferred
        self.origins = origins
        self.composedFrom = composedFrom
    }
}
