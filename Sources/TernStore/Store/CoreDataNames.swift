import TernModel
/// Core Data's naming rules for a SQLite store: the one place a table, column or index name is
/// derived. `StoreLayout` applies them to a model version; everything else (metadata, writers,
/// the engine) asks the layout or these functions, never spells a name itself.
///
/// Each rule is proven on stores Core Data wrote (`shared/fixtures/*/pairs.tsv`, checked by
/// `CoreDataCorpusTests`); the article "Version hashes and the store layout" gives the evidence.
public enum CoreDataNames {
    /// An inheritance root's table: `Z` + the uppercased entity name (`ZCAR` for Car and its
    /// subentities). Persistent-history entities (numbered from 16000) use `A` instead.
    public static func table(forRoot entity: String, number: Int = 0) -> String {
        (number >= persistentHistoryFirstNumber ? "A" : "Z") + entity.uppercased()
    }

    /// The first entity number Core Data gives its own persistent-history entities.
    public static let persistentHistoryFirstNumber = 16000

    /// An attribute's or a to-one relationship's column: `Z` + the uppercased name.
    public static func column(forProperty name: String) -> String {
        "Z" + name.uppercased()
    }

    /// The column beside a to-one's foreign key holding the destination row's `Z_ENT`, when the
    /// destination has subentities: `Z<destination number>_<NAME>` (`Z1_BOOK`).
    public static func entityColumn(forToOne name: String, destinationNumber: Int) -> String {
        "Z\(destinationNumber)_" + name.uppercased()
    }

    /// The sort key of an object in its owner's ordered to-many, kept beside the inverse to-one's
    /// foreign key: `Z_FOK_<INVERSE NAME>` (`Z_FOK_PARENT`).
    public static func orderColumn(forToOne name: String) -> String {
        "Z_FOK_" + name.uppercased()
    }

    /// A to-many with no inverse is kept as a hidden foreign key in the destination's table:
    /// `Z<number of the entity declaring it><NAME>` (`Z2MODIFIERS`, CartKit's store).
    public static func hiddenForeignKey(forToMany name: String, ownerNumber: Int) -> String {
        "Z\(ownerNumber)" + name.uppercased()
    }

    /// The sort key of an ordered to-many with no inverse: `Z_FOK_<owner number><NAME>`.
    public static func hiddenOrderColumn(forToMany name: String, ownerNumber: Int) -> String {
        "Z_FOK_\(ownerNumber)" + name.uppercased()
    }

    /// A many-to-many's join table, named after one of its two relationships:
    /// `Z_<number of the entity declaring it><NAME>` (`Z_1TAGS`).
    public static func joinTable(forRelationship name: String, ownerNumber: Int) -> String {
        "Z_\(ownerNumber)" + name.uppercased()
    }

    /// A join table's column holding the keys reached through relationship `name`:
    /// `Z_<destination number><NAME>`, before any suffix that keeps it unique.
    public static func joinColumn(forRelationship name: String, destinationNumber: Int) -> String {
        "Z_\(destinationNumber)" + name.uppercased()
    }

    /// The sort key of an ordered many-to-many, beside the join column it orders:
    /// `Z_FOK_1FAVORITES` orders `Z_1FAVORITES`.
    public static func joinOrderColumn(ordering joinColumn: String) -> String {
        "Z_FOK_" + joinColumn.dropFirst(2)
    }

    /// The index on a foreign key, an `indexed` attribute's column, or a join table's second
    /// column: `<TABLE>_<COLUMN>_INDEX`.
    public static func columnIndex(table: String, column: String) -> String {
        "\(table)_\(column)_INDEX"
    }

    /// A compound index of Xcode's older `compoundIndexes`: `<TABLE>_<COLUMN>_<COLUMN>…`, no suffix.
    public static func compoundIndex(table: String, columns: [String]) -> String {
        ([table] + columns).joined(separator: "_")
    }

    /// A fetch index: `Z_<Entity>_<index name>`.
    public static func fetchIndex(entity: String, name: String) -> String {
        "Z_\(entity)_\(name)"
    }

    /// A uniqueness constraint as a unique index (Core Data 1044 and later):
    /// `Z_<Entity>_UNIQUE_<attribute>_<attribute>…`.
    public static func uniqueIndex(entity: String, properties: [String]) -> String {
        "Z_\(entity)_UNIQUE_" + properties.joined(separator: "_")
    }

    /// A uniqueness constraint inside `CREATE TABLE` (Core Data 637):
    /// `CONSTRAINT <COLUMN>_<COLUMN> UNIQUE (…)`.
    public static func uniqueConstraint(columns: [String]) -> String {
        columns.joined(separator: "_")
    }

    /// A trigger keeping a derived attribute current: `Z_DA_<TABLE>_<Entity>_<attribute>_<ROLE>`,
    /// on the table whose rows change it (`Z_DA_ZPAGE_Book_pagesCount_PARAMETER_INSERT`) or the
    /// attribute's own (`Z_DA_ZBOOK_Book_pagesCount_SOURCE_INSERT`).
    public static func derivedAttributeTrigger(table: String, entity: String, attribute: String, role: String) -> String {
        "Z_DA_\(table)_\(entity)_\(attribute)_\(role)"
    }

    /// The index on a table that holds several entities' rows: `<TABLE>_Z_ENT_INDEX`.
    public static func entityIndex(table: String) -> String {
        "\(table)_Z_ENT_INDEX"
    }

    /// `base`, or `base` with the first numeric suffix (1, 2, …) that `taken` does not hold:
    /// how Core Data keeps two columns of one table apart (`ZKINDSTRING1`, `Z_13TAGS2`).
    public static func unique(_ base: String, in taken: inout Set<String>) -> String {
        var name = base
        var suffix = 1
        while taken.contains(name) {
            name = base + String(suffix)
            suffix += 1
        }
        taken.insert(name)
        return name
    }
}
