// Callgrind's client requests, for Scripts/instructions.sh. The requests are macros of inline
// assembly that Swift cannot import; these wrappers can be called. Outside valgrind they do
// nothing (a few instructions). Where valgrind's headers are not installed they compile to
// nothing at all (Scripts/instructions.sh then finds no dump and says so).
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>

/// Zeroes the cost counters of every thread (callgrind shares one table across threads unless
/// --separate-threads=yes).
static inline void bench_callgrind_zero(void) { CALLGRIND_ZERO_STATS; }

/// Writes a profile of the costs since the last zeroing (every thread's), described as `label`,
/// and zeroes them.
static inline void bench_callgrind_dump(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }
#else
static inline void bench_callgrind_zero(void) {}
static inline void bench_callgrind_dump(const char *label) { (void)label; }
#endif
