import TernSQLite
import TernModel
import TernStore
import TernMapping
import TernPlanning
import TernDurability

extension StepMigrator {
    // MARK: Catching up a live store

    /// Writes again, inside the caller's transaction, every destination object whose source
    /// object changed (`LiveChanges.round`), and every link with an end among them: the rows
    /// go, then come back from the source as it is now through the step's own INSERTs and
    /// stage 2, restricted to those objects. Only for steps `LiveEligibility` accepts: every
    /// mapping in SQL, keeping keys, so a destination key is its source object's.
    /// Returns how many objects were written.
    func catchUp() throws -> Int {
        workspace.catchingUp = true
        relationships.catchingUp = true
        relationships.writtenLinks = []
        let entries = associations.entries
        completed = Set(entries.map(\.number))
        // The changed objects' rows go, whatever their entity now.
        let fed = Dictionary(grouping: entries, by: { destinationLayout.entities[$0.destinationEntity]!.table })
        for (table, feeding) in fed.sorted(by: { $0.key < $1.key }) {
            for source in Set(feeding.map { sourceLayout.entities[$0.sourceEntity]!.table }).sorted() {
                try connection.execute("DELETE FROM \(quoteIdentifier(table)) WHERE \"Z_PK\" IN (\(LiveChanges.keys(of: source)))")
            }
        }
        var written = 0
        var deferred: [Int: [String]] = [:]
        for entry in entries {
            let writer = try SQLInstanceBatches(entry, migrator: self, rows: .changed)
            written += try writer.writeChanged()
            deferred[entry.number] = writer.deferredRelationships
        }
        for ordered in [true, false] {
            for entry in entries { try relationships.recreate(deferred[entry.number] ?? [], of: entry, ordered: ordered) }
        }
        return written
    }

    /// The destination model's rules over the objects changed since the last full check
    /// (`onlyKeys`), or over every object; throws the violations, up to the limit.
    func validateForCatchUp(onlyKeys: String?) throws {
        var validation = StepValidation(inputs: inputs, swiftWriters: [:])
        validation.onlyKeys = onlyKeys
        let broken = try validation.violations(of: associations.entries, limit: options.violationLimit).flatMap { $0 }
        if !broken.isEmpty { throw MigrationFailure.validation(Array(broken.prefix(options.violationLimit))) }
    }

    /// Verification of the store against the source as they are, every object or those whose
    /// keys `onlyKeys` lists (links kept apart from their objects are compared whole).
    func verifyForCatchUp(onlyKeys: String?) throws {
        var verification = StepVerification(inputs: inputs, policyLinked: [], swiftWriters: [:], report: StepReport())
        verification.onlyKeys = onlyKeys
        try MigrationInterrupted.whenAsked(options.shouldStop) { try verification.run() }
    }

    /// The key counters as the finished step sets them, from the source's counters now: the
    /// highest key the app handed out in each table, never handed out again.
    func recordKeysHandedOutForCatchUp() throws {
        nextKeys = [:]
        try raiseKeyCountersAboveSourceKeys()
        for table in Set(destinationLayout.entities.values.map(\.table)).sorted() {
            try connection.execute(destinationLayout.recordKeysHandedOut((nextKeys[table] ?? 1) - 1, in: table))
        }
    }
}
