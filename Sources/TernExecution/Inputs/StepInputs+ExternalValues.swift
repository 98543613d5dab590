import TernSQLite
import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability

/// How a value crosses a step when either side may store it outside the store
/// (`ExternalBinaryData`): stage 1 and verification ask here, so they agree.
extension StepInputs {
    /// The source column a destination attribute copies in its stored form — marker and
    /// reference as they are, the file carried at delivery — when its value is exactly a source
    /// attribute's and both allow external storage; nil when the value crosses as the app sees
    /// it (decoded, then written in the destination's form).
    ///
    /// One file is never named by two values: Core Data deletes a value's file when the value
    /// changes, which would take the other's bytes with it. So only the step's first entity
    /// mapping of a source entity, and in it the first attribute copying a column, copies the
    /// stored form; any other copy is written anew (a file of its own when it is large).
    func storedFormCopy(_ attribute: Attribute, in entry: PlannedMapping) -> String? {
        storedFormSource(attribute, in: entry).map { sourceLayout.entities[entry.sourceEntity]!.attributeColumns[$0]! }
    }

    /// The source attribute whose stored form `attribute` copies (`storedFormCopy`), by name.
    func storedFormSource(_ attribute: Attribute, in entry: PlannedMapping) -> String? {
        guard readsItsSourceFirst(entry), let source = copiedAttribute(attribute, in: entry) else { return nil }
        let earlier = step.destination.allAttributes(of: entry.destinationEntity).prefix { $0.name != attribute.name }
        return earlier.contains { copiedAttribute($0, in: entry) == source } ? nil : source
    }

    /// Per destination attribute of `entry`'s entity, the source attribute whose stored form it
    /// copies: what a policy's unchanged values may be written back as (`StoredForms`).
    func storedFormSources(of entry: PlannedMapping) -> [String: String] {
        var sources: [String: String] = [:]
        for attribute in step.destination.allAttributes(of: entry.destinationEntity) {
            sources[attribute.name] = storedFormSource(attribute, in: entry)
        }
        return sources
    }

    /// Whether `entry` is the step's first entity mapping to read its source entity: only it
    /// may copy a reference to a file as it is (`storedFormCopy`).
    func readsItsSourceFirst(_ entry: PlannedMapping) -> Bool {
        let source = entry.entityMapping.sourceEntity
        return associations.entries.first { $0.entityMapping.sourceEntity == source }?.number == entry.number
    }

    /// The source attribute whose value `attribute`'s expression is, as it is, when both allow
    /// external storage.
    private func copiedAttribute(_ attribute: Attribute, in entry: PlannedMapping) -> String? {
        let sourceEntity = entry.sourceEntity
        guard attribute.allowsExternalStorage, let compiled = entry.mapping.attributes[attribute.name],
            case .input(0) = compiled.expression, compiled.inputs.count == 1, compiled.inputs[0].relationships.isEmpty,
            case .attribute(let name) = compiled.inputs[0].final,
            step.source.allAttributes(of: sourceEntity).contains(where: { $0.name == name && $0.allowsExternalStorage })
        else { return nil }
        return name
    }

    /// SQL over source rows `s`: the value stage 1 writes into `attribute`'s column.
    func storedValue(_ attribute: Attribute, in entry: PlannedMapping, compiler: inout SQLCompiler) -> SQLFragment {
        if let column = storedFormCopy(attribute, in: entry) { return SQLFragment("s.\(quoteIdentifier(column))") }
        let value = appValue(attribute, in: entry, compiler: &compiler)
        return attribute.allowsExternalStorage ? SQLFragment("tern_external_store(") + value + SQLFragment(")") : value
    }

    /// SQL over source rows `s`: the value verification expects, compared with
    /// `comparedColumn`: the stored form where it is copied, else the value as the app sees it.
    ///
    /// A binary attribute is compared as bytes: text in its column is what Core Data reads as
    /// the same bytes (a store may hold it; `StoreAnomaly.isTolerated`), whichever path wrote it.
    func expectedValue(_ attribute: Attribute, in entry: PlannedMapping, compiler: inout SQLCompiler) -> SQLFragment {
        let value = storedFormCopy(attribute, in: entry).map { SQLFragment("s.\(quoteIdentifier($0))") } ?? appValue(attribute, in: entry, compiler: &compiler)
        return attribute.type == .binary ? SQLFragment("tern_as_bytes(") + value + SQLFragment(")") : value
    }

    /// SQL over destination rows `d`: the attribute's column as verification compares it.
    func comparedColumn(_ attribute: Attribute, in entry: PlannedMapping) -> String {
        let column = "d.\(quoteIdentifier(destinationLayout.entities[entry.destinationEntity]!.attributeColumns[attribute.name]!))"
        let compared = attribute.allowsExternalStorage && storedFormCopy(attribute, in: entry) == nil ? "tern_external_bytes(\(column))" : column
        return attribute.type == .binary ? "tern_as_bytes(\(compared))" : compared
    }

    /// The attribute's value expression (its inputs decoded), or its default.
    private func appValue(_ attribute: Attribute, in entry: PlannedMapping, compiler: inout SQLCompiler) -> SQLFragment {
        entry.mapping.attributes[attribute.name].map { compiler.sql($0, alias: "s") } ?? SQLFragment("?", [attribute.defaultValue ?? .null])
    }

    /// For workers: per destination entity, the attributes whose values a policy's objects
    /// carry as bytes, to be written in Core Data's form.
    var externallyStoredAttributes: [String: [String]] {
        var attributes: [String: [String]] = [:]
        for entity in step.destination.entities {
            let names = step.destination.allAttributes(of: entity.name).filter { $0.allowsExternalStorage && !$0.isTransient }.map(\.name)
            if !names.isEmpty { attributes[entity.name] = names }
        }
        return attributes
    }
}
