#include <sqlite3.h>

/// `SQLITE_TRANSIENT` is a cast macro that Swift cannot import: it tells SQLite to copy bound bytes.
static inline sqlite3_destructor_type bench_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}
