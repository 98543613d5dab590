import Foundation
import TernSQLite

/// Policies for `configs/bench`, the benchmark model.
public enum BenchExample {
    /// Splits the author like `AuthorSplitPolicy`, then cleans each name the way imports of
    /// people's data must: Unicode canonical composition, surrounding space trimmed, and each
    /// word capitalised. CPU-heavy per row, so it shows what more workers buy.
    public struct NameCleaningPolicy: EntityMigrationPolicy {
        public init() {}

        public func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            var publication = try context.defaultDestination(for: source)
            if let author = source["author"].text {
                let parts = author.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
                publication["firstName"] = .text(Self.clean(String(parts[0])))
                publication["lastName"] = .text(parts.count > 1 ? Self.clean(String(parts[1])) : "")
            }
            context.associate(source, with: context.create(publication))
        }

        static func clean(_ name: String) -> String {
            name.precomposedStringWithCanonicalMapping.trimmingCharacters(in: .whitespacesAndNewlines).capitalized
        }
    }
}
