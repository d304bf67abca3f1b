#include "sched/size_belief.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "sched/scheduler.h"
#include "sched/test_cluster.h"

namespace hetsched::sched {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

// A record that has done `done_s` seconds of work on its best type (speed 1 step/s), with an
// estimate of `estimate_s` (0: none) from `source`.
JobRecord Record(double done_s, double estimate_s = 0,
                 EstimateSource source = EstimateSource::kDriver) {
  JobRecord r;
  r.job = std::make_unique<model::Job>();
  r.phase = JobPhase::kQueued;
  r.ref_speed = r.best_speed = 1;
  r.done_work = done_s;
  r.estimated_work = estimate_s;
  r.estimate_source = estimate_s > 0 ? source : EstimateSource::kNone;
  return r;
}

// Teaches `b` that jobs without an estimate had these sizes.
void Learn(SizeBelief& b, const std::vector<double>& sizes) {
  for (double s : sizes) b.Observe(Record(s));
  b.Refresh();
}

TEST(SizeBelief, ColdStartRanksByAttainedServiceAndTrustsEstimates) {
  SizeBelief b;
  EXPECT_DOUBLE_EQ(b.Rank(Record(0), 0), 0);
  EXPECT_DOUBLE_EQ(b.Rank(Record(50), 0), 50);
  EXPECT_DOUBLE_EQ(b.Rank(Record(30, 100), 0), 70);  // the estimate as exact: 70 left
  EXPECT_DOUBLE_EQ(b.ExpectedRemaining(Record(30, 100), 0), 70);
  // Outran its estimate: believed to need as long again as it has run.
  EXPECT_DOUBLE_EQ(b.ExpectedRemaining(Record(150, 100), 0), 150);
}

TEST(SizeBelief, GittinsRankOfAKnownDistribution) {
  // Sizes 100 and 1000, equally likely. At attained 0: serving up to 100 completes half the
  // jobs at expected cost 100, so rank = 100 / 0.5 = 200; serving up to 1000 costs
  // (100 + 1000) / 2 = 550 per sure completion. Gittins takes the minimum, 200.
  SizeBelief b;
  std::vector<double> sizes;
  for (int i = 0; i < 20; ++i) sizes.push_back(i % 2 ? 100 : 1000);
  Learn(b, sizes);
  EXPECT_NEAR(b.Rank(Record(0), 0), 200, 1e-9);
  // Past 100 only the 1000 s jobs remain: the rank is the remaining time (exactly at a grid
  // point the interpolation is exact; elsewhere it is within the tabulation's error).
  EXPECT_NEAR(b.Rank(Record(500), 0), 500, 25);
  // Beyond everything ever seen: as long again as it has run.
  EXPECT_DOUBLE_EQ(b.Rank(Record(2000), 0), 2000);
  // Mean residual at 0: 550.
  EXPECT_NEAR(b.ExpectedRemaining(Record(0), 0), 550, 1e-9);
}

TEST(SizeBelief, ExactEstimatesGiveShortestRemainingFirst) {
  // Every completed job took exactly its estimate: the ratio distribution is a point at 1, and
  // the rank is the remaining time, as under SRPT with true sizes.
  SizeBelief b;
  for (int i = 1; i <= 20; ++i) {
    JobRecord r = Record(10.0 * i, 10.0 * i);
    b.Observe(r);
  }
  b.Refresh();
  EXPECT_NEAR(b.Rank(Record(0, 300), 0), 300, 1e-9);
  EXPECT_NEAR(b.Rank(Record(0, 40), 0), 40, 1e-9);
}

TEST(SizeBelief, EstimatesThatProvedWrongWeighLess) {
  // Estimates of one source were off by 4x either way: the scheduler learns the spread, and
  // a job estimated at 100 ranks as the Gittins index of {25, 400} scaled by 100, not 100.
  SizeBelief b;
  for (int i = 0; i < 20; ++i) {
    b.Observe(Record(i % 2 ? 25 : 400, 100, EstimateSource::kUser));
  }
  b.Refresh();
  EXPECT_NEAR(b.Rank(Record(0, 100, EstimateSource::kUser), 0), 50, 1e-9);  // 25 / 0.5
  // Another source has no track record yet: taken as exact.
  EXPECT_DOUBLE_EQ(b.Rank(Record(0, 100, EstimateSource::kTimeLimit), 0), 100);
}

TEST(SizeBelief, HistoryMeanPerJobTypeAndGang) {
  SizeBelief b;
  EXPECT_FALSE(b.HistoryMean("resnet", 1));
  for (double s : {100.0, 300.0}) {
    JobRecord r = Record(s);
    const_cast<model::Job&>(*r.job).job_type = "resnet";
    b.Observe(r);
  }
  ASSERT_TRUE(b.HistoryMean("resnet", 1));
  EXPECT_DOUBLE_EQ(*b.HistoryMean("resnet", 1), 200);
  EXPECT_FALSE(b.HistoryMean("resnet", 2));
}

TEST(SizeBelief, SavedAndRestoredItRanksAndPredictsTheSame) {
  SizeBelief b;
  JobRecord typed = Record(300);
  const_cast<model::Job&>(*typed.job).job_type = "bert";
  b.Observe(typed);
  std::vector<double> sizes;
  for (int i = 0; i < 40; ++i) sizes.push_back(i % 3 ? 100 + i : 5000 - i);
  Learn(b, sizes);  // every table b ranks with is built from all its samples
  for (int i = 0; i < 12; ++i) b.Observe(Record(200 + i, 100, EstimateSource::kUser));
  b.Refresh();
  const std::string saved = b.Save();
  SizeBelief c;
  ASSERT_TRUE(c.Restore(saved).ok());
  c.Refresh();
  for (double done : {0.0, 50.0, 150.0, 4000.0}) {
    EXPECT_DOUBLE_EQ(c.Rank(Record(done), 0), b.Rank(Record(done), 0)) << done;
    EXPECT_DOUBLE_EQ(c.ExpectedRemaining(Record(done, 100, EstimateSource::kUser), 0),
                     b.ExpectedRemaining(Record(done, 100, EstimateSource::kUser), 0))
        << done;
  }
  EXPECT_EQ(c.HistoryMean("bert", 1), b.HistoryMean("bert", 1));
  EXPECT_EQ(c.Save(), saved);
  // Text it did not write is refused and changes nothing.
  for (const char* bad : {"", "{}", R"({"version":1,"sizes":["x"]})", "[1,2]",
                          R"({"version":1,"sizes":[],"ratios":[],"history":[]})"}) {
    EXPECT_EQ(c.Restore(bad).code(), util::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(c.Save(), saved);
}

// Each build merges the samples that came and went since the last one into the sorted samples,
// and computes ranks and residuals at their first read: whatever the order of reads, the tables
// are, bit for bit, those built from scratch from the same samples (a belief restored from them),
// through the ring's wrapping and with repeated sizes.
TEST(SizeBelief, MergedBuildsRankAndPredictAsBuildsFromScratch) {
  SizeBelief b;
  std::mt19937 rng(7);
  std::lognormal_distribution<double> size(7, 1.5);
  int compared = 0;
  for (int i = 0; i < 5000; ++i) {
    // Every third size repeats one seen before (equal samples come and go together).
    b.Observe(Record(i % 3 == 0 ? 100.0 * (1 + i % 17) : std::round(size(rng))));
    if (!b.Refresh()) continue;
    ++compared;
    SizeBelief fresh;
    ASSERT_TRUE(fresh.Restore(b.Save()).ok());
    ASSERT_TRUE(fresh.Refresh());
    // Ranks first in one (the residuals come with them), residuals first in the other.
    const bool ranks_first = compared % 2 == 0;
    const auto read = [](const SizeBelief& belief, bool ranks_first) {
      std::vector<double> ranks, residuals;
      for (int pass = 0; pass < 2; ++pass) {
        for (double done : {0.0, 1.0, 150.0, 900.0, 3000.0, 20000.0, 1e6}) {
          if ((pass == 0) == ranks_first) {
            ranks.push_back(belief.Rank(Record(done), 0));
          } else {
            residuals.push_back(belief.ExpectedRemaining(Record(done), 0));
          }
        }
      }
      return std::make_pair(ranks, residuals);
    };
    ASSERT_EQ(read(b, ranks_first), read(fresh, !ranks_first)) << i;
  }
  // Builds before and after the ring (SizeBelief::kMaxSamples) wrapped.
  EXPECT_GT(compared, 40) << compared;
}

// What a policy remembers of a job survives a new scheduler (a daemon's restart): attained
// service re-ranks a queued job under LAS, and LP time per type comes back under maxmin-het.
TEST(SchedulerHistory, RestoredHistoryIsWhatWasSaved) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 2}, {"slow", "cuda", 2, 2}});
  for (std::string_view policy : {"las", "maxmin-het"}) {
    auto s = Scheduler::Create(c, nullptr, policy, {});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    for (int i = 0; i < 7; ++i) {
      ASSERT_TRUE((*s)->Submit(MakeJob(i, 0, 1e9, {{"fast", 3.0}, {"slow", 1.0}}, 1), 0).accepted);
    }
    (*s)->Decide(0);
    (*s)->Decide(1000);
    const JobHistory h = (*s)->History(model::JobId(0), 1e6);
    EXPECT_GT(h.attained_s, 0) << policy;
    if (policy == "maxmin-het") {
      EXPECT_FALSE(h.received_s.empty());
    }

    auto fresh = Scheduler::Create(c, nullptr, policy, {});
    ASSERT_TRUE(fresh.ok());
    for (int i = 0; i < 7; ++i) {
      ASSERT_TRUE(
          (*fresh)->Submit(MakeJob(i, 0, 1e9, {{"fast", 3.0}, {"slow", 1.0}}, 1), 1e6).accepted);
    }
    (*fresh)->RestoreHistory(model::JobId(0), h, 1e6);
    const JobHistory back = (*fresh)->History(model::JobId(0), 1e6);
    EXPECT_DOUBLE_EQ(back.attained_s, h.attained_s) << policy;
    EXPECT_DOUBLE_EQ(back.attained_norm_s, h.attained_norm_s) << policy;
    EXPECT_EQ(back.received_s, h.received_s) << policy;
    if (policy == "las") {
      // Job 0 has attained the most: the six others take the six devices.
      const Decision d = (*fresh)->Decide(1e6);
      ASSERT_EQ(d.placed.size(), 6u);
      for (const Placement& p : d.placed) EXPECT_NE(p.job, model::JobId(0));
    }
  }
}

