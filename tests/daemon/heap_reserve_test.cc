#include "daemon/heap_reserve.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace hetsched::svc {
namespace {

// The mapping of /proc/self/smaps that holds `address`: its header line and its VmFlags
// line, or empty strings when none holds it.
struct Mapping {
  std::string header;
  std::string flags;
};
Mapping MappingOf(uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  Mapping found;
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    // A mapping's line starts with its range ("55d0c4a00000-55d0c6c00000 rw-p ..."), each of
    // its fields' with a name and a colon ("VmFlags: rd wr ...").
    const std::string first = line.substr(0, line.find(' '));
    unsigned long begin = 0, end = 0;
    if (!first.empty() && first.back() != ':' &&
        std::sscanf(first.c_str(), "%lx-%lx", &begin, &end) == 2) {
      inside = address >= begin && address < end;
      if (inside) found.header = line;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      found.flags = line;
    }
  }
  return found;
}

// On the main thread (glibc's main arena) the stretch is the heap's, advised for huge pages
// (smaps shows `hg`); once the reserve is gone, the heap gives the stretch back.
TEST(HeapReserve, AdvisesHugePagesOnTheMainHeapAndGivesTheStretchBack) {
  if (!HETSCHED_GLIBC_MALLOC) GTEST_SKIP() << "malloc is not glibc's";
  char* during = nullptr;
  {
    HeapReserve reserve(64 << 20);
    ASSERT_EQ(reserve.problem(), "");
    EXPECT_GE(reserve.advised(), size_t{64 << 20});
    during = static_cast<char*>(sbrk(0));
    const Mapping m = MappingOf(reserve.advised_begin());
    EXPECT_NE(m.header.find("[heap]"), std::string::npos) << m.header;
    EXPECT_NE(m.flags.find(" hg"), std::string::npos) << m.header << "\n" << m.flags;
    // What is allocated meanwhile comes from the blocks (the first may start up to a block
    // below the advised part, in the heap's old top).
    void* p = std::malloc(100000);  // above what tcache and the small bins hold
    const auto at = reinterpret_cast<uintptr_t>(p);
    EXPECT_GT(at + HeapReserve::kBlockBytes, reserve.advised_begin());
    EXPECT_LT(at, reserve.advised_begin() + reserve.advised());
    std::free(p);
  }
  EXPECT_LT(static_cast<char*>(sbrk(0)) + (32 << 20), during);
}

// Under AddressSanitizer (make asan) the reserve does nothing and says why.
TEST(HeapReserve, WithAnotherMallocItSaysWhy) {
  if (HETSCHED_GLIBC_MALLOC) GTEST_SKIP() << "malloc is glibc's";
  HeapReserve reserve(64 << 20);
  EXPECT_EQ(reserve.advised(), 0U);
  EXPECT_EQ(reserve.problem(), "malloc is not glibc's (another libc, or AddressSanitizer's)");
}

TEST(HeapReserve, ReservesNothingForNothing) {
  HeapReserve reserve(0);
  EXPECT_EQ(reserve.advised(), 0U);
  EXPECT_EQ(reserve.problem(), "");
}

// Another thread's allocations come from another arena (not brk): nothing is advised, and the
// reserve says why.
TEST(HeapReserve, ElsewhereThanTheMainArenaItSaysWhy) {
  if (!HETSCHED_GLIBC_MALLOC) GTEST_SKIP() << "malloc is not glibc's";
  size_t advised = 1;
  std::string problem;
  std::thread([&] {
    HeapReserve reserve(64 << 20);
    advised = reserve.advised();
    problem = reserve.problem();
  }).join();
  EXPECT_EQ(advised, 0U);
  EXPECT_EQ(problem, "the blocks did not come from the main heap (not glibc's main arena)");
}

}  // namespace
}  // namespace hetsched::svc
