#ifndef STRATA_CFAULTVFS_H
#define STRATA_CFAULTVFS_H

/// A test-only SQLite VFS that wraps the default VFS and fails the Nth read, write or fsync of
/// the files opened through it, once or persistently, with a chosen result code.
///
/// Usage (from Swift): `strata_fault_register()` once, open the database with the VFS named
/// `strata_fault_vfs_name()` (`sqlite3_open_v2`'s zVfs), then `strata_fault_arm(...)`.
/// Only files opened through this VFS (since the last `strata_fault_new_epoch()`) are counted or
/// failed; other connections are untouched.
///
/// The header deliberately does not include <sqlite3.h>, so that Swift code importing this module
/// does not see a second copy of SQLite's declarations: result codes are mirrored below (the C
/// file checks at compile time that they equal SQLite's).

#include <stdint.h>

/// Which file operation a fault applies to.
enum {
    STRATA_FAULT_READ = 0,   ///< xRead
    STRATA_FAULT_WRITE = 1,  ///< xWrite
    STRATA_FAULT_SYNC = 2,   ///< xSync
};

/// Which kind of file an operation touched (from the flags SQLite opened it with).
enum {
    STRATA_FAULT_FILE_ANY = -1,       ///< for arming: count calls on every file
    STRATA_FAULT_FILE_MAIN_DB = 0,
    STRATA_FAULT_FILE_WAL = 1,
    STRATA_FAULT_FILE_SUBJOURNAL = 2,  ///< statement journals (savepoints, multi-row statements)
    STRATA_FAULT_FILE_OTHER = 3,       ///< rollback journals, temporary and transient files
};

/// SQLite result codes the tests inject (equal to SQLITE_FULL, SQLITE_IOERR_READ, ...).
enum {
    STRATA_FAULT_SQLITE_FULL = 13,
    STRATA_FAULT_SQLITE_IOERR_READ = 266,
    STRATA_FAULT_SQLITE_IOERR_WRITE = 778,
    STRATA_FAULT_SQLITE_IOERR_FSYNC = 1034,
};

/// Registers the VFS (not as the default). Idempotent. Returns SQLite's result code (0 = OK).
int strata_fault_register(void);

/// The name to open a database with ("strata-fault").
const char *strata_fault_vfs_name(void);

/// Fails the `n`th call (1-based, counted from this call) of `kind` with `code`. When
/// `persistent` is non-zero, every later call of that kind fails too, until disarmed; otherwise
/// only the `n`th does. Replaces any earlier arming and ends a hold.
void strata_fault_arm(int kind, int64_t n, int persistent, int code);

/// Like `strata_fault_arm`, counting (and failing) only calls on files of `file_class`
/// (`STRATA_FAULT_FILE_*`; `STRATA_FAULT_FILE_ANY` for all).
void strata_fault_arm_in(int kind, int file_class, int64_t n, int persistent, int code);

/// Stops failing calls (ends the arming and any hold; `strata_fault_injected()` is 0 again).
void strata_fault_disarm(void);

/// If a fault has been injected since the last arming, disarms it and holds: every later write
/// and fsync fails with `code` (reads succeed) until disarmed. Returns 1 when it started holding.
/// Tests call it when the store begins its next attempt, so that the retry cannot commit before
/// the test has inspected the state the fault left.
int strata_fault_hold_if_injected(int code);

/// Whether a hold is in effect.
int strata_fault_is_holding(void);

/// Starts a new epoch: from now on only files opened after this call are counted or failed.
/// Tests call it before opening the store under test, so that a store from an earlier test that
/// closes late (checkpointing its own files) cannot take or shift a fault.
void strata_fault_new_epoch(void);

/// Sets every call counter to zero (not the totals of injected faults).
void strata_fault_reset_counts(void);

/// Calls of `kind` on files opened through the VFS since the last reset.
int64_t strata_fault_count(int kind);

/// Calls of `kind` on files of one class (`STRATA_FAULT_FILE_*`) since the last reset.
int64_t strata_fault_count_in(int kind, int file_class);

/// Faults injected since the last arming (holds not included).
int64_t strata_fault_injected(void);

/// Faults injected since the process started (holds not included).
int64_t strata_fault_total_injected(void);

/// Calls failed by holds since the process started.
int64_t strata_fault_total_held(void);

/// The file class the last injected fault hit, or -1.
int strata_fault_last_file_class(void);

#endif
