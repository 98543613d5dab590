import CatalogueAuthorPolicy
import Tern
import TernCommands
import TernExamples

// The built-in examples (the configs' policies), then this package's own.
var registry = PolicyRegistry.builtIn
registry.register(CatalogueAuthorPolicy(), as: "PublicationToPublicationMigrationPolicy")
TernCommandLine.main(registry: registry)
