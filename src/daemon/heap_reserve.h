// HeapReserve: room in glibc's main heap for what a restart is about to allocate, on
// transparent huge pages. Recovering 230,000 live jobs allocates about 500 MB in small pieces,
// and on 4 KiB pages a fifth of that CPU went to page faults (docs/benchmarks.md, "The daemon
// at scale"). glibc's tunable `glibc.malloc.hugetlb=1` has malloc advise huge pages for each
// heap extension, but it is read from the environment when the process starts. This does the
// same for one stretch of the heap, from inside the process:
//
//   - it raises M_MMAP_THRESHOLD to 32 MiB, so that blocks of kBlockBytes come from the heap
//     (below that threshold, glibc extends the heap with brk instead of mapping each block),
//     and so that the tables the caller then reserves (up to 32 MiB each) come from the
//     stretch too; its destructor sets the threshold back to glibc's default, 128 KiB (fixed
//     from then on: glibc no longer raises it when large blocks are freed);
//   - it advises MADV_HUGEPAGE on the new stretch of the heap (what glibc's tunable does), and
//     frees the blocks, which merge into one free chunk that malloc then splits for what comes
//     next (one more small block, the fence, stays allocated behind them, so that free does not
//     return the stretch to the kernel at once);
//   - its destructor frees the fence: what is left of the stretch merges into the heap's top
//     and glibc trims it as it does any top.
//
// The kernel gives huge pages to an advised stretch when its transparent huge pages are
// `madvise` or `always` (/sys/kernel/mm/transparent_hugepage/enabled); with `never` the
// advice does nothing. The blocks come from the main heap only on the thread that uses glibc's
// main arena (the daemon's main thread, which recovers); elsewhere, or on another libc, it
// reserves nothing and says why.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>  // __GLIBC__, from glibc's features.h
#include <string>

namespace hetsched::svc {

// Whether malloc is glibc's own: not under AddressSanitizer, which brings its own allocator
// (and ignores mallopt).
#if defined(__SANITIZE_ADDRESS__)
#define HETSCHED_GLIBC_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HETSCHED_GLIBC_MALLOC 0
#endif
#endif
#if !defined(HETSCHED_GLIBC_MALLOC) && defined(__GLIBC__)
#define HETSCHED_GLIBC_MALLOC 1
#elif !defined(HETSCHED_GLIBC_MALLOC)
#define HETSCHED_GLIBC_MALLOC 0
#endif

class HeapReserve {
 public:
  // Below glibc's largest mmap threshold, 32 MiB. malloc writes a header at the start of each
  // block before the advice: the 2 MiB page holding it stays on 4 KiB pages, one in 15.
  static constexpr size_t kBlockBytes = 30 << 20;

  // Reserves about `bytes` (rounded up to whole blocks; nothing for 0).
  explicit HeapReserve(size_t bytes);
  ~HeapReserve();
  HeapReserve(const HeapReserve&) = delete;
  HeapReserve& operator=(const HeapReserve&) = delete;

  // Bytes of the heap advised for huge pages (0 when none), from address advised_begin().
  size_t advised() const { return advised_; }
  uintptr_t advised_begin() const { return advised_begin_; }
  // Why nothing was advised although bytes were asked for; empty otherwise.
  const std::string& problem() const { return problem_; }

 private:
  void* fence_ = nullptr;
  bool raised_ = false;  // M_MMAP_THRESHOLD
  size_t advised_ = 0;
  uintptr_t advised_begin_ = 0;
  std::string problem_;
};

}  // namespace hetsched::svc
