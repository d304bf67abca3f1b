// The simulator's timeline (samples and job runs) and its early stops (--until, --max-rounds).
#include <gtest/gtest.h>

#include "report/sim_json.h"
#include "sched/lp_solver.h"
#include "sched/test_cluster.h"
#include "sim/engine.h"
#include "sim/run_sim.h"

namespace hetsched::sim {
namespace {

using testing::MakeCluster;
using testing::MakeJob;
using testing::RunSim;

// One fast and one slow device; job 0 (100 steps) and job 1 (100 steps) at t=0 under
// fifo-het: job 0 on "fast" over [0, 50], job 1 on "slow" over [0, 100]; job 2 arrives at 60
// and takes "fast" over [60, 110].
model::Workload ThreeJobs() {
  model::Workload w;
  w.jobs = {MakeJob(0, 0, 100, {{"fast", 2.0}, {"slow", 1.0}}),
            MakeJob(1, 0, 100, {{"fast", 2.0}, {"slow", 1.0}}),
            MakeJob(2, 60, 100, {{"fast", 2.0}, {"slow", 1.0}})};
  return w;
}

TEST(Timeline, SamplesHoldTheStateBetweenEvents) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}});
  SimOptions o;
  o.policy = "fifo-het";
  o.timeline_sample_s = 25;
  const SimResult r = RunSim(c, ThreeJobs(), o);
  const Timeline& t = r.timeline;
  ASSERT_EQ(t.types, (std::vector<std::string>{"fast", "slow"}));
  EXPECT_EQ(t.type_total, (std::vector<int32_t>{1, 1}));
  // Samples at 0, 25, ..., 100, then one at the end (110).
  ASSERT_EQ(t.samples.size(), 6u);
  const std::vector<double> times = {0, 25, 50, 75, 100, 110};
  // A sample at t shows the state right after the events at t (right-continuous):
  // 0 and 25: both busy; 50: job 0 just ended, fast is free; 75: job 2 on fast since 60;
  // 100: job 1 ended; 110: the end, everything done.
  const std::vector<std::vector<int32_t>> busy = {{1, 1}, {1, 1}, {0, 1}, {1, 1}, {1, 0}, {0, 0}};
  for (size_t i = 0; i < times.size(); ++i) {
    EXPECT_DOUBLE_EQ(t.samples[i].time_s, times[i]) << i;
    EXPECT_EQ(t.samples[i].busy, busy[i]) << i;
  }
  EXPECT_EQ(t.samples[0].queued, 0);  // both started at once
  EXPECT_EQ(t.samples[2].running, 1);
  EXPECT_EQ(t.samples[1].running, 2);
  // Runs: one span per job, each completed, with its node and devices.
  ASSERT_EQ(t.runs.size(), 3u);
  EXPECT_EQ(t.runs[0].job, 0);
  EXPECT_EQ(t.types[t.runs[0].type], "fast");
  EXPECT_DOUBLE_EQ(t.runs[0].start_s, 0);
  EXPECT_DOUBLE_EQ(t.runs[0].end_s, 50);
  EXPECT_EQ(t.runs[0].end, RunEnd::kCompleted);
  EXPECT_EQ(t.runs[0].devices, 1);
  ASSERT_EQ(t.runs[0].nodes.size(), 1u);
  EXPECT_EQ(t.types[t.runs[1].type], "slow");
  EXPECT_DOUBLE_EQ(t.runs[1].end_s, 100);
  EXPECT_EQ(t.runs[2].job, 2);
  EXPECT_DOUBLE_EQ(t.runs[2].start_s, 60);
  EXPECT_DOUBLE_EQ(t.runs[2].end_s, 110);
  // JSON carries it.
  const auto j = report::ToJson(r);
  EXPECT_EQ(j["timeline"]["runs"].size(), 3u);
  EXPECT_EQ(j["timeline"]["runs"][0]["end"], "completed");
}

TEST(Timeline, PreemptedRunsEndAsPreempted) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}});
  model::Workload w;
  w.jobs = {MakeJob(0, 0, 100, {{"fast", 1.0}}), MakeJob(1, 10, 10, {{"fast", 1.0}})};
  SimOptions o;
  o.policy = "srpt-het";
  o.sched.preempt_interval_s = 0;
  o.timeline_sample_s = 1000;
  const SimResult r = RunSim(c, w, o);
  ASSERT_EQ(r.timeline.runs.size(), 3u);  // job 0, job 1, job 0 again
  EXPECT_EQ(r.timeline.runs[0].end, RunEnd::kPreempted);
  EXPECT_DOUBLE_EQ(r.timeline.runs[0].end_s, 10);
  EXPECT_EQ(r.timeline.runs[2].job, 0);
  EXPECT_DOUBLE_EQ(r.timeline.runs[2].start_s, 20);
}

