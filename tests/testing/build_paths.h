// Where tests find the source tree and the built hetsched binary. The build gives these paths to
// tests/testing/build_paths.cc alone, so every other test file compiles the same in any clone
// (and a compiler cache shared by clones in different folders reuses their objects).
#pragma once

namespace hetsched::testing {

extern const char* const kSourceTree;   // the source tree's root, absolute
extern const char* const kBuiltBinary;  // the hetsched binary built beside the tests, absolute

}  // namespace hetsched::testing

#define HETSCHED_SOURCE_DIR ::hetsched::testing::kSourceTree
#define HETSCHED_BINARY ::hetsched::testing::kBuiltBinary
