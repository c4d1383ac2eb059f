#include <sqlite3.h>

/// `SQLITE_TRANSIENT` is a cast macro that Swift cannot import: it tells SQLite to copy bound bytes.
static inline sqlite3_destructor_type strata_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// `sqlite3_db_config` is variadic, which Swift cannot call: this is its form for the options that
/// take an int and report the resulting state through an int pointer (`SQLITE_DBCONFIG_ENABLE_TRIGGER`
/// and the like). `value` is 1 to enable, 0 to disable, negative to leave the option as it is.
static inline int strata_db_config_int(sqlite3 *db, int op, int value, int *out) {
    return sqlite3_db_config(db, op, value, out);
}
