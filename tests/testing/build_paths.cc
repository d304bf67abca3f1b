#include "testing/build_paths.h"

#if !defined(HETSCHED_SOURCE_DIR_VALUE) || !defined(HETSCHED_BINARY_VALUE)
#error "the build defines HETSCHED_SOURCE_DIR_VALUE and HETSCHED_BINARY_VALUE for this file"
#endif

namespace hetsched::testing {

// Constant-initialized, so usable from other files' static initializers.
const char* const kSourceTree = HETSCHED_SOURCE_DIR_VALUE;
const char* const kBuiltBinary = HETSCHED_BINARY_VALUE;

}  // namespace hetsched::testing
