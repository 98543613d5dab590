import Foundation
import TernModel
import TernStore
import TernMapping
import TernSQLite

/// Data an inferred step throws away: a source entity no destination entity comes from, an
/// attribute or to-one relationship of a mapped entity no destination property reads. Removing
/// a property from a model is how one drops it in Core Data too, but a user should see what it
/// costs, in values, before and after (`tern plan`, the summary) and may refuse it
/// (`--no-data-loss`).
///
/// Links are data too: a to-many no destination relationship reads loses its join table's
/// links, and a to-many read into a to-one keeps one link per object and loses the others.
///
/// Only inferred steps: a mapping model someone wrote says what it leaves out.
public struct DroppedData: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The source entity the dropped data belongs to.
    public var entity: String
    /// The attribute or relationship; nil when the whole entity is dropped.
    public var property: String?
    /// Non-NULL values (objects, for an entity; links, for a relationship's links) in the step's
    /// input store; nil when not counted.
    public var values: Int?
    /// What is lost of a relationship's links; nil for values, objects and to-ones.
    public var links: LostLinks?
    /// For `LostLinks.between`: the source entities at the other end of the links lost.
    public var targets: [String]?
    /// Whether `entity` names a table outside the model's layout (Core Data's persistent
    /// history, an app's own table) whose rows a copied step does not carry; `values` counts them.
    public var outsideModel: Bool?
    /// Whether `entity` is abstract in the new version: its own objects cannot stay (Core Data
    /// holds no object of an abstract entity); its subentities' do.
    public var madeAbstract: Bool?
    /// Whether `entity` is in both versions yet no entity mapping of the step's mapping model
    /// reads it: a mapping someone wrote that leaves an entity out drops its objects.
    public var leftOutByMapping: Bool?
    /// The policy (or "the manager hook") that created `values` objects of `entity` in
    /// `entityMapping` without associating them with a source object or linking them: the
    /// mapping's relationship mappings cannot reach them.
    public var createdUnassociatedBy: String?
    /// The entity mapping of `createdUnassociatedBy`.
    public var entityMapping: String?
    /// The policy that associated `values` selected source objects of `entity` with no
    /// destination object in `entityMapping`; `sourceKeys` names the first few.
    public var neverAssociatedBy: String?
    /// The first source keys of `neverAssociatedBy`'s objects.
    public var sourceKeys: [Int64]?
    /// The kind of the app's own schema object named `entity` (a view, trigger or index) that a
    /// copied step cannot make again over the new tables; `reason` says why.
    public var schemaObject: String?
    /// Why `schemaObject` does not hold over the new tables, in SQLite's words.
    public var reason: String?
    /// The entity mappings reading `entity`, every one with a filter: the objects none of their
    /// filters selects are not migrated, and `values` counts them.
    public var unselectedBy: [String]?

    /// Which of a to-many relationship's links a step loses.
    public enum LostLinks: String, Sendable, Codable {
        /// All of them: no destination relationship reads them.
        case all
        /// All but one per object: the destination relationship is a to-one.
        case beyondFirst
        /// All but one per destination object: the destination relationship is a to-many with no
        /// inverse, kept as a key in each destination's row (one owner each).
        case beyondFirstOwner
        /// None: their order, kept in the source, is lost (unordered in the new version).
        case order
        /// All but one per object on either side: both sides of a many-to-many become to-ones.
        case oneToOne
        /// Those between this entity's objects and `targets`' objects: neither side's
        /// relationship in the new version reaches the other's new entity (a relationship moved
        /// to a subentity, or its destination narrowed).
        case between
    }

    /// Dropped data of an entity, or of one of its properties.
    public init(entity: String, property: String? = nil, values: Int? = nil, links: LostLinks? = nil, targets: [String]? = nil, outsideModel: Bool? = nil) {
        self.targets = targets
        self.entity = entity
        self.property = property
        self.values = values
        self.links = links
        self.outsideModel = outsideModel
    }

    public var description: String {
        let what = property.map { "\(entity).\($0)" } ?? "entity \(entity)"
        let plural = { (count: Int, noun: String) in "\(count) \(noun)\(count == 1 ? "" : "s")" }
        if let policy = createdUnassociatedBy {
            return "entity \(entity): \(plural(values ?? 0, "object")) created by \(policy) in entity mapping \(entityMapping ?? "?") without a source object "
                + "(context.associate) or a link of its own (context.relate): the mapping's relationship mappings do not reach them, so they have none of those links"
        }
        if let policy = neverAssociatedBy {
            return "entity \(entity): \(plural(values ?? 0, "source object")) \(policy) associated with no destination object in entity mapping "
                + "\(entityMapping ?? "?") (context.associate; first: \((sourceKeys ?? []).map(String.init).joined(separator: ", "))): "
                + "nothing the mapping's relationships reach through them is linked"
        }
        if let type = schemaObject {
            return "the store's \(type) \(entity) (it would not hold over the new version's tables: \(reason ?? "?"); a copied step makes again those that do)"
        }
        if let mappings = unselectedBy {
            return "\(what): " + (values.map { plural($0, "object") + " " } ?? "the objects ")
                + "no entity mapping selects (the filter\(mappings.count == 1 ? "" : "s") of \(mappings.joined(separator: ", ")) leave\(mappings.count == 1 ? "s" : "") them out)"
        }
        if leftOutByMapping == true {
            return "\(what): " + (values.map { plural($0, "object") + " " } ?? "its objects ")
                + "(in both versions, but no entity mapping of the mapping model reads it)"
        }
        if madeAbstract == true {
            return "\(what): " + (values.map { plural($0, "object") + " " } ?? "its own objects ")
                + "(abstract in the new version: Core Data keeps no object of an abstract entity)"
        }
        if outsideModel == true, let property {
            return "table \(entity), column \(property): \(plural(values ?? 0, "non-NULL value")) (outside the model's columns: no step carries it)"
        }
        if outsideModel == true { return "table \(entity): \(plural(values ?? 0, "row")) (outside the model's tables: a copied step does not carry it)" }
        if links == .between {
            let between =
                "between \(entity) and \((targets ?? []).joined(separator: ", ")) objects (no relationship of the new version joins their new entities)"
            return "\(what): " + (values.map { plural($0, "link") } ?? "the links") + " " + between
        }
        if links == .oneToOne {
            return "\(what): " + (values.map { "at least \(plural($0, "link")) lost: " } ?? "")
                + "at most one link per object on either side stays (a one-to-one in the new version)"
        }
        if links == .beyondFirstOwner {
            return "\(what): " + (values.map { plural($0, "link") } ?? "the links")
                + " beyond the first owner of each object (a to-many with no inverse, which Core Data keeps as one owner per object)"
        }
        if links == .order {
            return "\(what): the order of " + (values.map { plural($0, "link") } ?? "its links") + " (unordered in the new version)"
        }
        switch (values, links) {
        case (nil, .beyondFirst?): return "\(what): the links beyond the first of each object (a to-one in the new version)"
        case (let values?, .beyondFirst?): return "\(what): \(plural(values, "link")) beyond the first of each object (a to-one in the new version)"
        case (nil, _): return "\(what) (not in the new version)"
        case (let values?, .all?), (let values?, .between?), (let values?, .order?), (let values?, .oneToOne?), (let values?, .beyondFirstOwner?):
            return "\(what): \(plural(values, "link")) (not in the new version)"
        case (let values?, nil): return "\(what): \(plural(values, property == nil ? "object" : "non-NULL value")) (not in the new version)"
        }
    }
}

