// PreemptiveStrategy::SelectByStart against the full walk it stands in for (las and las-het on
// random arrivals and completions, each followed by a full decision, once with it and once
// walking every job), and its index of running jobs by run start (RunningByStart).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "sched/core_harness.h"
#include "sched/preemptive_strategy.h"
#include "sched/running_by_start.h"
#include "sched/test_cluster.h"

namespace hetsched::sched {
namespace {

using testing::CoreHarness;
using testing::MakeCluster;
using testing::MakeJob;

struct Counts {
  int64_t by_start = 0, full = 0, preempted = 0, placed = 0;
};

// Speeds from small sets, gangs 1, 2 and 4, one in ten not preemptible, one in four weighted.
model::Job RandomJob(int id, double now_s, std::mt19937& rng) {
  const double fast = 1.0 + static_cast<double>(rng() % 3), mid = 1.0 + (rng() % 2) * 0.5;
  model::Job j = MakeJob(id, now_s, 0, {{"fast", fast}, {"mid", mid}, {"slow", 1.0}},
                         1 << static_cast<int>(rng() % 3));
  j.preemptible = rng() % 10 != 0;
  if (rng() % 4 == 0) j.priority_weight = 0.5 + static_cast<double>(rng() % 4);
  return j;
}

// `cost_s`: what a preemption costs (0: no quantum, every running job movable; else the
// default quantum of 40 costs keeps started jobs in place). `checkpointed`: a preempted job
// holds its devices until the next arrival (stop_holds_devices).
void ExpectSameAsTheFullWalk(const char* policy, uint32_t seed, double cost_s, int max_gap_s,
                             bool checkpointed, Counts& counts) {
  const auto c =
      MakeCluster({{"fast", "cuda", 2, 4}, {"mid", "cuda", 2, 4}, {"slow", "cuda", 3, 4}});
  SchedulerOptions options;
  options.preempt_interval_s = 0;
  options.preemption_cost_s = cost_s;
  options.stop_holds_devices = checkpointed;
  CoreHarness a(c, policy, options), b(c, policy, options);
  PreemptiveStrategy by_start(a.core()), walked(b.core(), true, true, /*by_start=*/false);
  std::mt19937 rng(seed);
  std::vector<int> live, stopping;
  double now = 0;
  const auto decide = [&](int step) {
    const Decision d = a.Decide(by_start, now);
    const Decision full = b.Decide(walked, now);
    counts.preempted += static_cast<int64_t>(d.preempted.size());
    counts.placed += static_cast<int64_t>(d.placed.size());
    testing::ExpectSameDecision(d, full, step);
    for (model::JobId id : d.preempted) {
      if (a.record(id.value()).phase == JobPhase::kStopping) stopping.push_back(id.value());
    }
  };
  for (int id = 0; id < 300; ++id) {
    now += static_cast<double>(rng() % max_gap_s);
    for (int s : stopping) {
      a.Stopped(s, now);
      b.Stopped(s, now);
    }
    stopping.clear();
    const model::Job j = RandomJob(id, now, rng);
    a.Admit(j, now);
    b.Admit(j, now);
    live.push_back(id);
    // Up to two completions, each followed by a decision, then the arrival's decision; every
    // third arrival waits for the next decision, so that queues build up.
    for (int k = static_cast<int>(rng() % 3); k > 0 && !live.empty(); --k) {
      const size_t at = rng() % live.size();
      if (a.record(live[at]).phase != JobPhase::kRunning) continue;
      a.Finish(by_start, live[at], now);
      b.Finish(walked, live[at], now);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
      ASSERT_NO_FATAL_FAILURE(decide(id));
    }
    if (rng() % 3 == 0) continue;
    ASSERT_NO_FATAL_FAILURE(decide(id));
  }
  EXPECT_EQ(walked.by_start_decisions(), 0);
  EXPECT_EQ(by_start.full_decisions(), walked.full_decisions());
  counts.by_start += by_start.by_start_decisions();
  counts.full += by_start.full_decisions();
}

// Loaded (queues, stops and moves) and light, with free and costly preemptions, checkpoints
// written at once or held, on five seeds each.
TEST(SelectByStart, DecidesAsTheFullWalk) {
  for (const char* policy : {"las", "las-het"}) {
    for (double cost_s : {0.0, 30.0}) {
      for (int max_gap_s : {20, 400}) {
        for (bool checkpointed : {false, true}) {
          SCOPED_TRACE(::testing::Message() << policy << " cost " << cost_s << " gap " << max_gap_s
                                            << " checkpointed " << checkpointed);
          Counts counts;
          for (uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
            ExpectSameAsTheFullWalk(policy, seed, cost_s, max_gap_s, checkpointed, counts);
            ASSERT_FALSE(HasFatalFailure());
          }
          // Every full decision was SelectByStart's, and they did something.
          EXPECT_EQ(counts.by_start, counts.full);
          EXPECT_GT(counts.full, 500);
          EXPECT_GT(counts.placed, 100);
          if (max_gap_s == 20) {
            EXPECT_GT(counts.preempted, 10);
          }
        }
      }
    }
  }
}

// Policies without time slices or with changing queued keys, a plan or tenants keep the
// full walk: a job of higher priority arriving 10 s after another started takes its device at
// once under `priority`, which has no quantum (the quantum of 40 s at a cost of 1 s is not its).
TEST(SelectByStart, OnlyLasPoliciesTakeIt) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}});
  SchedulerOptions options;
  options.preempt_interval_s = 0;
  options.preemption_cost_s = 1;
  for (const char* policy : {"priority", "fifo-het", "srpt-het", "srpt-het-fair", "las"}) {
    CoreHarness h(c, policy, options);
    PreemptiveStrategy s(h.core());
    h.Admit(MakeJob(0, 0, 0, {{"fast", 1.0}}, 1), 0);
    h.Decide(s, 0);
    model::Job urgent = MakeJob(1, 10, 0, {{"fast", 1.0}}, 1);
    urgent.priority = 5;
    h.Admit(urgent, 10);
    const Decision d = h.Decide(s, 10);
    const bool las = std::string_view(policy) == "las";
    EXPECT_EQ(s.by_start_decisions() > 0, las) << policy;
    if (std::string_view(policy) == "priority") {
      EXPECT_EQ(testing::PreemptedIds(d), std::vector<int>{0});
    }
  }
}

