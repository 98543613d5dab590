import Foundation
import Tern
import TernExamples
import TernSQLite

/// A store's content without its keys: every object as its entity and attribute values, and every
/// relationship as (owner, target) renderings, so two stores whose objects got different `Z_PK`s
/// compare equal exactly when they hold the same objects linked the same way.
enum StoreContent {
    /// Objects of one entity (exactly that entity), each with an id and its values by attribute.
    typealias Objects = [String: [(id: Int64, values: [String: SQLiteValue])]]

    /// Lines per entity ("objects") and per relationship, each list sorted (ordered relationships
    /// keep their order inside a line).
    ///
    /// With `appValues`, a value that may be stored outside the store is compared as the app
    /// reads it (`CoreDataBinary`), not in its stored form.
    static func dump(_ path: String, model: ObjectModel, appValues: Bool = false) throws -> [String: [String]] {
        let connection = try Connection(path: path, configuration: .init(mode: .readOnly))
        let layout = StoreLayout(model: model)
        let reader = ObjectReader(connection: connection, layout: layout)
        var objects: Objects = [:]
        var stored: [String: [StoredObject]] = [:]
        for entity in model.entities {
            stored[entity.name] = try reader.objects(of: entity.name)
            objects[entity.name] = try stored[entity.name]!.map { object in
                (object.key, appValues ? try CoreDataBinary.appValues(object.values, of: object.entity, in: model, store: path) : object.values)
            }
        }
        // Ids are keys, unique per root table: qualify them by table so entities of one tree agree.
        return try render(model: model, objects: objects, table: { layout.entities[$0]!.table }) { entity, relationship, id in
            guard let relationship = model.allRelationships(of: entity).first(where: { $0.name == relationship }) else { return [] }
            if relationship.isToMany {
                return try reader.destinations(entity, relationship.name, owner: id)
            }
            let object = stored[entity]!.first { $0.key == id }
            return object?.values[relationship.name]?.int64.map { [$0] } ?? []
        }
    }

    /// Renders objects and links. `table` names the id space of an entity (its root table);
    /// `targets` gives the ids an object reaches through a relationship, in order.
    static func render(
        model: ObjectModel, objects: Objects, table: (String) -> String,
        targets: (_ entity: String, _ relationship: String, _ id: Int64) throws -> [Int64]
    ) rethrows -> [String: [String]] {
        var rendering: [String: [Int64: String]] = [:]  // id space → id → rendering
        for entity in model.entities {
            let attributes = model.allAttributes(of: entity.name).filter { !$0.isTransient }.map(\.name)
            for object in objects[entity.name] ?? [] {
                rendering[table(entity.name), default: [:]][object.id] =
                    "\(entity.name)(" + attributes.map { "\($0)=\(object.values[$0]?.sqlLiteral ?? "NULL")" }.joined(separator: ", ") + ")"
            }
        }
        func render(_ id: Int64, in entity: String) -> String {
            rendering[table(entity)]?[id] ?? "dangling \(entity) \(id)"
        }
        var content: [String: [String]] = [:]
        for entity in model.entities {
            let own = objects[entity.name] ?? []
            content["objects \(entity.name)"] = own.map { render($0.id, in: entity.name) }.sorted()
            for relationship in model.allRelationships(of: entity.name) where !relationship.isTransient {
                var lines: [String] = []
                for object in own {
                    var reached = try targets(entity.name, relationship.name, object.id).map { render($0, in: relationship.destination) }
                    guard !reached.isEmpty else { continue }
                    if relationship.isToMany {
                        if !relationship.isOrdered { reached.sort() }
                        lines.append("\(render(object.id, in: entity.name)) → [\(reached.joined(separator: "; "))]")
                    } else {
                        lines.append("\(render(object.id, in: entity.name)) → \(reached[0])")
                    }
                }
                content["\(entity.name).\(relationship.name)"] = lines.sorted()
            }
        }
        return content
    }
}

/// The test's own reading of Core Data's format for values that may be stored outside the store,
/// independent of the engine's: `0x01` and the bytes, or `0x02`, a file name and a NUL, the file
/// in `.NAME_SUPPORT/_EXTERNAL_DATA`; anything else is the bytes themselves.
enum CoreDataBinary {
    static func folder(ofStore store: String) -> String {
        let url = URL(fileURLWithPath: store)
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent)_SUPPORT/_EXTERNAL_DATA").path
    }

    struct MissingFile: Error, CustomStringConvertible {
        var path: String
        var description: String { "no external data file \(path)" }
    }

    /// A stored value as the app reads it.
    static func appValue(_ stored: SQLiteValue, folder: String) throws -> SQLiteValue {
        guard case .blob(let bytes) = stored else { return stored }
        switch bytes.first {
        case 0x02 where bytes.count == 38 && bytes[37] == 0:
            let path = folder + "/" + String(decoding: bytes[1..<37], as: UTF8.self)
            guard let contents = FileManager.default.contents(atPath: path) else { throw MissingFile(path: path) }
            return .blob([UInt8](contents))
        case 0x01: return .blob(Array(bytes.dropFirst()))
        default: return stored
        }
    }

    /// `values` of an object of `entity`, those of attributes that allow external storage read
    /// as the app reads them.
    static func appValues(_ values: [String: SQLiteValue], of entity: String, in model: ObjectModel, store: String) throws -> [String: SQLiteValue] {
        var values = values
        for attribute in model.allAttributes(of: entity) where attribute.allowsExternalStorage {
            if let value = values[attribute.name] { values[attribute.name] = try appValue(value, folder: folder(ofStore: store)) }
        }
        return values
    }
}

extension PolicyRegistry {
    /// The built-in registry, with every mapping sent through Swift when asked: the two paths a
    /// test runs each migration through.
    static func builtIn(inSwift: Bool) -> PolicyRegistry {
        inSwift ? PolicyRegistry.builtIn.sendingEveryMappingThroughSwift() : .builtIn
    }
}
