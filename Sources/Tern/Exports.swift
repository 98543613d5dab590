/// Tern's API speaks in SQLite values and connections (`SQLiteValue`, `Connection`): a program
/// that imports Tern gets them without importing the layer they come from.
@_exported import TernSQLite