package enum DataLoss {
    /// A mapping model someone wrote is taken at its word, but for one thing it cannot mean: an
    /// entity of both versions (by name or renaming identifier) that none of its entity mappings
    /// reads, in any pass, loses every object.
    static func leftOut(by step: MigrationStep) -> [DroppedData] {
        let mappings = step.passes.flatMap { $0.entities.map(\.mapping) }
        let read = Set(mappings.compactMap(\.sourceEntity))
        let leftOut = step.source.entitiesInStoreOrder.filter { entity in
            !entity.isAbstract && !read.contains(entity.name)
                && step.destination.entities.contains { $0.name == entity.name || $0.renamingKey == entity.name }
        }.map { entity in
            var data = DroppedData(entity: entity.name, property: nil, values: nil)
            data.leftOutByMapping = true
            return data
        }
        // An entity every one of whose mappings filters: what no filter selects stays behind.
        let entries = step.passes.flatMap(\.entities)
        let filtered = step.source.entitiesInStoreOrder.compactMap { entity -> DroppedData? in
            let reading = entries.filter { $0.mapping.sourceEntity == entity.name }
            guard !reading.isEmpty, reading.allSatisfy({ $0.filter != nil }) else { return nil }
            var data = DroppedData(entity: entity.name)
            data.unselectedBy = reading.map(\.mapping.name)
            return data
        }
        return leftOut + filtered
    }

    /// What `step` drops, not counted yet.
    package static func dropped(by step: MigrationStep) -> [DroppedData] {
        guard step.isInferred else { return leftOut(by: step) }
        // A mapping without a destination (Core Data's "remove" mapping) drops its entity too.
        let mappings = step.passes.flatMap { $0.entities.map(\.mapping) }.filter { $0.destinationEntity != nil }
        let mapped = Set(mappings.compactMap(\.sourceEntity))
        var dropped = step.source.entitiesInStoreOrder.filter { !$0.isAbstract && !mapped.contains($0.name) }
            .map { entity in
                var data = DroppedData(entity: entity.name, property: nil, values: nil)
                if step.destination.entity(named: entity.name)?.isAbstract == true { data.madeAbstract = true }
                return data
            }
        // Source entity → the keys its mappings read.
        var read: [String: Set<String>] = [:]
        for mapping in mappings {
            if let entity = mapping.sourceEntity { read[entity, default: []].formUnion(readKeys(of: mapping)) }
        }
        // A link survives when either end of it is read: a to-one is lost only if its inverse is too.
        let isRead = { (entity: String, key: String) in
            ([entity] + step.source.descendants(of: entity).map(\.name)).contains { (read[$0] ?? []).contains(key) }
        }
        var linkSets: Set<Set<PropertyIdentity>> = []
        for entity in read.keys.sorted() {
            dropped += step.source.allAttributes(of: entity).filter { !$0.isTransient && !read[entity]!.contains($0.name) }
                .map { DroppedData(entity: entity, property: $0.name, values: nil) }
            for relationship in step.source.allRelationships(of: entity)
            where !relationship.isTransient && !read[entity]!.contains(relationship.name)
                && !(relationship.inverse.map { isRead(relationship.destination, $0) } ?? false)
            {
                // A to-many's links are held by its join table, or by its inverse's column (a
                // to-one of the other entity, reported there): each set of links named once.
                if relationship.isToMany, let inverse = relationship.inverse,
                    step.source.allRelationships(of: relationship.destination).first(where: { $0.name == inverse })?.isToMany == false
                {
                    continue
                }
                let owner = step.source.entityDeclaring(relationship: relationship.name, from: entity)
                let pair: Set = [
                    PropertyIdentity(entity: owner, property: relationship.name),
                    PropertyIdentity(entity: relationship.destination, property: relationship.inverse ?? ""),
                ]
                guard !relationship.isToMany || linkSets.insert(pair).inserted else { continue }
                dropped.append(
                    DroppedData(entity: relationship.isToMany ? owner : entity, property: relationship.name, links: relationship.isToMany ? .all : nil))
            }
        }
        dropped += linksNoSideCarries(
            step, mappings: mappings, read: read,
            reported: Set(dropped.compactMap { element in element.property.map { PropertyIdentity(entity: element.entity, property: $0) } }))
        // A to-many read into a to-one keeps one link of each object.
        var cut: Set<PropertyIdentity> = []
        for mapping in mappings {
            guard let sourceEntity = mapping.sourceEntity, let destinationEntity = mapping.destinationEntity else { continue }
            let destinationRelationships = step.destination.allRelationships(of: destinationEntity)
            for relationshipMapping in mapping.relationshipMappings {
                guard destinationRelationships.first(where: { $0.name == relationshipMapping.name })?.isToMany == false,
                    let key = relationshipMapping.valueExpression.flatMap({ readKeys(of: [$0]).first }),
                    let source = step.source.allRelationships(of: sourceEntity).first(where: { $0.name == key }), source.isToMany
                else { continue }
                let owner = step.source.entityDeclaring(relationship: source.name, from: sourceEntity)
                // Both sides of a many-to-many cut to to-ones: one report, of all its links (each
                // side's count of links beyond its first would count some twice).
                let inverse = source.inverse.flatMap { name in step.source.allRelationships(of: source.destination).first { $0.name == name } }
                let inverseCut =
                    inverse.map { inverse in
                        inverse.isToMany
                            && mappings.contains { other in
                                other.sourceEntity.map { step.source.lineage(of: $0).contains { $0.name == source.destination } } == true
                                    && other.relationshipMappings.contains { mapped in
                                        mapped.valueExpression.map { readKeys(of: [$0]).contains(inverse.name) } == true
                                            && other.destinationEntity.flatMap { step.destination.allRelationships(of: $0).first { $0.name == mapped.name } }?
                                                .isToMany == false
                                    }
                            }
                    } ?? false
                let inverseKey = inverse.map {
                    PropertyIdentity(entity: step.source.entityDeclaring(relationship: $0.name, from: source.destination), property: $0.name)
                }
                guard cut.insert(PropertyIdentity(entity: owner, property: source.name)).inserted, !(inverseKey.map(cut.contains) ?? false) else {
                    continue
                }
                dropped.append(DroppedData(entity: owner, property: source.name, links: inverseCut ? .oneToOne : .beyondFirst))
            }
        }
        // A to-many with no inverse keeps one owner per destination object: read from a
        // relationship whose objects have several, it keeps the first.
        var owned: Set<PropertyIdentity> = []
        let sourceLayout = step.sourceLayout
        for mapping in mappings {
            guard let sourceEntity = mapping.sourceEntity, let destinationEntity = mapping.destinationEntity else { continue }
            for relationshipMapping in mapping.relationshipMappings {
                guard let into = step.destination.allRelationships(of: destinationEntity).first(where: { $0.name == relationshipMapping.name }),
                    into.isToMany, into.inverse == nil, !into.isTransient,
                    let key = relationshipMapping.valueExpression.flatMap({ readKeys(of: [$0]).first }),
                    let source = step.source.allRelationships(of: sourceEntity).first(where: { $0.name == key }),
                    sourceLayout.reachesSharedObjects(source)
                else { continue }
                let owner = step.source.entityDeclaring(relationship: source.name, from: sourceEntity)
                if owned.insert(PropertyIdentity(entity: owner, property: source.name)).inserted {
                    dropped.append(DroppedData(entity: owner, property: source.name, links: .beyondFirstOwner))
                }
            }
        }
        // An ordered to-many read into an unordered one loses its order.
        var unordered: Set<PropertyIdentity> = []
        for mapping in mappings {
            guard let sourceEntity = mapping.sourceEntity, let destinationEntity = mapping.destinationEntity else { continue }
            for relationshipMapping in mapping.relationshipMappings {
                guard let into = step.destination.allRelationships(of: destinationEntity).first(where: { $0.name == relationshipMapping.name }), into.isToMany,
                    !into.isOrdered,
                    let key = relationshipMapping.valueExpression.flatMap({ readKeys(of: [$0]).first }),
                    let source = step.source.allRelationships(of: sourceEntity).first(where: { $0.name == key }), source.isToMany, source.isOrdered
                else { continue }
                let owner = step.source.entityDeclaring(relationship: source.name, from: sourceEntity)
                if unordered.insert(PropertyIdentity(entity: owner, property: source.name)).inserted {
                    dropped.append(DroppedData(entity: owner, property: source.name, links: .order))
                }
            }
        }
        return dropped
    }

    /// Links a relationship still read loses all the same: a link between an object of `E` and
    /// one of `T` survives only if `E`'s mapping reads the relationship into one whose
    /// destination is `T`'s new entity (or an ancestor of it), or `T`'s mapping does so with the
    /// inverse. Moving a relationship down to one subentity, or narrowing its destination, keeps
    /// the others' links on neither side. Relationships already reported whole are left out.
    private static func linksNoSideCarries(_ step: MigrationStep, mappings: [EntityMapping], read: [String: Set<String>], reported: Set<PropertyIdentity>)
        -> [DroppedData]
    {
        // A source entity may be mapped more than once (an old name reused by a new entity).
        let mappingsOf = Dictionary(grouping: mappings.compactMap { mapping in mapping.sourceEntity.map { ($0, mapping) } }, by: \.0).mapValues { $0.map(\.1) }
        // Whether a mapping of `owner` reads `relationship` into one reaching the new entity of a
        // mapping of `target` — and, where its expression names the entity mappings whose
        // objects it takes, that mapping is one of them.
        func carries(_ owner: String, _ relationship: String, to target: String) -> Bool {
            for mapping in mappingsOf[owner] ?? [] {
                guard let destination = mapping.destinationEntity else { continue }
                for into in mapping.relationshipMappings {
                    guard let expression = into.valueExpression, readKeys(of: [expression]).contains(relationship),
                        let reaches = step.destination.allRelationships(of: destination).first(where: { $0.name == into.name })?.destination
                    else { continue }
                    let named = namedEntityMapping(in: expression)
                    let reached = (mappingsOf[target] ?? []).contains { targetMapping in
                        guard let entity = targetMapping.destinationEntity, named.map({ $0 == targetMapping.name }) ?? true else { return false }
                        return step.destination.lineage(of: entity).contains { $0.name == reaches }
                    }
                    if reached { return true }
                }
            }
            return false
        }
        /// Links of a relationship to the objects of one entity; the same links seen from the
        /// other side are the pair's other element.
        struct Reach: Hashable {
            let relationship: PropertyIdentity
            let target: String
        }
        var seen: Set<Set<Reach>> = []
        var lost: [DroppedData] = []
        for owner in step.source.entitiesInStoreOrder where !owner.isAbstract && mappingsOf[owner.name] != nil {
            for relationship in step.source.allRelationships(of: owner.name) where !relationship.isTransient {
                // Reported whole already, from this side or the other (named by either entity).
                let names =
                    [
                        PropertyIdentity(entity: owner.name, property: relationship.name),
                        PropertyIdentity(entity: step.source.entityDeclaring(relationship: relationship.name, from: owner.name), property: relationship.name),
                    ]
                    + (relationship.inverse.map {
                        [
                            PropertyIdentity(entity: relationship.destination, property: $0),
                            PropertyIdentity(entity: step.source.entityDeclaring(relationship: $0, from: relationship.destination), property: $0),
                        ]
                    } ?? [])
                guard !names.contains(where: reported.contains) else { continue }
                let targets = ([step.source.entity(named: relationship.destination)].compactMap { $0 } + step.source.descendants(of: relationship.destination))
                    .filter { !$0.isAbstract && mappingsOf[$0.name] != nil }.map(\.name)
                let missed = targets.filter { target in
                    !carries(owner.name, relationship.name, to: target) && !(relationship.inverse.map { carries(target, $0, to: owner.name) } ?? false)
                }.filter { target in
                    // The same links seen from the other side are named once.
                    seen.insert([
                        Reach(relationship: PropertyIdentity(entity: owner.name, property: relationship.name), target: target),
                        Reach(relationship: PropertyIdentity(entity: target, property: relationship.inverse ?? ""), target: owner.name),
                    ]).inserted
                }
                if !missed.isEmpty { lost.append(DroppedData(entity: owner.name, property: relationship.name, links: .between, targets: missed)) }
            }
        }
        return lost
    }

    /// The entity mapping a relationship's expression takes its objects from, when it names one
    /// (`FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "NAME", …)`).
    private static func namedEntityMapping(in expression: String) -> String? {
        guard let selector = expression.range(of: "destinationInstancesForEntityMappingNamed:sourceInstances:\"") else { return nil }
        let rest = expression[selector.upperBound...]
        guard let open = rest.firstIndex(of: "\""), let close = rest[rest.index(after: open)...].firstIndex(of: "\"") else { return nil }
        return String(rest[rest.index(after: open)..<close])
    }

    /// `dropped` with each element's non-NULL values counted in `store`, the step's input;
    /// elements that hold nothing are left out.
    package static func count(_ dropped: [DroppedData], of step: MigrationStep, in store: String) throws -> [DroppedData] {
        guard !dropped.isEmpty else { return [] }
        let layout = step.sourceLayout
        let source = try ReadOnlyStore(path: store)
        let connection = try source.connect()
        defer { withExtendedLifetime(source) {} }  // its snapshot lives as long as it does
        return try dropped.compactMap { element in
            guard let entity = layout.entities[element.entity] else { return nil }
            if element.links == .between, let property = element.property {
                guard let count = try countLinksBetween(property, of: element.entity, and: element.targets ?? [], layout: layout, connection: connection),
                    count > 0
                else { return nil }
                var counted = element
                counted.values = count
                return counted
            }
            if let names = element.unselectedBy {
                guard let count = try countUnselected(element.entity, by: names, of: step, layout: layout, connection: connection), count > 0 else {
                    return nil
                }
                var counted = element
                counted.values = count
                return counted
            }
            if let lost = element.links, let property = element.property {
                guard let count = try countLinks(lost, of: property, of: element.entity, layout: layout, connection: connection), count > 0 else { return nil }
                return DroppedData(entity: element.entity, property: property, values: count, links: lost)
            }
            var condition = "Z_ENT = \(entity.number)"
            if let property = element.property {
                guard let column = entity.attributeColumns[property] ?? entity.foreignKeyColumns[property] else { return nil }
                condition += " AND \(quoteIdentifier(column)) IS NOT NULL"
            }
            let values = try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(entity.table)) WHERE \(condition)")?.int64 ?? 0
            var counted = element
            counted.values = Int(values)
            return values > 0 ? counted : nil
        }
    }

    /// The objects of `entity` (its own, not its subentities': each entity has its mappings)
    /// that none of the filters of the entity mappings `names` selects — a filter that is NULL
    /// for an object does not select it.
    private static func countUnselected(_ entity: String, by names: [String], of step: MigrationStep, layout: StoreLayout, connection: Connection) throws
        -> Int?
    {
        let filters = step.passes.flatMap(\.entities).filter { names.contains($0.mapping.name) }.compactMap(\.filter)
        guard let table = layout.entities[entity], !filters.isEmpty else { return nil }
        try SQLCompiler.prepare(connection)
        var compiler = SQLCompiler(layout: layout)
        let selected = filters.map { SQLFragment("(") + compiler.sql($0, alias: "s") + SQLFragment(")") }
            .reduce(nil as SQLFragment?) { joined, next in joined.map { $0 + SQLFragment(" OR ") + next } ?? next }!
        let query =
            SQLFragment("SELECT count(*) FROM \(quoteIdentifier(table.table)) s WHERE s.\"Z_ENT\" = \(table.number) AND NOT coalesce(")
            + selected + SQLFragment(", 0)")
        let statement = try connection.prepare(query.sql)
        try statement.bind(query.arguments)
        var rows = statement.rows()
        return Int(try rows.next()?.int64(at: 0) ?? 0)
    }

    /// The tables of `store` outside the layout of `step`'s source, with the rows each holds:
    /// a step that copies the store (not one applied in place) leaves them behind — Core Data's
    /// persistent history (`ACHANGE`, `ATRANSACTION`, …), an app's own tables. Any step, inferred or
    /// not: no mapping model speaks of them.
    package static func tablesOutsideModel(of step: MigrationStep, in store: String) throws -> [DroppedData] {
        let layout = Set(step.sourceLayout.tables.map { $0.name.lowercased() })

        // Held while the connection reads: a WAL store without its -shm is read from a snapshot
        // that goes with it.
        let source = try ReadOnlyStore(path: store)
        let connection = try source.connect()
        defer { withExtendedLifetime(source) {} }
        // Tern's own work tables (associations kept for auditing) are not the store's data.
        let isOutside = { (table: String) in
            !layout.contains(table.lowercased()) && !LayoutSignature.bookkeepingTables.contains(table.uppercased()) && !table.uppercased().hasPrefix("TERN_")
        }
        let tables = try connection.tableColumns()
        let outsideTables = try tables.map(\.table).filter(isOutside).compactMap { table in
            let rows = Int(try connection.scalar("SELECT count(*) FROM \(quoteIdentifier(table))")?.int64 ?? 0)
            return rows > 0 ? DroppedData(entity: table, values: rows, outsideModel: true) : nil
        }
        return outsideTables
            + (try columnsOutsideModel(of: step.source, tables: tables).compactMap { table, column in
                let values = Int(try connection.scalar("SELECT count(\(quoteIdentifier(column))) FROM \(quoteIdentifier(table))")?.int64 ?? 0)
                return values > 0 ? DroppedData(entity: table, property: column, values: values, outsideModel: true) : nil
            })
    }

    /// The columns of the model's own tables that its layout does not have (an app's own): no
    /// step carries them, a copy nor a table rebuilt in place.
    static func columnsOutsideModel(of version: ObjectModel, tables: [(table: String, columns: [String])]) -> [(table: String, column: String)] {
        let layout = Dictionary(
            StoreLayout(model: version).tables.map { ($0.name.lowercased(), Set($0.columns.map { $0.name.lowercased() })) },
            uniquingKeysWith: { first, _ in first })
        return tables.flatMap { table, columns in
            guard let known = layout[table.lowercased()] else { return [(table: String, column: String)]() }
            return columns.filter { !known.contains($0.lowercased()) }.map { (table, $0) }
        }
    }

    /// The links of `entity`'s objects through `relationship` to objects of `targets`.
    private static func countLinksBetween(_ relationship: String, of entity: String, and targets: [String], layout: StoreLayout, connection: Connection) throws
        -> Int?
    {
        guard let own = layout.entities[entity], let first = targets.first, let other = layout.entities[first] else { return nil }
        let numbers = targets.compactMap { layout.entities[$0]?.number }.map(String.init).joined(separator: ", ")
        let (o, t) = (quoteIdentifier(own.table), quoteIdentifier(other.table))
        let query: String
        switch layout.storage(ofRelationship: relationship, of: entity) {
        case .joinTable(let table, let ownColumn, let targetColumn, _)?:
            query =
                "SELECT count(*) FROM \(quoteIdentifier(table)) j JOIN \(o) o ON o.Z_PK = j.\(quoteIdentifier(ownColumn)) AND o.Z_ENT = \(own.number) "
                + "JOIN \(t) t ON t.Z_PK = j.\(quoteIdentifier(targetColumn)) AND t.Z_ENT IN (\(numbers))"
        case .foreignKey(let column)?:
            query = "SELECT count(*) FROM \(o) o JOIN \(t) t ON t.Z_PK = o.\(quoteIdentifier(column)) AND t.Z_ENT IN (\(numbers)) WHERE o.Z_ENT = \(own.number)"
        case .inverseForeignKey(_, let column, _)?, .hiddenKey(_, let column, _)?:
            query = "SELECT count(*) FROM \(t) t JOIN \(o) o ON o.Z_PK = t.\(quoteIdentifier(column)) AND o.Z_ENT = \(own.number) WHERE t.Z_ENT IN (\(numbers))"
        case nil:
            return nil
        }
        return (try connection.scalar(query)?.int64).map(Int.init)
    }

    /// All the links of a to-many relationship, or those beyond the first of each object.
    private static func countLinks(
        _ lost: DroppedData.LostLinks, of relationship: String, of entity: String, layout: StoreLayout,
        connection: Connection
    ) throws -> Int? {
        let storage = layout.storage(ofRelationship: relationship, of: entity)
        if lost == .beyondFirstOwner {
            // Links past the first that reach each object: the keys repeated.
            let (table, target): (String, String)
            switch storage {
            case .foreignKey(let column)?: (table, target) = (layout.entities[entity]!.table, column)
            case .joinTable(let name, _, let destination, _)?: (table, target) = (name, destination)
            default: return nil
            }
            let t = quoteIdentifier(target)
            return (try connection.scalar("SELECT count(\(t)) - count(DISTINCT \(t)) FROM \(quoteIdentifier(table))")?.int64).map(Int.init)
        }
        let (table, owner, orderColumn): (String, String, String?)
        switch storage {
        case .joinTable(let name, let own, _, let order)?: (table, owner, orderColumn) = (name, own, order)
        // One-to-many links are counted as the inverse to-one's values; a hidden key's here.
        case .hiddenKey(let name, let column, let order)?: (table, owner, orderColumn) = (name, column, order)
        case .inverseForeignKey(let name, let column, let order)? where lost != .all: (table, owner, orderColumn) = (name, column, order)
        default: return nil  // a to-one's column: counted as its values
        }
        if lost == .order, orderColumn == nil { return nil }
        let (t, o) = (quoteIdentifier(table), quoteIdentifier(owner))
        let query: String
        switch lost {
        case .all: query = "SELECT count(\(o)) FROM \(t)"
        case .oneToOne:
            // No more links can stay than there are objects on the side with fewer.
            guard case .joinTable(_, _, let other, _)? = layout.storage(ofRelationship: relationship, of: entity) else { return nil }
            query = "SELECT count(*) - min(count(DISTINCT \(o)), count(DISTINCT \(quoteIdentifier(other)))) FROM \(t)"
        case .order: query = "SELECT count(\(quoteIdentifier(orderColumn ?? owner))) FROM \(t)"
        case .beyondFirst, .between, .beyondFirstOwner: query = "SELECT count(\(o)) - count(DISTINCT \(o)) FROM \(t)"
        }
        return (try connection.scalar(query)?.int64).map(Int.init)
    }

    /// The source keys a mapping's value expressions read (`$source.KEY`, first key of a path).
    private static func readKeys(of mapping: EntityMapping) -> Set<String> {
        readKeys(of: (mapping.attributeMappings + mapping.relationshipMappings).compactMap(\.valueExpression))
    }

    private static func readKeys(of expressions: [String]) -> Set<String> {
        var keys: Set<String> = []
        for expression in expressions {
            var rest = Substring(expression)
            while let range = rest.range(of: "$source.") {
                rest = rest[range.upperBound...]
                keys.insert(String(rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" }))
            }
        }
        return keys
    }
}
