import TernModel
/// Derived attributes: the triggers Core Data keeps them current with, and the values they hold.
///
/// Evidence: CoreDataPlus's `SampleModel2_V2.sqlite`, whose `Book.pagesCount` is `pages.@count`
/// over a one-to-many: four triggers on the pages' table (a page inserted, moved in, moved out,
/// deleted) and one on the books' (a book inserted), each calling back into Core Data. Other
/// derivations (key paths, sums, `now()`) have no store in the corpora: Tern makes no triggers
/// for them and names them in `untriggeredDerivations`.
extension StoreLayout {
    mutating func layOutDerivedAttributes() {
        for entity in model.entities {
            for attribute in entity.attributes.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
                guard let derivation = attribute.derivation else { continue }
                guard case .count(let relationship) = derivation,
                    case let (parameterTable, key, _)? = storage(ofRelationship: relationship, of: entity.name)?.keyInDestinations,
                    let own = entities[entity.name], let column = own.attributeColumns[attribute.name]
                else {
                    untriggeredDerivations.append("\(entity.name).\(attribute.name) (\(derivation))")
                    continue
                }
                triggeredDerivations.insert(PropertyIdentity(entity: entity.name, property: attribute.name))
                countTriggers(entity: entity.name, attribute: attribute.name, table: own.table, column: column, parameterTable: parameterTable, key: key)
                let holders = model.descendants(of: entity.name).compactMap { entities[$0.name]?.number }.map(String.init).joined(separator: ", ")
                derivedValueStatements.append(
                    "UPDATE \(own.table) SET \(column) = (SELECT count(*) FROM \(parameterTable) x WHERE x.\(key) = \(own.table).Z_PK) WHERE Z_ENT IN (\(holders))"
                )
            }
        }
    }

    /// Whether attribute `name` of `entity` (its own or inherited) is derived and kept by triggers:
    /// its values are its derivation's, whatever a mapping says.
    public func isKeptByTriggers(_ name: String, of entity: String) -> Bool {
        model.lineage(of: entity).contains { triggeredDerivations.contains(PropertyIdentity(entity: $0.name, property: name)) }
    }

    /// Core Data's five triggers for `attribute = relationship.@count`, where the relationship's
    /// destinations (`parameterTable`) hold the owner's key in `key`. Written as Core Data writes
    /// them, unquoted, so the store's schema is Core Data's statement for statement.
    private mutating func countTriggers(entity: String, attribute: String, table: String, column: String, parameterTable: String, key: String) {
        func name(_ on: String, _ role: String) -> String {
            CoreDataNames.derivedAttributeTrigger(table: on, entity: entity, attribute: attribute, role: role)
        }
        func notify(_ function: String, _ row: String) -> String {
            "SELECT \(function)('\(table)', Z_ENT, Z_PK, '\(attribute)', \(column)) FROM \(table) WHERE Z_PK = \(row);"
        }
        let changed = "NSCoreDataDATriggerUpdatedAffectedObjectValue"
        let parameter = [
            ("PARAMETER_INSERT", "AFTER INSERT", "NEW", "IFNULL(\(column), 0) + 1"),
            ("PARAMETER_UPDATE_INCREMENT", "AFTER UPDATE OF \(key)", "NEW", "\(column) + 1"),
            ("PARAMETER_UPDATE_DECREMENT", "AFTER UPDATE OF \(key)", "OLD", "\(column) - 1"),
            ("PARAMETER_DELETE", "AFTER DELETE", "OLD", "\(column) - 1"),
        ]
        for (role, event, row, value) in parameter {
            triggers.append(
                SchemaStatement(
                    name: name(parameterTable, role), table: parameterTable,
                    sql: "CREATE TRIGGER \(name(parameterTable, role)) \(event) ON \(parameterTable) FOR EACH ROW WHEN (\(row).\(key) NOT NULL) BEGIN "
                        + "UPDATE \(table) SET \(column) = \(value) WHERE Z_PK = \(row).\(key); \(notify(changed, "\(row).\(key)")) END"))
        }
        triggers.append(
            SchemaStatement(
                name: name(table, "SOURCE_INSERT"), table: table,
                sql: "CREATE TRIGGER \(name(table, "SOURCE_INSERT")) AFTER INSERT ON \(table) FOR EACH ROW BEGIN "
                    + "UPDATE \(table) SET \(column) = (SELECT IFNULL(COUNT(\(key)), 0) FROM \(parameterTable) WHERE \(key) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK; "
                    + "\(notify("NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", "NEW.Z_PK")) END"))
    }
}
