/// A coding key for any name, to list the keys a YAML mapping actually has.
package struct AnyCodingKey: CodingKey {
    package var stringValue: String
    package var intValue: Int? { nil }
    package init(stringValue: String) { self.stringValue = stringValue }
    package init?(intValue: Int) { nil }
}

extension Decoder {
    /// Rejects keys the format does not define, so a misspelt option is an error, not a silent
    /// default.
    package func rejectUnknownKeys(allowed: Set<String>, in what: String) throws {
        let keys = try container(keyedBy: AnyCodingKey.self).allKeys.map(\.stringValue)
        let unknown = keys.filter { !allowed.contains($0) }.sorted()
        guard unknown.isEmpty else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: codingPath,
                    debugDescription:
                        "unknown key\(unknown.count == 1 ? "" : "s") \(unknown.joined(separator: ", ")) in \(what) (allowed: \(allowed.sorted().joined(separator: ", ")))"
                ))
        }
    }
}
