import Foundation
import TernModel
import TernStore
import TernMapping
import Logging
import TernPlanning
import TernDurability
import TernExecution

// The library's entry points take paths as `String`, as the command line gives them; a program
// that holds file URLs passes them as they are. (Only file URLs: a store is a local file.)

extension ModelLoader {
    /// Reads the versioned model at a file URL (see `load(_:)` for the forms it takes).
    public static func load(_ url: URL) throws -> VersionedModel {
        try load(url.path)
    }
}

extension StoreMigration {
    /// A migration of the store at a file URL.
    public init(store: URL, model: VersionedModel, options: MigrationOptions = MigrationOptions(), logger: Logger = .ternDefault) {
        self.init(store: store.path, model: model, options: options, logger: logger)
    }

    /// Plans the steps to `target`, with mapping files given as file URLs for some of them.
    public func plan(to target: String? = nil, mappingFiles: [URL]) throws -> Plan {
        try plan(to: target, mappingFiles: mappingFiles.map(\.path))
    }

    /// Runs the plan into a new store at a file URL; the original is left alone.
    public func run(_ plan: Plan, output: URL, resume: Bool = false) async throws -> Report {
        try await run(plan, output: output.path, resume: resume)
    }

    /// Starts running the plan into a new store at a file URL.
    public func start(_ plan: Plan, output: URL, resume: Bool = false) -> RunningMigration {
        start(plan, output: output.path, resume: resume)
    }
}
