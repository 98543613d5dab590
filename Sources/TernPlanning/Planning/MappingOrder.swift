import TernModel
import TernStore
import TernMapping
/// The order entity mappings of one pass run in: relationship targets first where possible.
///
/// A to-one foreign key can be written in the same `INSERT … SELECT` as its object when the
/// objects it points at were created already (or keep their keys), so a mapping moves after the
/// mappings its to-one relationships name. Among mappings with no such constraint, and in a
/// cycle, the mapping file's order stands. A pass with any mapping that runs in Swift keeps the
/// file's order exactly: policies may depend on what earlier mappings did, as in Core Data.
enum MappingOrder {
    /// The pass's entity mappings that copy objects (they have a source and a destination), in
    /// the order they run.
    static func copying(_ pass: ValidatedMapping, destination: ObjectModel, runsInSwift: (EntityMapping) -> Bool) -> [ValidatedMapping.Entity] {
        let entities = pass.entities.filter { $0.mapping.sourceEntity != nil && $0.mapping.destinationEntity != nil }
        guard !entities.contains(where: { runsInSwift($0.mapping) }) else { return entities }
        let names = Set(entities.map(\.mapping.name))
        let dependencies: [[String]] = entities.map { entity in
            guard let destinationEntity = entity.mapping.destinationEntity else { return [] }
            let toOnes = Set(destination.allRelationships(of: destinationEntity).filter { !$0.isToMany }.map(\.name))
            return entity.relationships.compactMap { name, source in
                guard toOnes.contains(name), case .entityMapping(let target, _) = source, target != entity.mapping.name, names.contains(target) else {
                    return nil
                }
                return target
            }
        }
        var placed: Set<String> = []
        var remaining = Array(entities.indices)
        var order: [ValidatedMapping.Entity] = []
        while !remaining.isEmpty {
            // The first mapping, in file order, whose targets are all placed; in a cycle, the first.
            let position = remaining.firstIndex { dependencies[$0].allSatisfy(placed.contains) } ?? 0
            let index = remaining.remove(at: position)
            order.append(entities[index])
            placed.insert(entities[index].mapping.name)
        }
        return order
    }
}
