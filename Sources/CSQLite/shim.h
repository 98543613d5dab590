#ifndef TERN_CSQLITE_SHIM_H
#define TERN_CSQLITE_SHIM_H
#include <sqlite3.h>

/// `SQLITE_TRANSIENT` is a macro casting -1 to a function pointer; Swift cannot import it.
/// SQLite copies the bound bytes before the bind call returns.
static inline sqlite3_destructor_type tern_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// `SQLITE_STATIC`: the bytes outlive the statement's use of them.
static inline sqlite3_destructor_type tern_sqlite_static(void) {
    return SQLITE_STATIC;
}
/// Turns off SQLite's "double-quoted string" misfeature for DML and DDL: with it on, a quoted
/// identifier naming no column (`typeof("ZMISSING")`) silently reads as a string literal, so a
/// store lacking a column its version has would look like a store holding text there.
/// `sqlite3_db_config` is variadic; Swift cannot call it.
static inline int tern_sqlite_disable_double_quoted_strings(sqlite3 *db) {
    int code = sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
    if (code != SQLITE_OK) return code;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)0);
}
#endif
