#include "CFaultVFS.h"

#include <pthread.h>
#include <sqlite3.h>
#include <string.h>

_Static_assert(STRATA_FAULT_SQLITE_FULL == SQLITE_FULL, "mirrored result code");
_Static_assert(STRATA_FAULT_SQLITE_IOERR_READ == SQLITE_IOERR_READ, "mirrored result code");
_Static_assert(STRATA_FAULT_SQLITE_IOERR_WRITE == SQLITE_IOERR_WRITE, "mirrored result code");
_Static_assert(STRATA_FAULT_SQLITE_IOERR_FSYNC == SQLITE_IOERR_FSYNC, "mirrored result code");

#define KIND_COUNT 3
#define CLASS_COUNT 4

/* All mutable state below is guarded by `state_lock`.
 *
 * Why a lock although a store runs its connection on one serial queue: the counters are also
 * read and the fault armed from the test's own threads while that queue may be inside SQLite,
 * and other connections (a second store on the same file, SQLite's own checkpoints) can open
 * files through this VFS from other queues. Every access is short and never calls back into
 * SQLite while holding the lock, so a plain mutex is both correct and cheap enough. */
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static int registered = 0;
static sqlite3_vfs *base_vfs = NULL;

static int armed = 0;
static int armed_kind = 0;
static int armed_class = STRATA_FAULT_FILE_ANY;
static int64_t armed_n = 0;
static int armed_persistent = 0;
static int armed_code = SQLITE_OK;
static int64_t calls_since_arm = 0;
static int64_t injected_since_arm = 0;

static int holding = 0;
static int hold_code = SQLITE_OK;

static int64_t epoch = 0;
static int64_t counts[KIND_COUNT][CLASS_COUNT];
static int64_t total_injected = 0;
static int64_t total_held = 0;
static int last_file_class = -1;

typedef struct FaultFile {
    sqlite3_file base;   /* must come first: SQLite sees this */
    sqlite3_file *real;  /* the wrapped file, stored right after this struct */
    int file_class;
    int64_t epoch;       /* the epoch the file was opened in */
} FaultFile;

/* Counts one call and decides its fate: SQLITE_OK to forward it, or the code to fail it with. */
static int fault_decide(int kind, const FaultFile *file) {
    int result = SQLITE_OK;
    int file_class = file->file_class;
    pthread_mutex_lock(&state_lock);
    if (file->epoch != epoch) {
        pthread_mutex_unlock(&state_lock);
        return SQLITE_OK;
    }
    counts[kind][file_class] += 1;
    if (holding && kind != STRATA_FAULT_READ) {
        result = hold_code;
        total_held += 1;
    } else if (armed && kind == armed_kind && (armed_class == STRATA_FAULT_FILE_ANY || armed_class == file_class)) {
        calls_since_arm += 1;
        if (calls_since_arm == armed_n || (armed_persistent && calls_since_arm > armed_n)) {
            result = armed_code;
            injected_since_arm += 1;
            total_injected += 1;
            last_file_class = file_class;
            if (!armed_persistent) armed = 0;
        }
    }
    pthread_mutex_unlock(&state_lock);
    return result;
}

/* MARK: File methods (forwarded to the wrapped file) */

static sqlite3_file *real_file(sqlite3_file *file) { return ((FaultFile *)file)->real; }

static int fault_close(sqlite3_file *file) {
    sqlite3_file *real = real_file(file);
    int rc = real->pMethods ? real->pMethods->xClose(real) : SQLITE_OK;
    file->pMethods = NULL;
    return rc;
}

static int fault_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    int rc = fault_decide(STRATA_FAULT_READ, (const FaultFile *)file);
    if (rc != SQLITE_OK) return rc;
    sqlite3_file *real = real_file(file);
    return real->pMethods->xRead(real, buffer, amount, offset);
}

static int fault_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    int rc = fault_decide(STRATA_FAULT_WRITE, (const FaultFile *)file);
    if (rc != SQLITE_OK) return rc;
    sqlite3_file *real = real_file(file);
    return real->pMethods->xWrite(real, buffer, amount, offset);
}

static int fault_sync(sqlite3_file *file, int flags) {
    int rc = fault_decide(STRATA_FAULT_SYNC, (const FaultFile *)file);
    if (rc != SQLITE_OK) return rc;
    sqlite3_file *real = real_file(file);
    return real->pMethods->xSync(real, flags);
}

static int fault_truncate(sqlite3_file *file, sqlite3_int64 size) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xTruncate(real, size);
}

static int fault_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xFileSize(real, size);
}

static int fault_lock(sqlite3_file *file, int level) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xLock(real, level);
}

