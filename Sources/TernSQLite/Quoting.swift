/// Quotes an identifier (table, column, savepoint name) for SQL: `a"b` becomes `"a""b"`.
///
/// Every identifier Tern writes into SQL goes through here, so no name from a model or a mapping
/// file can change a statement's meaning.
public func quoteIdentifier(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

/// Quotes a text literal for SQL: `it's` becomes `'it''s'`. Prefer bound parameters; this is for
/// statements that cannot take them (PRAGMA values, generated scripts shown to people).
public func quoteLiteral(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
}

extension String {
    fileprivate func replacingOccurrences(of target: Character, with replacement: String) -> String {
        var result = ""
        result.reserveCapacity(utf8.count + 2)
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
