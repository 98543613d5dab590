import TernModel

extension ObjectModel {
    /// Core Data's entity numbers (`Z_ENT`): depth-first pre-order over the inheritance trees,
    /// roots and siblings in name order, starting at 1 (the rule "`Z_ENT` depth-first" of
    /// `Sources/Tern/Tern.docc/VersionHashesAndStoreLayout.md`). A store's numbering, so the
    /// store layer owns it.
    public var entityNumbers: [String: Int] {
        var numbers: [String: Int] = [:]
        func visit(_ entity: Entity) {
            guard numbers[entity.name] == nil else { return }  // an inheritance cycle
            numbers[entity.name] = numbers.count + 1
            children(of: entity.name).forEach(visit)
        }
        entities.filter { $0.parent == nil }.forEach(visit)
        return numbers
    }

    /// Entities in `Z_ENT` order.
    public var entitiesInStoreOrder: [Entity] {
        let numbers = entityNumbers
        return entities.sorted { (numbers[$0.name] ?? 0) < (numbers[$1.name] ?? 0) }
    }
}
