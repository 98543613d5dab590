import Foundation
import TernMapping
import TernModel
import TernStore
import TernPlanning
import TernDurability
import TernExecution

/// Recognise and plan: which version wrote the store, the steps to the target, and every
/// decision about them, made once (`StoreMigration.plan(to:mappingFiles:mappings:appleHashes:)`).
extension StoreMigration {
    func makePlan(
        to target: String?, mappingFiles extra: [String], mappings models: [MappingModel],
        appleHashes: [String: [String: String]]
    ) throws -> Plan {
        // A compiled model's bundle says what Core Data's hashes of each version are.
        var appleHashes = appleHashes
        if appleHashes.isEmpty, model.path.hasSuffix(".momd") {
            appleHashes = (try? VersionMatch.appleHashes(versionInfoAt: model.path + "/VersionInfo.plist")) ?? [:]
        }
        // The store's metadata and tables, read once: recognition, the earlier Tern's layout and
        // the plan's origin all look at them.
        let (metadata, signature) = try Self.shape(ofStoreAt: store)
        let match = VersionMatch.find(in: model, metadata: metadata, signature: signature, appleHashes: appleHashes)
        var version: String
        let targetVersion = target ?? model.currentVersionName
        var chainModel = model
        var fromStoreModel = false
        var earlierTern = false
        switch match.verdict {
        case .compatible(let name, _):
            version = name
        case .migrationNeeded(let from, _, let evidence):
            version = from
            earlierTern = evidence == .earlierTern
        case .noMatch(let closest, let differences):
            // The store's own model, when it carries one whose layout is its schema: one step
            // from it to the target, inferred or by a mapping file naming it as its source.
            let carried = try StoreModelCache.read(storeAt: store, versionName: StoreModelCache.versionName)
            guard let cached = carried, try StoreModelCache.describes(cached, storeAt: store), let destination = model.version(named: targetVersion) else {
                // Say why the store's own model was not taken either, when it has one.
                let note = carried.map { _ in ["the model the store carries (Z_MODELCACHE) does not match its tables and entities either"] } ?? []
                throw MigrationError.noVersionMatches(closest: closest, differences: differences + note, store: store)
            }
            chainModel = VersionedModel(name: model.name, versions: [cached, destination], currentVersionName: targetVersion, path: model.path)
            version = cached.versionName
            fromStoreModel = true
            logger.notice("no version of the model wrote the store: migrating from the model the store carries", metadata: ["store": "\(store)"])
        }
        guard version != targetVersion || earlierTern || match.metadataDisagrees else {
            return Plan(storeVersion: version, targetVersion: targetVersion, steps: [])
        }
        // The app's metadata the migrated store will carry, read now: refused here, not at delivery.
        _ = try StoreFile.appMetadata(ofStoreAt: store)
        let files = MigrationPlanner.mappingFiles(for: model)
        var steps: [MigrationStep]
        var route: String?
        if version == targetVersion {
            steps = [try MigrationPlanner.relayout(of: chainModel.version(named: version)!, now: options.now)]
        } else {
            (steps, route) = try MigrationPlanner.chain(
                in: chainModel, from: version, to: targetVersion, mappingFiles: files, overriding: extra, models: models,
                choice: options.route, now: options.now)
        }
        if earlierTern {
            // The first step reads the earlier Tern's tables (where they are not Core Data's
            // already: then only its hashes were its own); every step writes Core Data's.
            if !VersionMatch.differences(of: steps[0].source, from: metadata, signature: signature).isEmpty {
                steps[0].readEarlierTernLayout()
            }
            logger.notice(
                "an earlier Tern laid the store out: the migration copies it into Core Data's layout",
                metadata: ["store": "\(store)", "version": "\(version)"])
        }
        // Join tables the store names from the other side are read as they are (a reflexive
        // many-to-many's side is not derivable for every model).
        var notes = match.notes
        let flipped = StoreLayout.joinTablesNamedByInverse(
            of: steps[0].source, rules: steps[0].sourceRules, in: Set(signature.joinTables.keys))
        if !flipped.isEmpty {
            steps[0].readJoinTables(namedByInverse: flipped)
            notes.append("the store names the join tables of \(flipped.sorted().joined(separator: ", ")) from the other side: read as it has them")
        }
        try registry.checkPolicies(of: steps.flatMap(\.entityMappings))
        try SchemaNameCheck.check(steps, store: store)
        if let source = chainModel.version(named: version) {
            try NothingCarried.check(steps, store: store, storeVersion: source)
        }
        try AppSchemaObjects.check(steps, store: store)
        for index in try InPlaceRehearsal.stepsToCopy(steps, store: store) {
            steps[index].copy(
                because: "its schema changes, rehearsed on the store's schema, do not give \(steps[index].destination.versionName)'s tables "
                    + "(the store has tables or columns the model does not lay out): the store is copied")
        }
        // Last: how each entity mapping runs, once every step reads its source as it will.
        for index in steps.indices { steps[index].decide(with: registry) }
        var plan = Plan(storeVersion: version, targetVersion: targetVersion, steps: steps)
        plan.route = route
        plan.notes = notes
        plan.fromStoreModel = fromStoreModel
        plan.origin = Plan.Origin.of(model: model, metadata: metadata, signature: signature)
        plan.versions = steps.reduce(into: [steps[0].source]) { versions, step in
            if !versions.contains(where: { $0.versionName == step.destination.versionName }) { versions.append(step.destination) }
        }
        if let hashes = appleHashes[targetVersion], let destination = model.version(named: targetVersion) {
            try Self.checkAppleHashes(hashes, describe: destination)
            plan.targetAppleHashes = hashes
        }
        let seal = try plan.computedSeal()
        plan.origin?.seal = seal
        return plan
    }

    /// Apple's hashes are written into the migrated store as they are, for Core Data to compare
    /// with its model: hashes of another model's version of the same name (or with an entity
    /// missing) would make a store Core Data refuses, so they must name exactly its entities.
    private static func checkAppleHashes(_ hashes: [String: String], describe version: ObjectModel) throws {
        let (given, entities) = (Set(hashes.keys), Set(version.entities.map(\.name)))
        guard given != entities else { return }
        let only = given.subtracting(entities).sorted(), missing = entities.subtracting(given).sorted()
        throw TernError(
            .badInput,
            "the Apple version hashes given for \(version.versionName) (VersionInfo.plist) do not describe it: "
                + [
                    only.isEmpty ? nil : "they name \(only.joined(separator: ", ")), which it does not have",
                    missing.isEmpty ? nil : "they lack \(missing.joined(separator: ", "))",
                ].compactMap { $0 }.joined(separator: "; ")
                + " — they belong to another model, or to another version of it")
    }
}
