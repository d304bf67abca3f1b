#include "util/sorted_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace hetsched::util {
namespace {

size_t Expected(const std::vector<double>& sorted, double x) {
  return static_cast<size_t>(std::upper_bound(sorted.begin(), sorted.end(), x) - sorted.begin());
}

TEST(UpperBoundIndex, FindsWhatStdUpperBoundFinds) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> value(0, 20);  // few values: many ties
  int64_t checked = 0, inside = 0;
  for (size_t n = 0; n <= 70; ++n) {
    for (int round = 0; round < 20; ++round) {
      std::vector<double> sorted(n);
      for (double& v : sorted) v = value(rng) * 0.5;
      std::sort(sorted.begin(), sorted.end());
      std::vector<double> probes = {-1, 11, std::numeric_limits<double>::quiet_NaN(),
                                    -std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::infinity()};
      for (double v : sorted) {
        probes.push_back(v);  // on an element, among its ties
        probes.push_back(std::nextafter(v, -1e300));
        probes.push_back(std::nextafter(v, 1e300));
      }
      for (double x : probes) {
        const size_t want = Expected(sorted, x);
        ASSERT_EQ(UpperBoundIndex(sorted, x), want) << "n " << n << " x " << x;
        ++checked;
        if (want > 0 && want < n) ++inside;
      }
    }
  }
  EXPECT_GT(inside, checked / 2);  // most probes fall strictly inside the array
}

TEST(UpperBoundIndex, NaNGoesPastTheEndAsWithStdUpperBound) {
  const std::vector<double> sorted = {0, 1, 2};
  EXPECT_EQ(UpperBoundIndex(sorted, std::numeric_limits<double>::quiet_NaN()), 3u);
  EXPECT_EQ(UpperBoundIndex(std::vector<double>{}, 1.0), 0u);
}

}  // namespace
}  // namespace hetsched::util
