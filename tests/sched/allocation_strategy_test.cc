#include "sched/allocation_strategy.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "sched/core_harness.h"
#include "sched/test_cluster.h"

namespace hetsched::sched {
namespace {

using testing::CoreHarness;
using testing::MakeCluster;
using testing::MakeJob;
using testing::PreemptedIds;

// Every decision re-realizes the shares; a preemption costs 10 s, the quantum is 100 s.
SchedulerOptions Options() {
  SchedulerOptions o;
  o.preempt_interval_s = 0;
  o.preemption_cost_s = 10;
  o.preempt_quantum_s = 100;
  return o;
}

const AllocationPolicy& LpPolicy(CoreHarness& h) {
  return dynamic_cast<const AllocationPolicy&>(h.core().policy());
}

TEST(AllocationStrategy, EqualSharesAreRealizedOverQuanta) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  CoreHarness h(c, "maxmin", Options());
  AllocationStrategy s(h.core(), LpPolicy(h));
  h.Admit(MakeJob(0, 0, 0, {{"nv", 1.0}}), 0);
  h.Admit(MakeJob(1, 0, 0, {{"nv", 1.0}}), 0);
  Decision d = h.Decide(s, 0);
  const model::DeviceTypeId nv(0);
  EXPECT_NEAR(s.TargetShare(model::JobId(0), nv), 0.5, 1e-6);
  EXPECT_NEAR(s.TargetShare(model::JobId(1), nv), 0.5, 1e-6);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job.value(), 0);  // a tie: submission order
  // Job 1 has received nothing of its share, but job 0 keeps the device for its quantum.
  d = h.Decide(s, 50);
  EXPECT_TRUE(d.preempted.empty());
  EXPECT_TRUE(d.placed.empty());
  d = h.Decide(s, 100);
  EXPECT_EQ(PreemptedIds(d), (std::vector<int>{0}));
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job.value(), 1);
  EXPECT_GE(s.solves(), 1);
  EXPECT_EQ(s.failures(), 0);
}

TEST(AllocationStrategy, MaxThroughputGivesEachTypeToWhoGainsMost) {
  const auto c = MakeCluster({{"slow", "cuda", 1, 1}, {"fast", "cuda", 1, 1}});
  CoreHarness h(c, "max-throughput", Options());
  AllocationStrategy s(h.core(), LpPolicy(h));
  // Normalized: job 0 makes 0.5 of its best on slow, job 1 0.1: job 1 gets fast.
  h.Admit(MakeJob(0, 0, 0, {{"slow", 1.0}, {"fast", 2.0}}), 0);
  h.Admit(MakeJob(1, 0, 0, {{"slow", 1.0}, {"fast", 10.0}}), 0);
  const Decision d = h.Decide(s, 0);
  const model::DeviceTypeId slow(0), fast(1);
  EXPECT_NEAR(s.TargetShare(model::JobId(1), fast), 1.0, 1e-6);
  EXPECT_NEAR(s.TargetShare(model::JobId(0), slow), 1.0, 1e-6);
  EXPECT_EQ(h.PlacedTypes(d, 2), (std::vector<std::string>{"slow", "fast"}));
}

TEST(AllocationStrategy, NoShareAndNoPlacementWhereTheStackDoesNotRun) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}, {"amd", "rocm", 1, 1}});
  CoreHarness h(c, "max-throughput", Options());
  AllocationStrategy s(h.core(), LpPolicy(h));
  // Two ROCm jobs that list a (fast) speed on nv: one runs on amd, the other waits although
  // nv is free.
  h.Admit(MakeJob(0, 0, 0, {{"nv", 9.0}, {"amd", 1.0}}, 1, "rocm"), 0);
  h.Admit(MakeJob(1, 0, 0, {{"nv", 9.0}, {"amd", 1.0}}, 1, "rocm"), 0);
  const Decision d = h.Decide(s, 0);
  const model::DeviceTypeId nv(0);
  EXPECT_EQ(s.TargetShare(model::JobId(0), nv), 0);
  EXPECT_EQ(s.TargetShare(model::JobId(1), nv), 0);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(c.catalog.Get(d.placed[0].type).name, "amd");
  EXPECT_EQ(h.core().state().FreeOfType(nv), 1);
}

TEST(AllocationStrategy, NonPreemptibleJobsKeepTheirDevices) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  CoreHarness h(c, "maxmin", Options());
  AllocationStrategy s(h.core(), LpPolicy(h));
  model::Job pinned_run = MakeJob(0, 0, 0, {{"nv", 1.0}});
  pinned_run.preemptible = false;
  h.Admit(pinned_run, 0);
  h.Decide(s, 0);
  h.Admit(MakeJob(1, 1, 0, {{"nv", 1.0}}), 1);
  // Long past any quantum: job 0 still runs, and the LP saw no capacity for job 1.
  const Decision d = h.Decide(s, 1000);
  EXPECT_TRUE(d.preempted.empty());
  EXPECT_TRUE(d.placed.empty());
  EXPECT_EQ(s.TargetShare(model::JobId(1), model::DeviceTypeId(0)), 0);
}

TEST(AllocationStrategy, HistoryRoundTripsAndIsForgottenWhenTheJobLeaves) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  CoreHarness h(c, "maxmin", Options());
  AllocationStrategy s(h.core(), LpPolicy(h));
  h.Admit(MakeJob(0, 0, 0, {{"nv", 1.0}}), 0);
  h.Decide(s, 0);
  h.Decide(s, 40);  // booked up to here; it runs on after
  JobHistory history;
  s.ExportHistory(0, 70, history);
  EXPECT_EQ(history.received_s, (std::vector<std::pair<std::string, double>>{{"nv", 70.0}}));
  // Another strategy on the same core takes the history back (a daemon's restart).
  AllocationStrategy restored(h.core(), LpPolicy(h));
  restored.ImportHistory(0, history);
  JobHistory again;
  restored.ExportHistory(0, 70, again);
  EXPECT_EQ(again.received_s, history.received_s);
  EXPECT_NEAR(s.TargetShare(model::JobId(0), model::DeviceTypeId(0)), 1.0, 1e-6);
  h.Finish(s, 0, 80);
  EXPECT_EQ(s.TargetShare(model::JobId(0), model::DeviceTypeId(0)), 0);
}

}  // namespace
}  // namespace hetsched::sched
