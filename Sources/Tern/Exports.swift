/// `import Tern` gives a program every layer: models (`TernModel`), stores (`TernStore`),
/// mappings (`TernMapping`) and the engine here, and the SQLite values and connections the API
/// speaks in (`SQLiteValue`, `Connection`), without importing the layers they come from.
@_exported import TernMapping
@_exported import TernModel
@_exported import TernSQLite
@_exported import TernStore
