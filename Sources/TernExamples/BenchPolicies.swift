import Tern
import Foundation

/// What `configs/bench`, the benchmark model, needs beyond the BookStore policies.
public enum BenchExample {
    /// `NameCleaningPolicy` is `AuthorSplitPolicy` with this applied to each name: the cleaning
    /// imports of people's data need — Unicode canonical composition, surrounding space trimmed,
    /// each word capitalised. CPU-heavy per row, so it shows what more workers buy.
    @Sendable public static func cleanName(_ name: String) -> String {
        name.precomposedStringWithCanonicalMapping.trimmingCharacters(in: .whitespacesAndNewlines).capitalized
    }
}
