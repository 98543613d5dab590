import TernSQLite
import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability

/// What a worker needs to read and transform batches of an entity mapping that runs in Swift.
/// Plain values, so it can be handed to worker threads.
struct SwiftBatchTransform: Sendable {
    /// Reads one key range of selected source objects: `Z_PK`, the stored attributes and to-one
    /// keys, then each value expression's inputs. Binds the selection's arguments, then the range.
    var readSQL: String
    var selectionArguments: [SQLiteValue]
    /// Names of the values after `Z_PK`: attributes, then to-one relationships.
    var sourceProperties: [String]
    /// The mapping's value expressions, by destination attribute, with the column their inputs start at.
    var expressions: [(name: String, expression: CompiledExpression, offset: Int)]
    var mapping: EntityMapping
    /// The entities it reads and makes (`PlannedMapping`'s).
    var sourceEntity: String
    var destinationEntity: String
    var policy: any EntityMigrationPolicy
    var delegate: (any MigrationManagerDelegate)?
    /// Where values stored outside the stores are read and new files written.
    var externalData: ExternalDataFolders
    /// Per destination entity, the attributes a policy's objects carry as bytes, written back in
    /// Core Data's form (`ExternalDataFolders.encode`).
    var externallyStored: [String: [String]]
    /// Per attribute of the mapping's destination entity, the source attribute whose stored form
    /// an unchanged value is written back in (`StepInputs.storedFormSources`).
    var storedFormSources: [String: String]
    /// Per destination entity, the attributes an object of it may be given (stored ones, own and
    /// inherited) and their types: a name outside them is a policy's typo, which would otherwise
    /// leave the attribute NULL without a word, and a value of another kind is refused as Core
    /// Data's validation refuses an object of the wrong class.
    var settableAttributes: [String: [String: AttributeType]]
    /// The mapping's to-ones computed in the read query (`StepMigrator.fusedForeignKey`), for
    /// every object of its destination entity associated with the source object: the column
    /// their values start at and how many there are, or nil; and the query giving the same
    /// values for one source key (an object associated with another source object).
    var foreignKeys: (offset: Int, count: Int, byKeySQL: String)?
}

/// A batch the policy turned into destination objects, waiting for the writer to give them keys.
struct TransformedBatch: Sendable {
    /// The batch's source keys: `(after, end]`; `end` is the checkpoint once it is written.
    var after: Int64
    var end: Int64
    var selected: Int
    /// What reading and transforming it cost: the bytes of the source values read, and seconds.
    var sourceBytes = 0
    var seconds = 0.0
    var objects: [DestinationObject] = []
    /// (source key, index into `objects`).
    var associations: [(Int64, Int)] = []
    /// (owner index, relationship, target).
    var links: [(Int, String, InstanceCreationContext.LinkTarget)] = []
    /// Object index → the attributes that identify it (`findOrCreate`).
    var identities: [Int: [String]] = [:]
    /// Where the batch goes once written, to be released by the worker that made it.
    var spent: SpentBatches?
    /// The values of the mapping's fused to-one columns (`SwiftBatchTransform.foreignKeys`), as
    /// many per object, in one flat array (no array per object held in memory): NULL for an
    /// object that is not one of the mapping's associated objects. Empty when none are fused.
    var foreignKeys: [SQLiteValue] = []
}

/// One worker's reader: its own connection to the source (attached as `src`, as on the writer),
/// with the SQL functions value expressions use and the expressions compiled to Swift once.
final class SourceBatchReader {
    private let connection: Connection
    private let read: Statement
    private let transform: SwiftBatchTransform
    /// The mapping's value expressions, each with its slot in `destinationSlots` (nil for a name
    /// the destination entity lacks: kept by name, for `checkKeys` to refuse).
    private let programs: [(name: String, slot: Int?, program: ExpressionProgram, offset: Int)]
    /// The slots of the objects the mapping's default makes.
    private let destinationSlots: DestinationObject.Slots?
    private let foreignKeysByKey: Statement?
    /// The stored forms of the object being transformed, so unchanged values keep theirs.
    private let storedForms: StoredForms
    /// Where each of `transform.sourceProperties` is in a row read (after `Z_PK`).
    private let sourcePositions: SourceObject.Positions
    /// The batches this reader made that the writer has written: released here, as the next
    /// one starts, on the thread that allocated them.
    let spent = SpentBatches()

    init(_ transform: SwiftBatchTransform, sourceAttachURI: String) throws {
        storedForms = StoredForms()
        connection = try Connection(path: ":memory:")
        try SQLCompiler.prepare(connection)
        try transform.externalData.register(on: connection, recorder: storedForms)
        try connection.execute("ATTACH DATABASE \(quoteLiteral(sourceAttachURI)) AS src")
        read = try connection.prepare(transform.readSQL)
        self.transform = transform
        sourcePositions = SourceObject.Positions(
            Dictionary(transform.sourceProperties.enumerated().map { ($1, $0 + 1) }, uniquingKeysWith: { _, last in last }))
        let slots = transform.settableAttributes[transform.destinationEntity].map {
            DestinationObject.Slots(entity: transform.destinationEntity, attributes: $0)
        }
        destinationSlots = slots
        programs = transform.expressions.map { ($0.name, slots?.positions[$0.name], ExpressionProgram($0.expression), $0.offset) }
        let connection = connection
        foreignKeysByKey = try transform.foreignKeys.map { try connection.prepare($0.byKeySQL) }
    }

