import Tern
import TernExamples
import TernSQLite

/// Policies for the fixture apps' custom mappings. Their Swift/Objective-C code was not copied
/// (only data files were), so these do what each project describes, in Tern's policy API.
enum FixturePolicies {
    /// wibosco `Post2ToPost3MigrationPolicy`: a post's content moves into its first section,
    /// titled with the content's first four characters (as store 3 of the fixture shows).
    struct PostToSections: EntityMigrationPolicy {
        func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            let post = context.create(try context.defaultDestination(for: source))
            context.associate(source, with: post)
            guard let content = try source["content"].text else { return }
            let section = context.create(
                DestinationObject(
                    entity: "Section",
                    values: [
                        "title": .text(String(content.prefix(4)) + "..."), "body": .text(content), "index": .integer(0),
                    ]))
            context.relate(section, "post", to: .created(post))
        }
    }

    /// CoreDataPlus `V2to3MakerPolicy`: a car's maker name becomes one shared Maker object.
    struct MakerPolicy: EntityMigrationPolicy {
        func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            let car = context.create(try context.defaultDestination(for: source))
            context.associate(source, with: car)
            guard case .text(let name) = try source["maker"] else { return }
            let maker = context.findOrCreate(DestinationObject(entity: "Maker", values: ["name": .text(name)]), identifiedBy: ["name"])
            context.relate(car, "createdBy", to: .created(maker))
        }
    }

    /// BookMigration `MHWBookToBookPolicy`, which checks the mapping's `modelVersion` user info:
    /// for 2, the author's name becomes a shared Author and the one user joins `users`; for 3, the
    /// file URL moves into a new File object.
    struct BookPolicy: EntityMigrationPolicy {
        func createDestinationInstances(for source: SourceObject, in context: InstanceCreationContext) throws {
            let book = context.create(try context.defaultDestination(for: source))
            context.associate(source, with: book)
            switch context.mapping.userInfo["modelVersion"] {
            case "2":
                if case .text(let name) = try source["authorName"] {
                    let author = context.findOrCreate(DestinationObject(entity: "Author", values: ["name": .text(name)]), identifiedBy: ["name"])
                    context.relate(book, "authors", to: .created(author))
                }
                if let user = try source["user"].int64 {
                    context.relate(book, "users", to: .migrated(sourceKey: user, entityMapping: "UserToUser"))
                }
            case "3":
                if case .blob(let url) = try source["fileURL"] {
                    let file = context.create(DestinationObject(entity: "File", values: ["fileURL": .blob(url)]))
                    context.relate(file, "book", to: .created(book))
                }
            default:
                break
            }
        }
    }

    static var registry: PolicyRegistry {
        var registry = PolicyRegistry.builtIn
        registry.register(PostToSections(), as: "Post2ToPost3MigrationPolicy")
        registry.register(MakerPolicy(), as: "V2to3MakerPolicy")
        registry.register(BookPolicy(), as: "MHWBookToBookPolicy")
        return registry
    }
}