TEST(Timeline, NoneUnlessAsked) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}});
  SimOptions o;
  o.policy = "fifo-het";
  const SimResult r = RunSim(c, ThreeJobs(), o);
  EXPECT_TRUE(r.timeline.samples.empty());
  EXPECT_TRUE(r.timeline.runs.empty());
  EXPECT_FALSE(report::ToJson(r).contains("timeline"));
}

TEST(EarlyStop, UntilStopsAtThatTimeAndReportsWhatRan) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}});
  SimOptions o;
  o.policy = "fifo-het";
  o.until_s = 70;
  o.record_jobs = true;
  o.timeline_sample_s = 100;
  const SimResult r = RunSim(c, ThreeJobs(), o);
  EXPECT_EQ(r.stopped_early, "until");
  EXPECT_DOUBLE_EQ(r.end_s, 70);
  EXPECT_EQ(r.jobs_completed, 1);  // job 0 at 50
  EXPECT_EQ(r.jobs_unfinished, 2);
  EXPECT_EQ(r.jobs_completed + r.jobs_failed + r.jobs_unfinished, r.jobs_total);
  // Busy time is booked up to 70: fast 50 + 10 of 70, slow 70 of 70.
  EXPECT_DOUBLE_EQ(r.utilization.at("fast"), 60.0 / 70);
  EXPECT_DOUBLE_EQ(r.utilization.at("slow"), 1.0);
  EXPECT_EQ(r.timeline.runs.back().end, RunEnd::kRunning);
  EXPECT_DOUBLE_EQ(r.timeline.runs.back().end_s, 70);
  EXPECT_EQ(report::ToJson(r)["stopped_early"], "until");
}

TEST(EarlyStop, MaxRoundsCountsDecisions) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}});
  SimOptions o;
  o.policy = "fifo-het";
  o.max_rounds = 1;
  const SimResult r = RunSim(c, ThreeJobs(), o);
  EXPECT_EQ(r.stopped_early, "max-rounds");
  EXPECT_EQ(r.decisions, 1);
  EXPECT_DOUBLE_EQ(r.end_s, 0);
  EXPECT_EQ(r.jobs_unfinished, 3);
  // Without a limit the run goes to the end and says nothing.
  o.max_rounds = 0;
  EXPECT_EQ(RunSim(c, ThreeJobs(), o).stopped_early, "");
}

TEST(EarlyStop, NegativeLimitsAreRejected) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}});
  SimOptions o;
  o.until_s = -1;
  EXPECT_FALSE(Simulate(c, ThreeJobs(), nullptr, o).ok());
  o.until_s = 0;
  o.max_rounds = -2;
  EXPECT_FALSE(Simulate(c, ThreeJobs(), nullptr, o).ok());
}

}  // namespace
}  // namespace hetsched::sim

namespace hetsched::sim {
namespace {

// An LP solver that works once, then fails: the run goes on with the last good allocation and
// the result says so (count, log lines, JSON).
class FailsAfterFirst final : public sched::LpSolver {
 public:
  std::string_view name() const override { return "fails-after-first"; }
  sched::LpSolution Solve(const sched::LinearProgram& lp,
                          const sched::LpOptions& options) override {
    if (++calls_ > 1) {
      sched::LpSolution s;
      s.status = sched::LpStatus::kError;
      s.message = "injected failure";
      return s;
    }
    return clp_->Solve(lp, options);
  }

 private:
  int calls_ = 0;
  std::unique_ptr<sched::LpSolver> clp_ = sched::MakeClpSolver();
};

TEST(AllocationFailures, AreCountedLoggedAndInTheJson) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 2}, {"slow", "cuda", 1, 2}});
  SimOptions o;
  o.policy = "maxmin-het";
  o.record_jobs = true;
  o.sched.preempt_interval_s = 0;  // an allocation at every decision
  o.sched.lp_solver = std::make_shared<FailsAfterFirst>();
  const SimResult r = RunSim(c, ThreeJobs(), o);
  EXPECT_EQ(r.jobs_completed, 3);  // the last good allocation kept the jobs going
  EXPECT_GT(r.allocation_failures, 0);
  ASSERT_FALSE(r.allocation_log.empty());
  EXPECT_NE(r.allocation_log.back().find("injected failure"), std::string::npos)
      << r.allocation_log.back();
  const auto j = report::ToJson(r);
  EXPECT_EQ(j["allocation_failures"], r.allocation_failures);
  // A solver that never fails leaves no trace in the JSON.
  o.sched.lp_solver = nullptr;
  const SimResult fine = RunSim(c, ThreeJobs(), o);
  EXPECT_EQ(fine.allocation_failures, 0);
  EXPECT_FALSE(report::ToJson(fine).contains("allocation_failures"));
}

}  // namespace
}  // namespace hetsched::sim