    /// Reads source keys in `(after, end]` and runs the policy on each object, in key order;
    /// stops between objects once `isCancelled` (another batch failed: this one will not be written).
    func transformBatch(after last: Int64, through end: Int64, isCancelled: () -> Bool = { false }) throws -> TransformedBatch {
        let mapping = transform.mapping
        let destinationEntity = transform.destinationEntity
        // What every object of the batch shares, read once: copies of them per object added to the
        // reference counting that is a quarter of a worker's time.
        let (policy, delegate) = (transform.policy, transform.delegate)
        let policyName = policy.name(in: mapping)
        let checks = KeyChecks(transform: transform, policyName: policyName, destinationSlots: destinationSlots)
        spent.releaseAged()
        try read.bind(transform.selectionArguments + [SQLiteValue.integer(last), .integer(end)])
        defer { read.reset() }
        var rows = read.rows()
        var batch = TransformedBatch(after: last, end: end, selected: 0, spent: spent)
        // One context for the batch, emptied for each object: its default reads the row of the
        // object being transformed.
        var current: [SQLiteValue] = []
        let context = InstanceCreationContext(mapping: mapping) { [programs, destinationSlots] _ in
            var object = destinationSlots.map(DestinationObject.init(slots:)) ?? DestinationObject(entity: destinationEntity)
            for (name, slot, program, offset) in programs {
                let value = try program.evaluate(current[(offset + 1)..<(offset + 1 + program.compiled.inputs.count)])
                if let slot { object.setValue(value, atSlot: slot) } else { object[name] = value }
            }
            return object
        }
        let started = ContinuousClock.now
        while true {
            if isCancelled() { throw CancellationError() }
            storedForms.reset()
            guard let row = try rows.next() else { break }
            let values = row.values
            current = values
            batch.sourceBytes += values.reduce(0) { $0 + $1.bytesInMemory }
            let source = SourceObject(key: values[0].int64!, entity: transform.sourceEntity, positions: sourcePositions, row: values)
            context.reset()
            try MigrationError.inPolicy(policyName, mapping: mapping, sourceKey: source.key) {
                try policy.createDestinationInstances(for: source, in: context)
            }
            if let delegate {
                for (associatedSource, handle) in context.associations {
                    var object = context.object(handle)
                    delegate.associate(source: associatedSource, destination: &object, mapping: mapping)
                    context.updateObject(handle, object)
                }
            }
            try checks.check(context, source: source)
            let base = batch.objects.count
            for object in context.objects { batch.objects.append(try storedInCoreDataForm(object)) }
            for (index, keys) in context.identities { batch.identities[base + index] = keys }
            batch.associations += context.associations.map { ($0.source.key, base + $0.object.index) }
            if let fused = transform.foreignKeys {
                try fuseForeignKeys(fused, into: &batch, from: context, base: base, row: values, source: source.key)
            }
            batch.links += context.links.map { owner, relationship, target in
                if case .created(let handle) = target { return (base + owner.index, relationship, .created(CreatedObject(index: base + handle.index))) }
                return (base + owner.index, relationship, target)
            }
            batch.selected += 1
        }
        batch.seconds = (ContinuousClock.now - started).seconds
        return batch
    }

    /// Gives each object of the mapping's destination entity associated with a source object
    /// the fused to-one values of that source object, as stage 2 would link it: the row's own
    /// values, or for another source object a policy associated, that object's, read by key.
    private func fuseForeignKeys(
        _ fused: (offset: Int, count: Int, byKeySQL: String), into batch: inout TransformedBatch, from context: InstanceCreationContext, base: Int,
        row: [SQLiteValue], source: Int64
    ) throws {
        batch.foreignKeys += repeatElement(.null, count: context.objects.count * fused.count)
        let own = row[(fused.offset + 1)..<(fused.offset + 1 + fused.count)]
        for (associated, object) in context.associations where context.objects[object.index].entity == transform.destinationEntity {
            let first = (base + object.index) * fused.count
            guard associated.key != source else {
                batch.foreignKeys.replaceSubrange(first..<first + fused.count, with: own)
                continue
            }
            guard let byKey = foreignKeysByKey else { continue }
            try byKey.bind([SQLiteValue.integer(associated.key)])
            defer { byKey.reset() }
            let values = try byKey.step() ? (0..<fused.count).map { byKey.row.value(at: $0) } : Array(repeating: .null, count: fused.count)
            batch.foreignKeys.replaceSubrange(first..<first + fused.count, with: values)
        }
    }