// Starts queued `id` at `now_s` on the first device type with room.
void StartAt(CoreHarness& h, int id, double now_s) {
  auto devices = h.core().PlaceOn(h.record(id), model::DeviceTypeId(0));
  ASSERT_TRUE(devices.has_value());
  h.core().Start(id, model::DeviceTypeId(0), std::move(*devices), now_s, /*migrated=*/false);
}

std::vector<int32_t> PastQuantum(RunningByStart& index, SchedulerCore& core, double now_s) {
  index.Sync(core);
  std::vector<int32_t> ids;
  index.PastQuantum(core, now_s, ids);
  return ids;
}

// The jobs past their quantum (40 s at a cost of 1 s) are found in run-start order, those that
// stopped are dropped as the walk reaches them, and starts filed out of time order (a clock
// that went back) take their place by run start.
TEST(RunningByStart, FindsTheJobsPastTheirQuantum) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 8}});
  SchedulerOptions options;
  options.preemption_cost_s = 1;
  CoreHarness h(c, "las", options);
  h.core().TrackRunningChanges();
  for (int id = 0; id < 5; ++id) h.Admit(MakeJob(id, 0, 0, {{"fast", 1.0}}, 1), 0);
  RunningByStart index;
  ASSERT_NO_FATAL_FAILURE(StartAt(h, 0, 100));
  EXPECT_EQ(PastQuantum(index, h.core(), 120), std::vector<int32_t>{});  // filed afresh
  ASSERT_NO_FATAL_FAILURE(StartAt(h, 1, 50));
  ASSERT_NO_FATAL_FAILURE(StartAt(h, 2, 200));
  EXPECT_EQ(PastQuantum(index, h.core(), 120), std::vector<int32_t>{1});
  EXPECT_EQ(PastQuantum(index, h.core(), 140), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(PastQuantum(index, h.core(), 139.5), std::vector<int32_t>{1});
  EXPECT_EQ(index.entries(), 3u);
  // Jobs 1 and 0 stop, 1 starts again later: their old entries go as the walk reaches them.
  Decision out;
  h.core().Preempt(1, 150, out);
  h.core().Preempt(0, 150, out);
  ASSERT_NO_FATAL_FAILURE(StartAt(h, 1, 160));
  ASSERT_NO_FATAL_FAILURE(StartAt(h, 3, 160));
  EXPECT_EQ(index.entries(), 3u);  // not synced yet
  EXPECT_EQ(PastQuantum(index, h.core(), 190), std::vector<int32_t>{});
  EXPECT_EQ(index.entries(), 3u);
  // Job 2 stops: its entry is kept while inside the quantum's reach, then dropped.
  h.core().Preempt(2, 205, out);
  EXPECT_EQ(PastQuantum(index, h.core(), 210), (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(index.entries(), 3u);
  EXPECT_EQ(PastQuantum(index, h.core(), 240), (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(index.entries(), 2u);
  // A job started, stopped and started again between two syncs is filed once, by its last
  // start.
  ASSERT_NO_FATAL_FAILURE(StartAt(h, 2, 250));
  h.core().Preempt(2, 250, out);
  ASSERT_NO_FATAL_FAILURE(StartAt(h, 2, 260));
  EXPECT_EQ(PastQuantum(index, h.core(), 299), (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(PastQuantum(index, h.core(), 300), (std::vector<int32_t>{1, 3, 2}));
  EXPECT_EQ(index.entries(), 3u);
}

}  // namespace
}  // namespace hetsched::sched
