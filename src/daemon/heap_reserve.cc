#include "daemon/heap_reserve.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#if HETSCHED_GLIBC_MALLOC
#include <malloc.h>
#endif

namespace hetsched::svc {

namespace {

constexpr uintptr_t kHugePageBytes = 2 << 20;    // x86-64's and arm64's (4 KiB base pages) PMD size
constexpr int kGlibcMmapThreshold = 128 * 1024;  // its default
constexpr int kLargestMmapThreshold = 32 * 1024 * 1024;  // the most mallopt takes on 64 bits
static_assert(HeapReserve::kBlockBytes < kLargestMmapThreshold);

}  // namespace

HeapReserve::HeapReserve(size_t bytes) {
  if (bytes == 0) return;
#if !HETSCHED_GLIBC_MALLOC
  problem_ = "malloc is not glibc's (another libc, or AddressSanitizer's)";
#else
  const size_t blocks = (bytes + kBlockBytes - 1) / kBlockBytes;
  std::vector<void*> got;
  got.reserve(blocks + 1);
  auto* const begin = static_cast<char*>(sbrk(0));
  // Blocks of kBlockBytes come from the heap (brk) while the threshold is above them.
  if (mallopt(M_MMAP_THRESHOLD, kLargestMmapThreshold) != 1) {
    problem_ = "malloc refused a larger mmap threshold";
    return;
  }
  raised_ = true;
  for (size_t i = 0; i <= blocks; ++i) {  // the last one is the fence
    void* p = std::malloc(kBlockBytes);
    if (p == nullptr) break;
    got.push_back(p);
  }
  auto* const end = static_cast<char*>(sbrk(0));
  // The first block may start in the heap's old top, below `begin`.
  const auto in_stretch = [&](void* p) {
    return static_cast<char*>(p) + kBlockBytes > begin &&
           static_cast<char*>(p) + kBlockBytes <= end;
  };
  bool from_heap = got.size() == blocks + 1;
  for (void* p : got) from_heap = from_heap && in_stretch(p);
  if (from_heap) {
    const uintptr_t first =
        (reinterpret_cast<uintptr_t>(begin) + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
    const uintptr_t last = reinterpret_cast<uintptr_t>(end) & ~(kHugePageBytes - 1);
    if (last > first && madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE) == 0) {
      advised_ = last - first;
      advised_begin_ = first;
    } else {
      problem_ = last > first ? fmt::format("madvise(MADV_HUGEPAGE): {}", std::strerror(errno))
                              : "the heap grew by less than a huge page";
    }
  } else {
    problem_ = got.size() == blocks + 1
                   ? "the blocks did not come from the main heap (not glibc's main arena)"
                   : "out of memory";
  }
  if (!got.empty() && problem_.empty()) {
    fence_ = got.back();
    got.pop_back();
  }
  // Merged into one free chunk, before the fence: malloc splits it for what comes next.
  for (void* p : got) std::free(p);
#endif
}

HeapReserve::~HeapReserve() {
#if HETSCHED_GLIBC_MALLOC
  if (raised_) mallopt(M_MMAP_THRESHOLD, kGlibcMmapThreshold);
#endif
  std::free(fence_);
}

}  // namespace hetsched::svc