static int fault_unlock(sqlite3_file *file, int level) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xUnlock(real, level);
}

static int fault_check_reserved_lock(sqlite3_file *file, int *result) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xCheckReservedLock(real, result);
}

static int fault_file_control(sqlite3_file *file, int op, void *argument) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xFileControl(real, op, argument);
}

static int fault_sector_size(sqlite3_file *file) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xSectorSize(real);
}

static int fault_device_characteristics(sqlite3_file *file) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xDeviceCharacteristics(real);
}

static int fault_shm_map(sqlite3_file *file, int region, int size, int extend, void volatile **pointer) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xShmMap(real, region, size, extend, pointer);
}

static int fault_shm_lock(sqlite3_file *file, int offset, int count, int flags) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xShmLock(real, offset, count, flags);
}

static void fault_shm_barrier(sqlite3_file *file) {
    sqlite3_file *real = real_file(file);
    real->pMethods->xShmBarrier(real);
}

static int fault_shm_unmap(sqlite3_file *file, int delete_flag) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xShmUnmap(real, delete_flag);
}

/* Version 2: WAL (shared memory) is supported, memory-mapped I/O (version 3's xFetch) is not, so
 * that every read of the file goes through xRead and can be counted and failed. */
static const sqlite3_io_methods fault_io_methods = {
    2,
    fault_close,
    fault_read,
    fault_write,
    fault_truncate,
    fault_sync,
    fault_file_size,
    fault_lock,
    fault_unlock,
    fault_check_reserved_lock,
    fault_file_control,
    fault_sector_size,
    fault_device_characteristics,
    fault_shm_map,
    fault_shm_lock,
    fault_shm_barrier,
    fault_shm_unmap,
    NULL,
    NULL,
};

/* MARK: VFS methods (forwarded to the default VFS) */

static int fault_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    (void)vfs;
    FaultFile *fault = (FaultFile *)file;
    fault->real = (sqlite3_file *)&fault[1];
    fault->file_class = (flags & SQLITE_OPEN_MAIN_DB) ? STRATA_FAULT_FILE_MAIN_DB
        : (flags & SQLITE_OPEN_WAL) ? STRATA_FAULT_FILE_WAL
        : (flags & SQLITE_OPEN_SUBJOURNAL) ? STRATA_FAULT_FILE_SUBJOURNAL : STRATA_FAULT_FILE_OTHER;
    pthread_mutex_lock(&state_lock);
    fault->epoch = epoch;
    pthread_mutex_unlock(&state_lock);
    int rc = base_vfs->xOpen(base_vfs, name, fault->real, flags, out_flags);
    /* SQLite calls xClose exactly when pMethods is set, even after a failed open. */
    file->pMethods = fault->real->pMethods ? &fault_io_methods : NULL;
    return rc;
}

static int fault_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    (void)vfs;
    return base_vfs->xDelete(base_vfs, name, sync_dir);
}

static int fault_access(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    (void)vfs;
    return base_vfs->xAccess(base_vfs, name, flags, result);
}

static int fault_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return base_vfs->xFullPathname(base_vfs, name, size, out);
}

static void *fault_dl_open(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return base_vfs->xDlOpen(base_vfs, name);
}

static void fault_dl_error(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    base_vfs->xDlError(base_vfs, size, message);
}

static void (*fault_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return base_vfs->xDlSym(base_vfs, handle, symbol);
}

static void fault_dl_close(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    base_vfs->xDlClose(base_vfs, handle);
}

static int fault_randomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return base_vfs->xRandomness(base_vfs, size, out);
}

static int fault_sleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return base_vfs->xSleep(base_vfs, microseconds);
}

static int fault_current_time(sqlite3_vfs *vfs, double *now) {
    (void)vfs;
    return base_vfs->xCurrentTime(base_vfs, now);
}

static int fault_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return base_vfs->xGetLastError ? base_vfs->xGetLastError(base_vfs, size, out) : 0;
}

static int fault_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *now) {
    (void)vfs;
    return base_vfs->xCurrentTimeInt64(base_vfs, now);
}

static sqlite3_vfs fault_vfs;