// A failed or cancelled job's run time is not a job size: only completions are learned.
TEST(SchedulerBelief, OnlyCompletedJobsAreLearned) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 2}});
  auto s = Scheduler::Create(c, nullptr, "fifo-het", {});
  ASSERT_TRUE(s.ok());
  for (int i = 0; i < 2; ++i) {
    model::Job j = MakeJob(i, 0, 1e9, {{"fast", 1.0}}, 1);
    j.job_type = "bert";
    ASSERT_TRUE((*s)->Submit(j, 0).accepted);
  }
  ASSERT_EQ((*s)->Decide(0).placed.size(), 2u);
  (*s)->Drop(model::JobId(0), 100);
  EXPECT_FALSE((*s)->belief().HistoryMean("bert", 1));
  (*s)->Finish(model::JobId(1), 300);
  ASSERT_TRUE((*s)->belief().HistoryMean("bert", 1));
  EXPECT_DOUBLE_EQ(*(*s)->belief().HistoryMean("bert", 1), 300);
}

// Nodes join and leave a running scheduler: a joined node's devices take work at once; a node
// that left is no capacity and is never used again; one still running a job cannot leave.
TEST(SchedulerNodes, JoinAndLeaveWithoutRebuilding) {
  auto c = MakeCluster({{"slow", "cuda", 1, 1}});
  auto s = Scheduler::Create(c, nullptr, "fifo-het", {});
  ASSERT_TRUE(s.ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*s)->Submit(MakeJob(i, 0, 1e9, {{"slow", 1.0}}, 1), 0).accepted);
  }
  EXPECT_EQ((*s)->Decide(0).placed.size(), 1u);
  model::Node extra = c.nodes[0];
  extra.name = "joined";
  const model::NodeId id = model::AddNode(c, extra, {c.devices[0].type, c.devices[0].type});
  (*s)->AddNode(id);
  EXPECT_EQ((*s)->state().TotalOfType(c.devices[0].type), 3);
  const Decision d = (*s)->Decide(1);
  ASSERT_EQ(d.placed.size(), 2u);
  for (const Placement& p : d.placed) EXPECT_EQ(c.device(p.devices[0]).node, id);
  EXPECT_EQ((*s)->RemoveNode(id).code(), util::StatusCode::kInvalidArgument);  // jobs run there
  for (const Placement& p : d.placed) (*s)->Finish(p.job, 2);
  ASSERT_TRUE((*s)->RemoveNode(id).ok());
  EXPECT_EQ((*s)->state().TotalOfType(c.devices[0].type), 1);
  EXPECT_EQ((*s)->state().FreeOfType(c.devices[0].type), 0);
  (*s)->SetNodeDrained(id, false);  // a node that left stays gone
  ASSERT_TRUE((*s)->Submit(MakeJob(3, 3, 1e9, {{"slow", 1.0}}, 1), 3).accepted);
  EXPECT_TRUE((*s)->Decide(3).placed.empty());
}

