#include "sched/throughput_plan.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "sched/core_harness.h"
#include "sched/lp_solver.h"
#include "sched/test_cluster.h"

namespace hetsched::sched {
namespace {

using testing::CoreHarness;
using testing::MakeCluster;
using testing::MakeJob;

// A job of the mix below: CUDA only, or CUDA and ROCm (whose checkpoint may not load across
// vendors: its class then moves with its progress), a gang of 1 or 2.
model::Job MixJob(int id, double now_s, std::mt19937& rng) {
  const double fast = 1.0 + static_cast<double>(rng() % 3);
  model::Job j = MakeJob(id, now_s, 0, {{"nv", fast}, {"nv2", 1.0}, {"amd", 1.5}},
                         1 + static_cast<int>(rng() % 2));
  if (rng() % 2 == 0) j.stacks.push_back({"rocm", ""});
  j.portable_checkpoint = rng() % 4 == 0;
  return j;
}

// A plan kept across decisions (classes cached per job) must plan exactly as one made afresh
// at each decision, while jobs start, stop, progress and finish and their slots are reused.
TEST(ThroughputPlan, KeptClassesPlanAsFreshOnes) {
  const auto c = MakeCluster({{"nv", "cuda", 2, 4}, {"nv2", "cuda", 2, 4}, {"amd", "rocm", 2, 4}});
  SchedulerOptions options;
  options.stop_holds_devices = false;
  CoreHarness h(c, "srpt-het-fair", options);
  SchedulerCore& core = h.core();
  ASSERT_GT(core.price().plan_incumbency(), 0);  // running jobs are classed by their type
  const int32_t types = core.state().type_count();
  ThroughputPlan kept(MakeClpSolver());
  std::mt19937 rng(3);
  constexpr int kSlots = 24;
  for (int id = 0; id < kSlots; ++id) h.Admit(MixJob(id, 0, rng), 0);
  double now = 0;
  int compared = 0;
  for (int step = 0; step < 300; ++step) {
    now += static_cast<double>(rng() % 200);
    core.BeginDecision(now);
    const int id = static_cast<int>(rng() % kSlots);
    const JobRecord& r = core.record(id);
    const int what = static_cast<int>(rng() % 3);
    if (r.phase == JobPhase::kQueued && what < 2) {
      const auto type = model::DeviceTypeId(static_cast<int32_t>(rng() % types));
      if (r.allowed[type.value()]) {
        if (auto devs = core.PlaceOn(r, type)) core.Start(id, type, std::move(*devs), now, false);
      }
    } else if (r.phase == JobPhase::kRunning && what == 0) {
      Decision ignored;
      core.Preempt(id, now, ignored);
    } else if (what == 2) {  // it ends; a new job takes its slot
      if (r.phase == JobPhase::kRunning) core.Leave(id, now);
      if (core.record(id).phase == JobPhase::kQueued) core.Dequeue(id);
      core.Retire(id);
      h.Admit(MixJob(id, now, rng), now);
    }
    std::vector<int32_t> jobs(core.queue());
    jobs.insert(jobs.end(), core.running().begin(), core.running().end());
    std::vector<int32_t> capacity(types);
    for (int32_t t = 0; t < types; ++t) {
      capacity[t] = core.state().TotalOfType(model::DeviceTypeId(t));
    }
    ThroughputPlan fresh(MakeClpSolver());
    ASSERT_TRUE(kept.Solve(core, jobs, capacity).ok());
    ASSERT_TRUE(fresh.Solve(core, jobs, capacity).ok());
    const std::vector<int32_t> none(types, 0);
    for (int32_t job : jobs) {
      for (int32_t prefer = -1; prefer < types; ++prefer) {
        ASSERT_EQ(kept.Pick(job, core.record(job), capacity, none, prefer),
                  fresh.Pick(job, core.record(job), capacity, none, prefer))
            << "step " << step << " job " << job;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 10000);
}

// The LP counts a class's speeds relative to its best type: waiting jobs that run on "nv"
// alone are one class whatever their speed, and so are two that run twice as fast on "nv" as
// on "amd". A running job is worth plan_incumbency more on the type it holds, its best
// included, so it is a class of its own: the plan moves it only for more than that.
TEST(ThroughputPlan, JobsOfTheSameRelativeSpeedsAreOneClassARunningOneApart) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 4}, {"amd", "rocm", 1, 2}});
  CoreHarness h(c, "srpt-het-fair", SchedulerOptions{});
  SchedulerCore& core = h.core();
  ASSERT_GT(core.price().plan_incumbency(), 0);
  h.Admit(MakeJob(0, 0, 0, {{"nv", 1.0}}), 0);
  h.Admit(MakeJob(1, 0, 0, {{"nv", 2.0}}), 0);
  h.Admit(MakeJob(2, 0, 0, {{"nv", 1.0}}), 0);
  for (int id = 3; id < 5; ++id) {
    const double speed = id - 2;
    model::Job j = MakeJob(id, 0, 0, {{"nv", speed}, {"amd", 0.5 * speed}});
    j.stacks.push_back({"rocm", ""});
    h.Admit(j, 0);
  }
  core.BeginDecision(0);
  const model::DeviceTypeId nv = c.devices[0].type;
  auto devices = core.PlaceOn(core.record(2), nv);
  ASSERT_TRUE(devices.has_value());
  core.Start(2, nv, std::move(*devices), 0, false);
  ThroughputPlan plan(MakeClpSolver());
  std::vector<int32_t> capacity(core.state().type_count());
  for (size_t t = 0; t < capacity.size(); ++t) {
    capacity[t] = core.state().TotalOfType(model::DeviceTypeId(static_cast<int32_t>(t)));
  }
  ASSERT_TRUE(plan.Solve(core, {0, 1, 2, 3, 4}, capacity).ok());
  EXPECT_EQ(plan.RowOf(0), plan.RowOf(1));
  EXPECT_EQ(plan.RowOf(3), plan.RowOf(4));
  EXPECT_NE(plan.RowOf(0), plan.RowOf(2));
  EXPECT_NE(plan.RowOf(0), plan.RowOf(3));
  EXPECT_EQ(plan.rows(), 3);
}

}  // namespace
}  // namespace hetsched::sched
