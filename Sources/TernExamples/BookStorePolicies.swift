import Foundation
import Tern
import TernSQLite

/// The BookStore chapter's custom code, in Tern's terms: the policy that splits `author` into
/// `firstName` and `lastName` (v3 → v4), and the migration manager that fills the new
/// `synopsis` from `title` (v4 → v5). `configs/bookstore/mappings/` names both.
public enum BookStoreExample {
    /// The book's `PublicationToPublicationMigrationPolicy`: the default destination object, with
    /// the author's first word as `firstName` and the rest as `lastName`.
    public struct AuthorSplitPolicy: EntityMigrationPolicy {
        /// Applied to each name after the split (the benchmark's name cleaning; none in the book).
        let clean: @Sendable (String) -> String

        /// A policy applying `clean` to each part of the split name; by default the parts are kept as
        /// they are.
        public init(clean: @escaping @Sendable (String) -> String = { $0 }) {
            self.clean = clean
        }

        /// Creates the default publication, splits `author` at its first space into `firstName` and
        /// `lastName` (empty when there is no space), and associates it; a NULL author leaves both as the
        /// mapping's expressions made them.
        public func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            var publication = try context.defaultDestination(for: source)
            if let author = try source["author"].text {
                let parts = author.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
                publication["firstName"] = .text(clean(String(parts[0])))
                publication["lastName"] = .text(parts.count > 1 ? clean(String(parts[1])) : "")
            }
            context.associate(source, with: context.create(publication))
        }
    }

    /// The book's `MyMigrationManager`: on every association of a mapping into `Publication`
    /// whose user info names it (`manager: MyMigrationManager`), the destination's synopsis
    /// starts as its title. (Another entity has no synopsis: setting it there is refused.)
    public struct SynopsisManager: MigrationManagerDelegate {
        /// The manager hook; it has no configuration.
        public init() {}

        /// True for mappings into `Publication` whose user info has `manager: MyMigrationManager`.
        public func observes(_ mapping: EntityMapping) -> Bool {
            mapping.userInfo["manager"] == "MyMigrationManager" && mapping.destinationEntity == "Publication"
        }

        /// Sets the destination's synopsis to its title when the synopsis is still NULL.
        public func associate(source: SourceObject, destination: inout DestinationObject, mapping: EntityMapping) {
            if destination["synopsis"] == .null {
                destination["synopsis"] = destination["title"]
            }
        }
    }
}

extension PolicyRegistry {
    /// The policies and manager hook Tern ships with, for the examples in this checkout's
    /// `configs/` and the demo: each for its own folder's model only
    /// (`PolicyRegistry.forModel(at:)`), never for a copy of it elsewhere.
    public static var builtIn: PolicyRegistry {
        var registry = PolicyRegistry()
        registry.register(BookStoreExample.AuthorSplitPolicy(), as: "PublicationToPublicationMigrationPolicy", forModelAt: configs + "/bookstore")
        registry.register(BookStoreExample.AuthorSplitPolicy(), as: "AuthorSplitPolicy", forModelAt: configs + "/bench")
        registry.register(BookStoreExample.AuthorSplitPolicy(clean: BenchExample.cleanName), as: "NameCleaningPolicy", forModelAt: configs + "/bench")
        registry.register(EventsExample.PrintedDatePolicy(), as: "StepOneEntityMigrationPolicy", forModelAt: configs + "/events")
        registry.setDelegate(BookStoreExample.SynopsisManager(), forModelAt: configs + "/bookstore")
        return registry
    }

    /// This checkout's `configs/`, where the examples' models are: Sources/TernExamples/ is two
    /// folders below the checkout.
    private static let configs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("configs").path
}
