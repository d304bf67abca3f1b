#include "cost/transfer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace hetsched::cost {
namespace {

model::Path MakePath(model::Distance distance, double bandwidth, double latency_s) {
  model::Path p;
  p.distance = distance;
  p.bandwidth = bandwidth;
  p.latency_s = latency_s;
  return p;
}

TEST(Transfer, LatencyPlusBytesOverBandwidth) {
  const model::Path node = MakePath(model::Distance::kNode, 10e9, 1e-5);
  EXPECT_DOUBLE_EQ(TransferSeconds(node, 1'000'000'000ull), 1e-5 + 0.1);
  EXPECT_EQ(TransferSeconds(node, 0), 0);
}

TEST(Transfer, SameDeviceIsFree) {
  const model::Path same =
      MakePath(model::Distance::kSameDevice, std::numeric_limits<double>::infinity(), 0);
  EXPECT_EQ(TransferSeconds(same, 1'000'000'000ull), 0);
}

TEST(Transfer, NoBandwidthIsInfinite) {
  EXPECT_TRUE(std::isinf(TransferSeconds(MakePath(model::Distance::kNetwork, 0, 1e-3), 1)));
}

TEST(Transfer, RingAllReduce) {
  const model::Path hop = MakePath(model::Distance::kNode, 10e9, 1e-5);
  // n = 4: 2 x 3 / 4 x 1e9 / 10e9 = 0.15 s, plus 6 latencies.
  EXPECT_DOUBLE_EQ(RingAllReduceSeconds(1'000'000'000ull, 4, hop), 0.15 + 6e-5);
  // n = 2: 2 x 1 / 2 x 0.1 = 0.1 s, plus 2 latencies.
  EXPECT_DOUBLE_EQ(RingAllReduceSeconds(1'000'000'000ull, 2, hop), 0.1 + 2e-5);
  EXPECT_EQ(RingAllReduceSeconds(1'000'000'000ull, 1, hop), 0);
  EXPECT_EQ(RingAllReduceSeconds(0, 8, hop), 0);
  EXPECT_TRUE(std::isinf(RingAllReduceSeconds(1, 2, MakePath(model::Distance::kNetwork, 0, 0))));
}

TEST(Transfer, OverALinkGivenByItsFigures) {
  // 1e9 bytes at 10 GB/s: 0.1 s plus the latency; a quarter of that buffer: 0.025 s.
  EXPECT_DOUBLE_EQ(TransferSeconds(1e9, 10e9, 1e-5), 1e-5 + 0.1);
  EXPECT_DOUBLE_EQ(TransferSeconds(2.5e8, 10e9, 0), 0.025);
  EXPECT_EQ(TransferSeconds(0, 10e9, 1e-5), 0);  // nothing to move pays no latency
  EXPECT_EQ(TransferSeconds(0, 0, 1e-5), 0);
  EXPECT_TRUE(std::isinf(TransferSeconds(1, 0, 1e-3)));
  // A path's transfer is the same formula on its bandwidth and latency.
  const model::Path node = MakePath(model::Distance::kNode, 10e9, 1e-5);
  EXPECT_EQ(TransferSeconds(node, 1'000'000'000ull), TransferSeconds(1e9, 10e9, 1e-5));
}

TEST(Transfer, RingAllReduceBytes) {
  // n = 4: each worker sends 2 x 3 / 4 = 1.5 buffers, the ring 2 x 3 = 6.
  EXPECT_DOUBLE_EQ(RingAllReduceBytesPerWorker(1e9, 4), 1.5e9);
  EXPECT_DOUBLE_EQ(RingAllReduceBytesTotal(1e9, 4), 6e9);
  // n = 3: 4/3 of a 3e9 buffer is 4e9 per worker, 12e9 in all.
  EXPECT_DOUBLE_EQ(RingAllReduceBytesPerWorker(3e9, 3), 4e9);
  EXPECT_DOUBLE_EQ(RingAllReduceBytesTotal(3e9, 3), 12e9);
  EXPECT_EQ(RingAllReduceBytesPerWorker(1e9, 1), 0);
  EXPECT_EQ(RingAllReduceBytesTotal(1e9, 1), 0);
  EXPECT_EQ(RingAllReduceBytesTotal(1e9, 0), 0);
}

TEST(Transfer, RingAllReduceOverALinkGivenByItsFigures) {
  // n = 4: 1.5e9 bytes at 10 GB/s = 0.15 s, plus 6 latencies.
  EXPECT_DOUBLE_EQ(RingAllReduceSeconds(1e9, 4, 10e9, 1e-5), 0.15 + 6e-5);
  // Three all-reduces moving 1e9 bytes in all: the same bandwidth term, 3 x 6 latencies.
  EXPECT_DOUBLE_EQ(RingAllReduceSeconds(1e9, 4, 10e9, 1e-5, 3), 0.15 + 18e-5);
  // A fractional buffer (a tensor-parallel share): 2 x 1 / 2 x 0.5 bytes at 1 B/s.
  EXPECT_DOUBLE_EQ(RingAllReduceSeconds(0.5, 2, 1, 0), 0.5);
  EXPECT_EQ(RingAllReduceSeconds(1e9, 1, 10e9, 1e-5), 0);
  EXPECT_EQ(RingAllReduceSeconds(0.0, 8, 0, 1e-5), 0);
  EXPECT_TRUE(std::isinf(RingAllReduceSeconds(1.0, 2, 0, 0)));
  // The bottleneck-path overload is this formula on the path's bandwidth and latency.
  const model::Path hop = MakePath(model::Distance::kNode, 10e9, 1e-5);
  for (const int n : {2, 3, 4, 7, 64}) {
    EXPECT_EQ(RingAllReduceSeconds(1'234'567'891ull, n, hop),
              RingAllReduceSeconds(1234567891.0, n, 10e9, 1e-5))
        << n;
  }
}

TEST(Transfer, WorstOfTakesTheSlowestHop) {
  const model::Path worst =
      WorstOf({MakePath(model::Distance::kIsland, 300e9, 1e-6),
               MakePath(model::Distance::kNode, 25e9, 5e-6),
               MakePath(model::Distance::kSameDevice, std::numeric_limits<double>::infinity(), 0),
               MakePath(model::Distance::kPcieSwitch, 30e9, 8e-6)});
  EXPECT_EQ(worst.distance, model::Distance::kNode);
  EXPECT_DOUBLE_EQ(worst.bandwidth, 25e9);
  EXPECT_DOUBLE_EQ(worst.latency_s, 8e-6);
  EXPECT_EQ(WorstOf({}).distance, model::Distance::kSameDevice);
  EXPECT_EQ(RingAllReduceSeconds(1000, 4, WorstOf({})), 0);
}

}  // namespace
}  // namespace hetsched::cost
