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
#endif
