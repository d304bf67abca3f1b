// Replica planning for services (sched/replica_plan.h): the forecast (from rates, and from
// arrivals), and the integer program's choices on cases small enough to check by hand.
#include "sched/replica_plan.h"

#include <gtest/gtest.h>

#include <cmath>

namespace hetsched::sched {
namespace {

TEST(ForecastRequestRate, BusiestRecentOrTrendPlusHeadroomAndAtLeastTheBursts) {
  // Rising 1, 2, 3: the trend carries 3 + (3 - 2) = 4 ahead; 20 % headroom: 4.8.
  EXPECT_DOUBLE_EQ(ForecastRequestRate({1, 2, 3}, {}, 10, 0.2), 4.8);
  // Falling 5, 2, 1: the busiest of the window still counts (scale-down waits), 6.
  EXPECT_DOUBLE_EQ(ForecastRequestRate({5, 2, 1}, {}, 10, 0.2), 6);
  // Bursts: 10-second windows at 1 request/s but two, at 50 and 9. Their 99th percentile (of
  // 101 windows, the 100th smallest) is 9/s; Poisson arrivals at their mean (about 1.56/s,
  // 15.6 per window) reach 26 in a window at the 99th percentile, 2.6/s. The excess, 6.4/s,
  // comes on top of the mean.
  std::vector<double> bursts(101, 1.0);
  bursts[7] = 50;
  bursts[8] = 9;
  const double mean = (99 + 50 + 9) / 101.0;
  ASSERT_EQ(PoissonQuantile(mean * 10, 0.99), 26);
  EXPECT_DOUBLE_EQ(ForecastRequestRate({1}, bursts, 10, 0.2), mean + 9 - 2.6);
  // Windows as steady as Poisson's add nothing to the trend and headroom.
  std::vector<double> steady(100, 2.0);
  steady[0] = 3;
  EXPECT_DOUBLE_EQ(ForecastRequestRate({2}, steady, 10, 0.2), 2.4);
  EXPECT_DOUBLE_EQ(ForecastRequestRate({}, {}, 10, 0.2), 0);
}

// Evenly spaced arrivals: 1/s over [0, 100 s), 2/s, 3/s, then 1/s again over [300, 400).
std::vector<model::InferenceRequest> Steps() {
  std::vector<model::InferenceRequest> arrivals;
  const double rates[] = {1, 2, 3, 1};
  for (int step = 0; step < 4; ++step) {
    for (int i = 0; i < 100 * rates[step]; ++i) {
      arrivals.push_back({100.0 * step + (i + 0.5) / rates[step], 100, 10});
    }
  }
  return arrivals;
}

TEST(ForecastAt, TheLastThreeIntervalsAndTheirWindows) {
  const std::vector<model::InferenceRequest> arrivals = Steps();
  // At t = 0 the first interval stands in for the history: 1/s, plus 20 %.
  EXPECT_DOUBLE_EQ(ForecastAt(arrivals, 0, 100, 0.2), 1.2);
  // At 100 s only [0, 100) has passed: what comes next is not seen.
  EXPECT_DOUBLE_EQ(ForecastAt(arrivals, 100, 100, 0.2), 1.2);
  // Rising 1, 2, 3: the trend, 4/s, plus 20 %.
  EXPECT_DOUBLE_EQ(ForecastAt(arrivals, 300, 100, 0.2), 4.8);
  // Falling to 1/s: the busiest of the last three intervals (3/s) holds the replicas.
  // Steady 10-second windows add nothing beyond Poisson's spread.
  EXPECT_DOUBLE_EQ(ForecastAt(arrivals, 400, 100, 0.2), 3.6);
  // 400 s later the window holds only the quiet intervals.
  EXPECT_DOUBLE_EQ(ForecastAt(arrivals, 700, 100, 0.2), 0);
}

TEST(PeakIntervalRate, TheBusiestIntervalWithinTheHorizon) {
  const std::vector<model::InferenceRequest> arrivals = Steps();
  EXPECT_DOUBLE_EQ(PeakIntervalRate(arrivals, 400, 100), 3);
  EXPECT_DOUBLE_EQ(PeakIntervalRate(arrivals, 200, 100), 2);
  EXPECT_DOUBLE_EQ(PeakIntervalRate({}, 400, 100), 0);
}

TEST(PoissonQuantile, MatchesTheDistribution) {
  // P(N <= 2) = 0.9197 and P(N <= 3) = 0.9810 for mean 1: the 0.95 quantile is 3.
  EXPECT_EQ(PoissonQuantile(1, 0.95), 3);
  EXPECT_EQ(PoissonQuantile(1, 0.9), 2);
  EXPECT_EQ(PoissonQuantile(10, 0.99), 18);  // tables: P(N <= 17) = 0.986, P(N <= 18) = 0.993
  EXPECT_EQ(PoissonQuantile(0, 0.99), 0);
  // Past the exact sum's range, the normal approximation: 5000 + 2.326 sqrt(5000) = 5164.5.
  EXPECT_NEAR(static_cast<double>(PoissonQuantile(5000, 0.99)), 5164, 1);
  // Near the switch both agree within a count.
  EXPECT_NEAR(static_cast<double>(PoissonQuantile(999, 0.99)), 999 + 2.3263 * std::sqrt(999.0),
              1.5);
}

// Type 0: one-device replicas, $1/h, 3 req/s; type 1: two-device replicas, $1.5/h, 6 req/s.
ServiceDemand Demand(double rate, int32_t live_a, int32_t live_b, double startup_h) {
  ServiceDemand d;
  d.requests_per_s = rate;
  d.startup_h = startup_h;
  d.shapes = {{0, 1, 1.0, 3.0, live_a}, {1, 2, 1.5, 6.0, live_b}};
  return d;
}

const std::map<std::pair<int32_t, int32_t>, int32_t> kFree = {{{0, 0}, 4}, {{1, 1}, 4}};

TEST(PlanReplicas, CheapestPerRequestCarriesTheDemand) {
  // 10 req/s: two type-1 replicas (12 req/s for 3.75 with the start penalty) beat any mix
  // with type 0 (one of each and two of type 0 would cost 4.375).
  const ReplicaPlan p = PlanReplicas({Demand(10, 0, 0, 0)}, kFree);
  ASSERT_TRUE(p.solved) << p.message;
  EXPECT_EQ(p.replicas[0], (std::vector<int32_t>{0, 2}));
  EXPECT_DOUBLE_EQ(p.uncovered[0], 0);
}

TEST(PlanReplicas, KeepsLiveReplicasWhenStartingOthersCostsMore) {
  // Four type-0 replicas run (12 req/s for 4); two new type-1 ones cost 1.5 x (1 + 1 + 0.25)
  // each = 6.75 with an hour of start-up: keep what runs.
  ReplicaPlan p = PlanReplicas({Demand(10, 4, 0, 1.0)}, kFree);
  ASSERT_TRUE(p.solved) << p.message;
  EXPECT_EQ(p.replicas[0], (std::vector<int32_t>{4, 0}));
  // Without start-up, two new type-1 replicas (3.75) are cheaper than keeping four (4).
  p = PlanReplicas({Demand(10, 4, 0, 0)}, kFree);
  EXPECT_EQ(p.replicas[0], (std::vector<int32_t>{0, 2}));
}

TEST(PlanReplicas, ReportsWhatFindsNoRoomAndKeepsOneReplicaWhenIdle) {
  // 100 req/s: every device serves (4 x 3 + 2 x 6 = 24), 76 uncovered.
  ReplicaPlan p = PlanReplicas({Demand(100, 0, 0, 0)}, kFree);
  ASSERT_TRUE(p.solved);
  EXPECT_EQ(p.replicas[0], (std::vector<int32_t>{4, 2}));
  EXPECT_NEAR(p.uncovered[0], 76, 1e-6);
  // No load: still one replica, the cheapest.
  p = PlanReplicas({Demand(0, 0, 0, 0)}, kFree);
  EXPECT_EQ(p.replicas[0], (std::vector<int32_t>{1, 0}));
}

TEST(PlanReplicas, ServicesShareATypesDevicesAndNodeSlots) {
  // Two services want type 1 (two slots of two devices on node 1): together they get two.
  ServiceDemand a = Demand(6, 0, 0, 0), b = Demand(6, 0, 0, 0);
  a.shapes[0].capacity = 0;  // a can only use type 1
  const ReplicaPlan p = PlanReplicas({a, b}, kFree);
  ASSERT_TRUE(p.solved);
  EXPECT_EQ(p.replicas[0][1] + p.replicas[1][1], 2);
  EXPECT_EQ(p.replicas[0], (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(p.replicas[1], (std::vector<int32_t>{0, 1}));  // 6 req/s: one type-1 (1.875)
}

}  // namespace
}  // namespace hetsched::sched