// The scheduler decides from what it is told, never from the true size: two runs whose jobs
// differ only in their true `work` make the same decisions.
TEST(SchedulerBelief, DecisionsDoNotDependOnTrueSizes) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 2}, {"slow", "cuda", 2, 2}});
  for (std::string_view policy : {"default", "srpt-het", "easy-backfill", "las-het", "fifo-het",
                                  "maxmin-het", "min-makespan"}) {
    std::vector<std::vector<std::pair<int32_t, int32_t>>> runs;
    for (uint64_t sizes_seed : {1u, 2u}) {
      std::mt19937_64 rng(sizes_seed);
      SchedulerOptions o;
      o.preempt_interval_s = 0;
      auto s = Scheduler::Create(c, nullptr, policy, o);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      std::vector<model::Job> jobs;
      for (int i = 0; i < 12; ++i) {
        jobs.push_back(
            MakeJob(i, i * 10.0, 1 + rng() % 100000, {{"fast", 3.0}, {"slow", 1.0}}, 1 + i % 2));
      }
      std::vector<std::pair<int32_t, int32_t>> log;  // (job, type), -1 type: preempted
      for (int i = 0; i < 12; ++i) {
        ASSERT_TRUE((*s)->Submit(jobs[i], i * 10.0).accepted);
        const Decision d = (*s)->Decide(i * 10.0);
        for (model::JobId j : d.preempted) log.push_back({j.value(), -1});
        for (const Placement& p : d.placed) log.push_back({p.job.value(), p.type.value()});
      }
      runs.push_back(log);
    }
    EXPECT_EQ(runs[0], runs[1]) << policy;
    EXPECT_FALSE(runs[0].empty()) << policy;
  }
}

