#include <lz4.h>
#include <lz4frame.h>

/// `LZ4F_isError` is a function, but `LZ4F_VERSION` is a macro Swift imports; this keeps the
/// frame API version explicit for the Swift side.
static inline unsigned strata_lz4f_version(void) {
    return LZ4F_VERSION;
}
