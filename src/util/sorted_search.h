// UpperBoundIndex: std::upper_bound over a sorted array of doubles, as an index, without a
// branch on the comparisons, for small tables searched in hot loops (sched/size_belief.h ranks
// every running job's key by one at each full decision).
#pragma once

#include <cstddef>
#include <span>

namespace hetsched::util {

// The index std::upper_bound(sorted.begin(), sorted.end(), x) - sorted.begin() finds: the first
// element x is less than, sorted.size() when none (x NaN included). `sorted` ascending. Each
// step compares as std::upper_bound does (x < element), so the answer is the same bit for bit;
// the steps pick the half by a conditional move, not a branch the processor may mispredict
// (log2(n) + 1 comparisons whatever the answer).
inline size_t UpperBoundIndex(std::span<const double> sorted, double x) {
  if (sorted.empty()) return 0;
  const double* base = sorted.data();
  size_t n = sorted.size();
  // The answer lies in [base, base + n]: every element before base is not above x.
  while (n > 1) {
    const size_t half = n / 2;
    base = x < base[half] ? base : base + half;
    n -= half;
  }
  return static_cast<size_t>(base - sorted.data()) + (x < *base ? 0 : 1);
}

}  // namespace hetsched::util