// A job preempted while it writes its checkpoint keeps its devices until Stopped.
TEST(SchedulerBelief, PreemptedJobHoldsItsDevicesUntilStopped) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  SchedulerOptions o;
  o.preempt_interval_s = 0;
  o.preemption_cost_s = 0;  // free preemption (Gavel's setup): the rule alone
  o.stop_holds_devices = true;
  auto s = Scheduler::Create(c, nullptr, "srpt-het", o);
  ASSERT_TRUE(s.ok());
  model::Job big = MakeJob(0, 0, 1000, {{"nv", 1.0}});
  big.estimate_s = 1000;
  model::Job small = MakeJob(1, 10, 5, {{"nv", 1.0}});
  small.estimate_s = 5;
  ASSERT_TRUE((*s)->Submit(big, 0).accepted);
  ASSERT_EQ((*s)->Decide(0).placed.size(), 1u);
  ASSERT_TRUE((*s)->Submit(small, 10).accepted);
  Decision d = (*s)->Decide(10);
  ASSERT_EQ(d.preempted.size(), 1u);
  EXPECT_TRUE(d.placed.empty());  // the device is still held
  EXPECT_EQ((*s)->record(model::JobId(0)).phase, JobPhase::kStopping);
  EXPECT_EQ((*s)->state().FreeOfType(model::DeviceTypeId(0)), 0);
  (*s)->Stopped(model::JobId(0), 40);
  d = (*s)->Decide(40);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job.value(), 1);
  EXPECT_DOUBLE_EQ((*s)->record(model::JobId(0)).done_work, 10);
}

