#include "sched/throughput_plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "sched/core_harness.h"
#include "sched/elastic.h"
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

// Solves `kept` and `fresh` over every queued and running job of `core` (in `jobs`) on the
// whole cluster (`capacity`, by type).
void SolveBoth(const SchedulerCore& core, ThroughputPlan& kept, ThroughputPlan& fresh,
               std::vector<int32_t>& jobs, std::vector<int32_t>& capacity) {
  jobs = core.queue();
  jobs.insert(jobs.end(), core.running().begin(), core.running().end());
  capacity.resize(core.state().type_count());
  for (size_t t = 0; t < capacity.size(); ++t) {
    capacity[t] = core.state().TotalOfType(model::DeviceTypeId(static_cast<int32_t>(t)));
  }
  ASSERT_TRUE(kept.Solve(core, jobs, capacity).ok());
  ASSERT_TRUE(fresh.Solve(core, jobs, capacity).ok());
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
  int planned_on = 0;
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
    std::vector<int32_t> jobs, capacity;
    ThroughputPlan fresh(MakeClpSolver());
    ASSERT_NO_FATAL_FAILURE(SolveBoth(core, kept, fresh, jobs, capacity));
    const std::vector<int32_t> none(types, 0);
    for (int32_t job : jobs) {
      for (int32_t prefer = -1; prefer < types; ++prefer) {
        ASSERT_EQ(kept.Pick(job, core.record(job), capacity, none, prefer),
                  fresh.Pick(job, core.record(job), capacity, none, prefer))
            << "step " << step << " job " << job;
        ++compared;
      }
      // The planned types the fills read, as PlannedOn answers them type by type.
      const int32_t known = kept.KnownClassOf(core, job, core.record(job));
      const char* planned = kept.PlannedTypes(known);
      ASSERT_EQ(planned != nullptr, kept.Planned(known)) << "step " << step << " job " << job;
      for (int32_t t = 0; planned != nullptr && t < types; ++t) {
        ASSERT_EQ(planned[t] != 0, kept.PlannedOn(known, t)) << "step " << step << " job " << job;
        planned_on += planned[t] != 0 ? 1 : 0;
      }
    }
  }
  EXPECT_GT(compared, 10000);
  EXPECT_GT(planned_on, 1000);
}

// Makes the job in `id` elastic at 1, 2 and 4 workers: linear in the workers on the first
// type, slower to scale on the others (so that each size has its own relative speeds), at the
// size of 4 as Scheduler::Submit leaves a new elastic job.
void MakeElastic(SchedulerCore& core, int32_t id) {
  JobRecord& r = core.record(id);
  const double gang = r.gang;
  for (int32_t workers : {1, 2, 4}) {
    JobRecord::SizeOption o;
    o.workers = workers;
    o.allowed = r.allowed;
    o.speed = r.speed;
    for (size_t t = 0; t < o.speed.size(); ++t) {
      o.speed[t] *= t == 0 ? workers / gang : std::sqrt(workers / gang);
    }
    r.sizes.push_back(std::move(o));
  }
  ApplySize(r, r.sizes.size() - 1);
}

// The same for elastic jobs, whose class moves with the size they take while they wait
// (ElasticResizer::SizeQueued resizes them before each decision).
TEST(ThroughputPlan, KeptClassesOfElasticJobsFollowTheirSize) {
  const auto c = MakeCluster({{"nv", "cuda", 2, 4}, {"nv2", "cuda", 2, 4}, {"amd", "rocm", 2, 4}});
  SchedulerOptions options;
  options.stop_holds_devices = false;
  CoreHarness h(c, "srpt-het-fair", options);
  SchedulerCore& core = h.core();
  const int32_t types = core.state().type_count();
  ThroughputPlan kept(MakeClpSolver());
  std::mt19937 rng(5);
  constexpr int kSlots = 16;
  for (int id = 0; id < kSlots; ++id) {
    h.Admit(MixJob(id, 0, rng), 0);
    MakeElastic(core, id);
  }
  double now = 0;
  int compared = 0;
  int resized = 0;
  for (int step = 0; step < 300; ++step) {
    now += static_cast<double>(rng() % 200);
    core.BeginDecision(now);
    const int id = static_cast<int>(rng() % kSlots);
    JobRecord& r = core.record(id);
    const int what = static_cast<int>(rng() % 3);
    if (r.phase == JobPhase::kQueued && what == 0) {
      const size_t option = rng() % r.sizes.size();
      resized += r.sizes[option].workers != r.gang ? 1 : 0;
      ApplySize(r, option);
    } else if (r.phase == JobPhase::kQueued && what == 1) {
      const auto type = model::DeviceTypeId(static_cast<int32_t>(rng() % types));
      if (r.allowed[type.value()]) {
        if (auto devs = core.PlaceOn(r, type)) core.Start(id, type, std::move(*devs), now, false);
      }
    } else if (r.phase == JobPhase::kRunning && what != 1) {
      Decision ignored;
      core.Preempt(id, now, ignored);
    }
    std::vector<int32_t> jobs, capacity;
    ThroughputPlan fresh(MakeClpSolver());
    ASSERT_NO_FATAL_FAILURE(SolveBoth(core, kept, fresh, jobs, capacity));
    ASSERT_EQ(kept.rows(), fresh.rows()) << "step " << step;
    const std::vector<int32_t> none(types, 0);
    for (int32_t job : jobs) {
      ASSERT_EQ(kept.RowOf(job), fresh.RowOf(job)) << "step " << step << " job " << job;
      // Its row is one of jobs of its present size.
      if (kept.RowOf(job) >= 0) {
        ASSERT_EQ(kept.RowGang(kept.RowOf(job)), core.record(job).job->gang_size);
      }
      for (int32_t prefer = -1; prefer < types; ++prefer) {
        ASSERT_EQ(kept.Pick(job, core.record(job), capacity, none, prefer),
                  fresh.Pick(job, core.record(job), capacity, none, prefer))
            << "step " << step << " job " << job;
        ++compared;
      }
    }
  }
  EXPECT_GT(resized, 20);
  EXPECT_GT(compared, 5000);
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
