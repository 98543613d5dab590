extension ObjectModel {
    /// The version with each to-one whose inverse names another relationship as its own inverse
    /// kept on its own: Xcode compiles such a model with a warning and Core Data loads it (a
    /// real app: `Image.artist`'s inverse is `Artist.thumbnail`, whose inverse is
    /// `Image.thumbnailOf`). A to-one is its own foreign key whatever its inverse, so it is
    /// stored and migrated as one with no inverse, and hashed with the inverse it names
    /// (`Relationship.unreciprocatedInverse`), as Core Data hashes it. A to-many's storage
    /// depends on its inverse, so one that is not reciprocated stays a problem (`problems()`).
    /// Returns the warnings to say, one per relationship.
    public func separatingUnreciprocatedInverses() -> (ObjectModel, [String]) {
        var entities = self.entities
        var warnings: [String] = []
        for (entityIndex, entity) in self.entities.enumerated() {
            for (index, relationship) in entity.relationships.enumerated() where !relationship.isToMany {
                guard let name = relationship.inverse,
                    let inverse = allRelationships(of: relationship.destination).first(where: { $0.name == name }),
                    let back = inverse.inverse, back != relationship.name
                else { continue }
                entities[entityIndex].relationships[index].inverse = nil
                entities[entityIndex].relationships[index].unreciprocatedInverse = name
                warnings.append(
                    "entity \(entity.name), relationship \(relationship.name): its inverse \(relationship.destination).\(name) names \(back) as its own; "
                        + "loaded as Xcode compiles it and Core Data loads it: a to-one of its own, hashed with the inverse it names")
            }
        }
        guard !warnings.isEmpty else { return (self, []) }
        return (ObjectModel(versionName: versionName, versionIdentifiers: versionIdentifiers, entities: entities), warnings)
    }
}