// Moving between vendors restarts a job unless its checkpoint is portable.
TEST(SchedulerBelief, CrossVendorMoveRestartsUnlessPortable) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}, {"amd", "rocm", 1, 3}});
  for (bool portable : {false, true}) {
    // srpt-het's queue key depends on the work done: the restart must not leave the job filed
    // in the queue under its old key (it was then started twice).
    auto s = Scheduler::Create(c, nullptr, portable ? "fifo-het" : "srpt-het", {});
    ASSERT_TRUE(s.ok());
    model::Job j = MakeJob(0, 0, 1000, {{"nv", 2.0}, {"amd", 1.0}});
    j.stacks = {{"cuda", ""}, {"rocm", ""}};
    j.portable_checkpoint = portable;
    ASSERT_TRUE((*s)->Submit(j, 0).accepted);
    Decision d = (*s)->Decide(0);
    ASSERT_EQ(d.placed.size(), 1u);
    EXPECT_EQ(c.catalog.Get(d.placed[0].type).name, "nv");
    // Its device fails after 100 s with everything saved; only the AMD card is left.
    (*s)->SetDeviceDown(d.placed[0].devices[0]);
    (*s)->Requeue(model::JobId(0), 100, 200);
    d = (*s)->Decide(100);
    ASSERT_EQ(d.placed.size(), 1u);
    EXPECT_EQ(c.catalog.Get(d.placed[0].type).name, "amd");
    EXPECT_EQ(d.placed[0].restarted, !portable);
    EXPECT_DOUBLE_EQ((*s)->record(model::JobId(0)).done_work, portable ? 200 : 0);
    EXPECT_EQ((*s)->queued(), 0u);
    ASSERT_TRUE((*s)->Submit(MakeJob(1, 100, 10, {{"amd", 1.0}}, 1, "rocm"), 100).accepted);
    d = (*s)->Decide(100);
    ASSERT_EQ(d.placed.size(), 1u);
    EXPECT_EQ(d.placed[0].job.value(), 1);
  }
}

// A running job moves to a faster type of another vendor only if the speed-up outweighs
// redoing its work there: with 100 s done and (believed) 100 s left, 1.5x faster devices give
// 0.75x the useful rate, so a job whose checkpoint is not portable stays; a portable one moves.
TEST(SchedulerBelief, RunningJobMovesAcrossVendorsOnlyWhenItPays) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}, {"amd", "rocm", 1, 1}});
  for (bool portable : {false, true}) {
    SchedulerOptions o;
    o.preempt_interval_s = 0;
    o.preemption_cost_s = 0;  // free preemption (Gavel's setup): the rule alone
    auto s = Scheduler::Create(c, nullptr, "default", o);
    ASSERT_TRUE(s.ok());
    model::Job first = MakeJob(0, 0, 50, {{"amd", 1.5}}, 1, "rocm");
    model::Job second = MakeJob(1, 0, 1000, {{"nv", 1.0}, {"amd", 1.5}});
    second.stacks = {{"cuda", ""}, {"rocm", ""}};
    second.portable_checkpoint = portable;
    ASSERT_TRUE((*s)->Submit(first, 0).accepted);
    ASSERT_TRUE((*s)->Submit(second, 0).accepted);
    Decision d = (*s)->Decide(0);
    ASSERT_EQ(d.placed.size(), 2u);
    (*s)->Finish(model::JobId(0), 100);
    d = (*s)->Decide(100);
    EXPECT_EQ(d.placed.size(), portable ? 1u : 0u) << portable;
  }
}