int strata_fault_register(void) {
    int rc = SQLITE_OK;
    pthread_mutex_lock(&state_lock);
    if (!registered) {
        sqlite3_vfs *found = sqlite3_vfs_find(NULL);
        if (found == NULL) {
            rc = SQLITE_ERROR;
        } else {
            base_vfs = found;
            memset(&fault_vfs, 0, sizeof fault_vfs);
            /* Version 2 (xCurrentTimeInt64); the system-call overrides of version 3 are not offered. */
            fault_vfs.iVersion = 2;
            fault_vfs.szOsFile = (int)sizeof(FaultFile) + found->szOsFile;
            fault_vfs.mxPathname = found->mxPathname;
            fault_vfs.zName = "strata-fault";
            fault_vfs.xOpen = fault_open;
            fault_vfs.xDelete = fault_delete;
            fault_vfs.xAccess = fault_access;
            fault_vfs.xFullPathname = fault_full_pathname;
            fault_vfs.xDlOpen = fault_dl_open;
            fault_vfs.xDlError = fault_dl_error;
            fault_vfs.xDlSym = fault_dl_sym;
            fault_vfs.xDlClose = fault_dl_close;
            fault_vfs.xRandomness = fault_randomness;
            fault_vfs.xSleep = fault_sleep;
            fault_vfs.xCurrentTime = fault_current_time;
            fault_vfs.xGetLastError = fault_get_last_error;
            fault_vfs.xCurrentTimeInt64 = fault_current_time_int64;
            rc = sqlite3_vfs_register(&fault_vfs, 0);
            registered = rc == SQLITE_OK;
        }
    }
    pthread_mutex_unlock(&state_lock);
    return rc;
}

const char *strata_fault_vfs_name(void) { return "strata-fault"; }

void strata_fault_arm(int kind, int64_t n, int persistent, int code) {
    strata_fault_arm_in(kind, STRATA_FAULT_FILE_ANY, n, persistent, code);
}

void strata_fault_arm_in(int kind, int file_class, int64_t n, int persistent, int code) {
    pthread_mutex_lock(&state_lock);
    armed = kind >= 0 && kind < KIND_COUNT && n >= 1 && file_class >= STRATA_FAULT_FILE_ANY && file_class < CLASS_COUNT;
    armed_kind = kind;
    armed_class = file_class;
    armed_n = n;
    armed_persistent = persistent != 0;
    armed_code = code;
    calls_since_arm = 0;
    injected_since_arm = 0;
    holding = 0;
    pthread_mutex_unlock(&state_lock);
}

void strata_fault_disarm(void) {
    pthread_mutex_lock(&state_lock);
    armed = 0;
    holding = 0;
    injected_since_arm = 0;
    pthread_mutex_unlock(&state_lock);
}

int strata_fault_hold_if_injected(int code) {
    int started = 0;
    pthread_mutex_lock(&state_lock);
    if (!holding && injected_since_arm > 0) {
        armed = 0;
        holding = 1;
        hold_code = code;
        started = 1;
    }
    pthread_mutex_unlock(&state_lock);
    return started;
}

int strata_fault_is_holding(void) {
    pthread_mutex_lock(&state_lock);
    int result = holding;
    pthread_mutex_unlock(&state_lock);
    return result;
}

void strata_fault_new_epoch(void) {
    pthread_mutex_lock(&state_lock);
    epoch += 1;
    pthread_mutex_unlock(&state_lock);
}

void strata_fault_reset_counts(void) {
    pthread_mutex_lock(&state_lock);
    memset(counts, 0, sizeof counts);
    pthread_mutex_unlock(&state_lock);
}

int64_t strata_fault_count(int kind) {
    if (kind < 0 || kind >= KIND_COUNT) return 0;
    pthread_mutex_lock(&state_lock);
    int64_t total = 0;
    for (int file_class = 0; file_class < CLASS_COUNT; file_class++) total += counts[kind][file_class];
    pthread_mutex_unlock(&state_lock);
    return total;
}

int64_t strata_fault_count_in(int kind, int file_class) {
    if (kind < 0 || kind >= KIND_COUNT || file_class < 0 || file_class >= CLASS_COUNT) return 0;
    pthread_mutex_lock(&state_lock);
    int64_t result = counts[kind][file_class];
    pthread_mutex_unlock(&state_lock);
    return result;
}

int64_t strata_fault_injected(void) {
    pthread_mutex_lock(&state_lock);
    int64_t result = injected_since_arm;
    pthread_mutex_unlock(&state_lock);
    return result;
}

int64_t strata_fault_total_injected(void) {
    pthread_mutex_lock(&state_lock);
    int64_t result = total_injected;
    pthread_mutex_unlock(&state_lock);
    return result;
}

int64_t strata_fault_total_held(void) {
    pthread_mutex_lock(&state_lock);
    int64_t result = total_held;
    pthread_mutex_unlock(&state_lock);
    return result;
}

int strata_fault_last_file_class(void) {
    pthread_mutex_lock(&state_lock);
    int result = last_file_class;
    pthread_mutex_unlock(&state_lock);
    return result;
}
