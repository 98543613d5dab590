import TernModel
import TernSQLite

/// Core Data's key counters, `Z_PRIMARYKEY`: one row per entity (`Z_ENT`, `Z_NAME`, `Z_SUPER`),
/// and on the row of each table's root entity the highest key handed out in that table (`Z_MAX`),
/// never handed out again. The one place the engine's SQL on that table is written: a step
/// raises a table's counter, reads a source's, adds an entity's row or renames one through it.
extension StoreLayout {
    /// SQL giving the highest key ever handed out in `table` of the store attached as `schema`:
    /// its largest key, or its `Z_MAX` when that is higher (objects since deleted).
    public func highestKeyHandedOut(in table: String, schema: String = "main") -> String {
        let prefix = "\(quoteIdentifier(schema))."
        return """
            SELECT max((SELECT coalesce(max(Z_PK), 0) FROM \(prefix)\(quoteIdentifier(table))),
                       (SELECT coalesce(max(Z_MAX), 0) FROM \(prefix)Z_PRIMARYKEY WHERE Z_SUPER = 0 AND Z_NAME = \(quoteLiteral(rootEntities[table] ?? ""))))
            """
    }

    /// SQL setting `table`'s counter to the highest key handed out: `handedOut`, or the table's
    /// largest key where that is higher (keys kept from the source).
    public func recordKeysHandedOut(_ handedOut: Int64, in table: String) -> String {
        "UPDATE Z_PRIMARYKEY SET Z_MAX = max(\(handedOut), (SELECT coalesce(max(Z_PK), 0) FROM \(quoteIdentifier(table)))) "
            + "WHERE Z_SUPER = 0 AND Z_NAME = \(quoteLiteral(rootEntities[table] ?? ""))"
    }

    /// SQL adding the counter row of `entity` (none of its keys handed out yet), numbered as this
    /// layout numbers it.
    public func addKeyCounter(of entity: String) -> String? {
        guard let number = entities[entity]?.number else { return nil }
        let parent = model.entity(named: entity)?.parent.flatMap { entities[$0]?.number } ?? 0
        return "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (\(number), \(quoteLiteral(entity)), \(parent), 0)"
    }

    /// SQL renaming the counter row of the entity numbered `number` to `name`: its keys go on
    /// from where they were.
    public static func renameKeyCounter(number: Int, to name: String) -> String {
        "UPDATE Z_PRIMARYKEY SET Z_NAME = \(quoteLiteral(name)) WHERE Z_ENT = \(number)"
    }
}
