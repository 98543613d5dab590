/// `import Tern` gives a program every layer: models (`TernModel`), stores (`TernStore`),
/// mappings (`TernMapping`), the engine's plan (`TernPlanning`), record (`TernDurability`) and
/// step runs (`TernExecution`), and `StoreMigration` here, with the SQLite values and
/// connections the API speaks in (`SQLiteValue`, `Connection`), without importing the layers
/// they come from.
@_exported import TernDurability
@_exported import TernExecution
@_exported import TernMapping
@_exported import TernModel
@_exported import TernPlanning
@_exported import TernSQLite
@_exported import TernStore