// With nobody waiting, a running job still moves up to a faster type that came free.
TEST(SchedulerBelief, RunningJobMovesUpWhenTheQueueIsEmpty) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}});
  for (std::string_view policy : {"default", "las-het", "fifo-het"}) {
    SchedulerOptions o;
    o.preempt_interval_s = 0;
    o.preemption_cost_s = 0;  // free preemption (Gavel's setup): the rule alone
    auto s = Scheduler::Create(c, nullptr, policy, o);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->Submit(MakeJob(0, 0, 1000, {{"fast", 4.0}, {"slow", 1.0}}), 0).accepted);
    ASSERT_TRUE((*s)->Submit(MakeJob(1, 0, 1000, {{"fast", 4.0}, {"slow", 1.0}}), 0).accepted);
    Decision d = (*s)->Decide(0);
    ASSERT_EQ(d.placed.size(), 2u);
    const int32_t on_fast = c.catalog.Get(d.placed[0].type).name == "fast" ? 0 : 1;
    (*s)->Finish(d.placed[on_fast].job, 50);
    ASSERT_EQ((*s)->queued(), 0u);
    ASSERT_TRUE((*s)->HasWork());
    d = (*s)->Decide(50);
    ASSERT_EQ(d.placed.size(), 1u) << policy;
    EXPECT_EQ(c.catalog.Get(d.placed[0].type).name, "fast") << policy;
    EXPECT_TRUE(d.placed[0].migrated) << policy;
  }
}

// fifo-het (Gavel's fifo_perf) re-decides, but in arrival order: a later job never starts
// ahead of an earlier one that does not fit, and never displaces an earlier running job.
TEST(FifoHet, ReDecidesInArrivalOrderWithHeadOfLineBlocking) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 2}});
  SchedulerOptions o;
  o.preempt_interval_s = 0;
  auto s = Scheduler::Create(c, nullptr, "fifo-het", o);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->Submit(MakeJob(0, 0, 100, {{"fast", 1.0}}), 0).accepted);
  ASSERT_EQ((*s)->Decide(0).placed.size(), 1u);
  ASSERT_TRUE((*s)->Submit(MakeJob(1, 1, 100, {{"fast", 1.0}}, 2), 1).accepted);  // needs 2
  ASSERT_TRUE((*s)->Submit(MakeJob(2, 2, 100, {{"fast", 1.0}}), 2).accepted);
  Decision d = (*s)->Decide(2);
  EXPECT_TRUE(d.placed.empty());  // job 2 would fit, but job 1 is ahead of it
  EXPECT_TRUE(d.preempted.empty());
  (*s)->Finish(model::JobId(0), 10);
  d = (*s)->Decide(10);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job.value(), 1);
}

// min-cost rejects a job only on its own estimate, never on the sizes of other jobs.
TEST(SchedulerBelief, MinCostAdmitsAJobWithoutAnEstimate) {
  const auto c = MakeCluster({{"gpu", "cuda", 1, 1}});
  auto s = Scheduler::Create(c, nullptr, "min-cost", {});
  ASSERT_TRUE(s.ok());
  for (int i = 0; i < 10; ++i) {  // ten 1000 s jobs complete: sizes are learned
    ASSERT_TRUE((*s)->Submit(MakeJob(i, i * 2000.0, 1000, {{"gpu", 1.0}}), i * 2000.0).accepted);
    (*s)->Decide(i * 2000.0);
    (*s)->Finish(model::JobId(i), i * 2000.0 + 1000);
  }
  model::Job quick = MakeJob(10, 30000, 10, {{"gpu", 1.0}});
  quick.deadline_s = 30500;
  EXPECT_TRUE((*s)->Submit(quick, 30000).accepted);
}

}  // namespace
}  // namespace hetsched::sched
