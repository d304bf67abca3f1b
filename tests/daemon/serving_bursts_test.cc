#include "daemon/serving_bursts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "model/request_stream.h"
#include "sched/replica_plan.h"

namespace hetsched::svc {
namespace {

// Arrivals [from_s, to_s) of `arrivals` (sorted).
double Count(const std::vector<model::InferenceRequest>& arrivals, double from_s, double to_s) {
  double n = 0;
  for (const model::InferenceRequest& q : arrivals)
    n += q.arrival_s >= from_s && q.arrival_s < to_s;
  return n;
}

// Three minutes of 2 requests/s, evenly spaced, with 60 more in each of two seconds: the
// interval means barely move, the 10-second windows do.
std::vector<model::InferenceRequest> BurstyArrivals() {
  std::vector<model::InferenceRequest> arrivals;
  for (int i = 0; i < 360; ++i) arrivals.push_back({i * 0.5, 8, 8});
  for (double at : {50.0, 130.0}) {
    for (int i = 0; i < 60; ++i) arrivals.push_back({at + i / 60.0, 8, 8});
  }
  std::sort(arrivals.begin(), arrivals.end(),
            [](const auto& a, const auto& b) { return a.arrival_s < b.arrival_s; });
  return arrivals;
}

TEST(BurstWindows, GiveTheSimulatorsForecastForTheSameArrivals) {
  const std::vector<model::InferenceRequest> arrivals = BurstyArrivals();
  const double interval_s = 60, now = 180, headroom = 0.2;
  // The daemon's reads every 5 s, each counting what arrived since the one before (a replica
  // counts a request once it completes; here at once).
  BurstWindows windows(sched::kBurstWindowS);
  for (double t = 0; t <= now; t += 5) windows.Add(t, Count(arrivals, t - 5, t), true);
  std::vector<double> recent, rates;
  for (double t = 0; t < now; t += interval_s) {
    recent.push_back(Count(arrivals, t, t + interval_s) / interval_s);
  }
  double length = 0;
  const std::vector<BurstWindows::Window> closed = windows.Since(now - 3 * interval_s);
  ASSERT_EQ(closed.size(), 18u);
  for (const BurstWindows::Window& w : closed) {
    rates.push_back(w.rate);
    length += w.length_s / static_cast<double>(closed.size());
  }
  EXPECT_DOUBLE_EQ(length, 10);
  EXPECT_DOUBLE_EQ(closed[5].rate, 8);  // [50, 60): 20 spaced out and the burst's 60
  const double forecast = sched::ForecastRequestRate(recent, rates, length, headroom);
  EXPECT_DOUBLE_EQ(forecast, sched::ForecastAt(arrivals, now, interval_s, headroom).requests_per_s);
  // The interval means (3, 2, 3 requests/s) give the newest one's trend, 4, plus 20 %; the
  // bursts raise it above that.
  const double steady = sched::ForecastRequestRate(recent, {}, 0, headroom);
  EXPECT_DOUBLE_EQ(steady, 4.8);
  EXPECT_GT(forecast, steady + 1);
}

TEST(BurstWindows, CloseAtTheFirstReadAWindowAfterTheyOpenedAndKeepOnlyCountedOnes) {
  BurstWindows windows(10);
  windows.Add(100, 50, true);  // opens the first window: what came before it is not its
  windows.Add(106, 12, true);
  windows.Add(112, 12, true);  // 24 in 12 s
  windows.Add(118, 0, false);  // no replica counts requests (llama.cpp): measured nothing
  windows.Add(124, 0, false);
  windows.Add(130, 30, true);
  windows.Add(135, 0, true);  // 30 in 11 s
  std::vector<BurstWindows::Window> closed = windows.Since(0);
  ASSERT_EQ(closed.size(), 2u);
  EXPECT_DOUBLE_EQ(closed[0].end_s, 112);
  EXPECT_DOUBLE_EQ(closed[0].length_s, 12);
  EXPECT_DOUBLE_EQ(closed[0].rate, 2);
  EXPECT_DOUBLE_EQ(closed[1].end_s, 135);
  EXPECT_DOUBLE_EQ(closed[1].length_s, 11);
  EXPECT_NEAR(closed[1].rate, 30.0 / 11, 1e-12);
  // Those that ended by the span's start are forgotten, also by what Persist writes.
  closed = windows.Since(112);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_DOUBLE_EQ(closed[0].end_s, 135);
  EXPECT_EQ(windows.closed().size(), 1u);

  BurstWindows restored(10);
  restored.Restore({{140, 10, 4}});
  restored.Add(150, 99, true);  // a restarted daemon's first read only opens a window
  ASSERT_EQ(restored.Since(0).size(), 1u);
  EXPECT_DOUBLE_EQ(restored.Since(0)[0].rate, 4);
}

}  // namespace
}  // namespace hetsched::svc
