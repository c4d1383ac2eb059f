// The toolchain's index store header (`<toolchain>/usr/local/include/indexstore/indexstore.h` on
// Linux), found through the include path Scripts/check-code-map passes.
#include <indexstore/indexstore.h>