    /// Refuses an object of an entity the destination lacks, or with a value (or identifying
    /// key) that is not one of its entity's attributes, naming the policy, the source object and
    /// the attributes there are. Made once per batch, with what every object is checked against.
    private struct KeyChecks {
        let settableAttributes: [String: [String: AttributeType]]
        let mappingName: String
        let policyName: String
        let destinationSlots: DestinationObject.Slots?
        /// The mapping's own values are the SQL path's too, which SQLite's affinity converts:
        /// only a policy of the user's is held to the kinds of value each type takes.
        let checksKinds: Bool

        init(transform: SwiftBatchTransform, policyName: String, destinationSlots: DestinationObject.Slots?) {
            settableAttributes = transform.settableAttributes
            mappingName = transform.mapping.name
            self.policyName = policyName
            self.destinationSlots = destinationSlots
            checksKinds = !(transform.policy is DefaultMigrationPolicy)
        }

        func check(_ context: InstanceCreationContext, source: SourceObject) throws {
            for (index, object) in context.objects.enumerated() {
                func failure(_ message: String) -> MigrationError {
                    .policyFailed(policy: policyName, mapping: mappingName, sourceKey: source.key, message: message)
                }
                guard let settable = settableAttributes[object.entity] else {
                    throw failure(
                        "it created an object of entity \(object.entity), which the destination model does not have "
                            + "(its entities: \(settableAttributes.keys.sorted().joined(separator: ", ")))")
                }
                // One look-up per value, no set built: this runs for every object a policy makes. Only
                // a refusal looks again, to name the same attribute whatever the dictionary's order.
                let identifying = context.identities[index] ?? []
                let valuesFit: Bool
                if let slots = object.slots, slots === destinationSlots, object.otherValues.isEmpty {
                    // The default's slots are the entity's settable attributes: only their kinds are left.
                    valuesFit =
                        !checksKinds
                        || zip(slots.types, object.slotValues).allSatisfy { type, value in value.map { SourceBatchReader.accepts(type, $0) } ?? true }
                } else {
                    valuesFit = object.values.allSatisfy { name, value in settable[name].map { !checksKinds || SourceBatchReader.accepts($0, value) } ?? false }
                }
                if valuesFit, identifying.allSatisfy({ settable[$0] != nil }) { continue }
                let unknown = Set(object.values.keys).union(identifying).subtracting(settable.keys)
                if let name = unknown.sorted().first {
                    throw failure(
                        "it set \(name) on an object of \(object.entity), which has no stored attribute of that name "
                            + "(its attributes: \(settable.keys.sorted().joined(separator: ", ")))")
                }
                for (name, value) in object.values.sorted(by: { $0.key < $1.key }) where !SourceBatchReader.accepts(settable[name]!, value) {
                    throw failure(
                        "it set \(name) on an object of \(object.entity) to \(value.storageClass) \(value.sqlLiteral.prefix(40)), but \(name) is \(settable[name]!.xcodeName) "
                            + "(it takes \(SourceBatchReader.acceptedKinds(of: settable[name]!)), or NULL)")
                }
            }
        }
    }

    /// Whether `value` is of a kind `type` takes, as Core Data's validation accepts an object of
    /// the attribute's class: any number for a numeric or Boolean attribute (an integer widens
    /// to a wider integer or a floating-point type, and validation then checks the range and
    /// that an integer type holds a whole number), text for a string or URI, seconds (a number)
    /// for a date, bytes for binary data, a UUID or a transformable value.
    static func accepts(_ type: AttributeType, _ value: SQLiteValue) -> Bool {
        switch (type, value) {
        case (_, .null): true
        case (.integer16, .integer), (.integer32, .integer), (.integer64, .integer), (.boolean, .integer),
            (.integer16, .real), (.integer32, .real), (.integer64, .real), (.boolean, .real),
            (.decimal, .integer), (.double, .integer), (.float, .integer), (.date, .integer),
            (.decimal, .real), (.double, .real), (.float, .real), (.date, .real),
            (.string, .text), (.uri, .text),
            (.binary, .blob), (.transformable, .blob), (.uuid, .blob):
            true
        default: false
        }
    }

    /// The kinds of value `type` takes, in words, for the refusal.
    static func acceptedKinds(of type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64, .boolean, .decimal, .double, .float: "a number"
        case .date: "a number of seconds since 2001-01-01"
        case .string, .uri: "text"
        case .binary, .transformable, .uuid: "bytes"
        case .undefined: "nothing (a transient attribute of undefined type is never stored)"
        }
    }

    /// The object with each value that may live outside the store in the form Core Data keeps it.
    private func storedInCoreDataForm(_ object: DestinationObject) throws -> DestinationObject {
        guard let names = transform.externallyStored[object.entity], !names.isEmpty else { return object }
        var object = object
        for name in names {
            guard let value = object.value(of: name) else { continue }
            let source = object.entity == transform.mapping.destinationEntity ? transform.storedFormSources[name] : nil
            let kept = value.blob.flatMap { storedForms.storedForm(of: $0, copying: source) }
            object[name] = try transform.externalData.encode(value, keeping: kept)
        }
        return object
    }
}
