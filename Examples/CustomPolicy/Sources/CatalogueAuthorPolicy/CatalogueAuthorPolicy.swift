import Foundation
import Tern

/// Splits the author the way a publisher's catalogue writes names, "Last, First" when there is a
/// comma, and otherwise as the book does. Registered under the name the mapping file gives,
/// it replaces the built-in policy of the same name.
public struct CatalogueAuthorPolicy: EntityMigrationPolicy {
    public init() {}

    public func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
        var publication = try context.defaultDestination(for: source)
        if let author = try source["author"].text {
            if let comma = author.firstIndex(of: ",") {
                publication["lastName"] = .text(String(author[..<comma]))
                publication["firstName"] = .text(author[author.index(after: comma)...].trimmingCharacters(in: .whitespaces))
            } else {
                let parts = author.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
                publication["firstName"] = .text(String(parts[0]))
                publication["lastName"] = .text(parts.count > 1 ? String(parts[1]) : "")
            }
        }
        context.associate(source, with: context.create(publication))
    }
}
