#include "sim/engine.h"

#include <gtest/gtest.h>

#include "report/sim_json.h"
#include "sched/test_cluster.h"
#include "sim/faults.h"
#include "sim/run_sim.h"

namespace hetsched::sim {
namespace {

using testing::ExpectAllAccounted;
using testing::MakeCluster;
using testing::MakeJob;
using testing::RunSim;

TEST(Simulate, TwoJobsOnTwoTypesHaveExactJcts) {
  // One fast device (2 steps/s) and one slow (1 step/s); two jobs of 100 steps at t=0.
  // fifo-het: job 0 takes "fast" (done at 50), job 1 the remaining "slow" (done at 100).
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}});
  model::Workload w;
  w.jobs = {MakeJob(0, 0, 100, {{"fast", 2.0}, {"slow", 1.0}}),
            MakeJob(1, 0, 100, {{"fast", 2.0}, {"slow", 1.0}})};
  SimOptions o;
  o.policy = "fifo-het";
  o.record_jobs = true;
  const SimResult r = RunSim(c, w, o);
  EXPECT_EQ(r.jobs_completed, 2);
  EXPECT_DOUBLE_EQ(r.jobs[0].completion_s, 50);
  EXPECT_DOUBLE_EQ(r.jobs[1].completion_s, 100);
  EXPECT_DOUBLE_EQ(r.avg_jct_s, 75);
  EXPECT_DOUBLE_EQ(r.makespan_s, 100);
  EXPECT_DOUBLE_EQ(r.utilization.at("fast"), 0.5);
  EXPECT_DOUBLE_EQ(r.utilization.at("slow"), 1.0);
  ExpectAllAccounted(r);
}

TEST(Simulate, AJobWithoutWorkIsRefused) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}});
  model::Workload w;
  w.jobs = {MakeJob(0, 0, 0, {{"fast", 1.0}})};
  auto r = sim::Simulate(c, w, nullptr, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("job 'job-0' has no work"), std::string::npos)
      << r.status().message();
}

TEST(Simulate, SrptWaitsForTheFastDeviceWhenThatIsSooner) {
  // Same cluster, jobs arriving one after the other: srpt-het runs the short job first.
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}});
  model::Workload w;
  w.jobs = {MakeJob(0, 0, 100, {{"fast", 1.0}}), MakeJob(1, 10, 10, {{"fast", 1.0}})};
  SimOptions o;
  o.policy = "srpt-het";
  o.record_jobs = true;
  o.sched.preempt_interval_s = 0;  // reconsider running jobs at every decision
  const SimResult r = RunSim(c, w, o);
  EXPECT_DOUBLE_EQ(r.jobs[1].completion_s, 20);   // preempts job 0 at 10
  EXPECT_DOUBLE_EQ(r.jobs[0].completion_s, 110);  // 10 done, 90 left after 20
  EXPECT_EQ(r.preemptions, 1);
  // With a 5 s restore cost job 0 loses 5 s when it resumes (a quantum of one cost lets job 1
  // preempt it at 10 still).
  o.restore_s = 5;
  o.sched.preempt_quantum_s = 5;
  const SimResult r2 = RunSim(c, w, o);
  EXPECT_DOUBLE_EQ(r2.jobs[0].completion_s, 115);
}

TEST(Simulate, IgnoreCompatFailuresAreCountedAndWasteDeviceHours) {
  // The CUDA job lands on the free AMD device first (most free), fails after 120 s, and then
  // runs on the NVIDIA device.
  const auto c = MakeCluster({{"amd", "rocm", 1, 2}, {"nv", "cuda", 1, 1}});
  model::Workload w;
  w.jobs = {MakeJob(0, 0, 100, {{"nv", 1.0}, {"amd", 1.0}})};
  SimOptions o;
  o.policy = "fifo";
  o.sched.ignore_compat = true;
  o.record_jobs = true;
  const SimResult r = RunSim(c, w, o);
  EXPECT_EQ(r.compat_failures, 1);
  EXPECT_DOUBLE_EQ(r.wasted_device_hours, 120.0 / 3600);
  EXPECT_DOUBLE_EQ(r.jobs[0].completion_s, 220);
  // Without ignore-compat the job goes straight to the NVIDIA device.
  o.sched.ignore_compat = false;
  const SimResult ok = RunSim(c, w, o);
  EXPECT_EQ(ok.compat_failures, 0);
  EXPECT_DOUBLE_EQ(ok.jobs[0].completion_s, 100);
}

TEST(Simulate, JobNoDeviceCanRunIsFailedAndCounted) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 2}});
  model::Workload w;
  w.jobs = {MakeJob(0, 0, 10, {{"nv", 1.0}}), MakeJob(1, 0, 10, {{"nv", 1.0}}, 4),
            MakeJob(2, 5, 10, {{"nv", 1.0}}, 1, "rocm")};
  const SimResult r = RunSim(c, w, SimOptions{});
  EXPECT_EQ(r.jobs_completed, 1);
  EXPECT_EQ(r.jobs_failed, 2);
  EXPECT_EQ(r.jobs_rejected, 2);
  ExpectAllAccounted(r);
}

TEST(Simulate, DeterministicForASeed) {
  const auto c = MakeCluster({{"fast", "cuda", 2, 2}, {"slow", "cuda", 2, 4}});
  model::Workload w;
  for (int i = 0; i < 200; ++i) {
    w.jobs.push_back(MakeJob(i, i * 37.0, 500 + (i * 7919) % 3000,
                             {{"fast", 3.0 + i % 3}, {"slow", 1.0}}, 1 + (i % 4 == 0)));
  }
  SimOptions o;
  o.policy = "las-het";
  o.node_mtbf_s = 20000;
  o.node_mttr_s = 600;
  o.seed = 7;
  auto strip = [](nlohmann::json j) {
    for (const char* wall :
         {"sched_wall_s", "sim_wall_s", "decision_p50_us", "decision_p99_us", "decision_max_us"}) {
      j.erase(wall);
    }
    return j;
  };
  const SimResult a = RunSim(c, w, o);
  const SimResult b = RunSim(c, w, o);
  EXPECT_EQ(strip(report::ToJson(a)), strip(report::ToJson(b)));
  EXPECT_GT(a.faults, 0);
  ExpectAllAccounted(a);
  EXPECT_EQ(a.jobs_completed, 200);
  o.seed = 8;
  EXPECT_NE(strip(report::ToJson(RunSim(c, w, o))), strip(report::ToJson(a)));
}

TEST(Simulate, EveryPolicyFinishesEveryJob) {
  const auto c = MakeCluster({{"fast", "cuda", 2, 4}, {"slow", "cuda", 4, 2}});
  model::Workload w;
  for (int i = 0; i < 120; ++i) {
    w.jobs.push_back(MakeJob(i, i * 20.0, 200 + (i * 104729) % 5000,
                             {{"fast", 2.0 + i % 5}, {"slow", 1.0}}, 1 << (i % 3)));
    w.jobs.back().priority = i % 3;
  }
  for (std::string_view p :
       {"fifo", "fifo-het", "priority", "easy-backfill", "las", "las-het", "srpt-het", "default"}) {
    for (double round : {0.0, 360.0}) {
      SimOptions o;
      o.policy = std::string(p);
      o.round_s = round;
      const SimResult r = RunSim(c, w, o);
      EXPECT_EQ(r.jobs_completed, 120) << p << " round " << round;
      ExpectAllAccounted(r);
      EXPECT_GT(r.avg_jct_s, 0);
    }
  }
}

TEST(Simulate, RoundsDelayStartsToTheNextBoundary) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  model::Workload w;
  w.jobs = {MakeJob(0, 10, 100, {{"nv", 1.0}})};
  SimOptions o;
  o.policy = "las";
  o.round_s = 360;
  o.record_jobs = true;
  const SimResult r = RunSim(c, w, o);
  EXPECT_DOUBLE_EQ(r.jobs[0].first_start_s, 360);
  EXPECT_DOUBLE_EQ(r.jobs[0].completion_s, 460);
}

TEST(Simulate, FaultRequeuesJobAndLosesWorkSinceCheckpoint) {
  const auto c = MakeCluster({{"nv", "cuda", 2, 1}});
  model::Workload w;
  w.jobs = {MakeJob(0, 0, 1000, {{"nv", 1.0}})};
  auto faults = ParseFaults("# t, target, duration\n250, nv-n0, 1h\n", "f.csv", c);
  ASSERT_TRUE(faults.ok()) << faults.status().ToString();
  SimOptions o;
  o.policy = "fifo";
  o.faults = *faults;
  o.checkpoint_interval_s = 100;
  o.record_jobs = true;
  const SimResult r = RunSim(c, w, o);
  // 200 steps saved at the checkpoint, 50 lost; restarts on nv-n1 at 250 with 800 left.
  EXPECT_DOUBLE_EQ(r.jobs[0].completion_s, 1050);
  EXPECT_DOUBLE_EQ(r.lost_device_hours, 50.0 / 3600);
  EXPECT_EQ(r.faults, 1);
}

TEST(Simulate, ServiceReclaimWritesACheckpointFirst) {
  const auto c = MakeCluster({{"nv", "cuda", 2, 1}});
  model::Workload w;
  w.jobs = {MakeJob(0, 0, 1000, {{"nv", 1.0}})};
  auto faults = ParseFaults("250, nv-n0, 1h\n", "f.csv", c);
  ASSERT_TRUE(faults.ok()) << faults.status().ToString();
  faults->front().service = true;
  SimOptions o;
  o.policy = "fifo";
  o.faults = *faults;
  o.checkpoint_interval_s = 100;
  o.checkpoint_save_s = 20;
  o.record_jobs = true;
  const SimResult r = RunSim(c, w, o);
  // Told 20 s ahead, it wrote its checkpoint from 230: 230 steps kept, 20 lost (a fault would
  // keep the periodic checkpoint's 200). It restarts on nv-n1 at 250 with 770 left.
  EXPECT_DOUBLE_EQ(r.jobs[0].completion_s, 1020);
  EXPECT_DOUBLE_EQ(r.lost_device_hours, 20.0 / 3600);
  EXPECT_EQ(r.faults, 0);
}

TEST(Faults, BadLinesNameFileAndLine) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 2}});
  auto a = ParseFaults("10, nv-n0, 5\n20, nowhere, 5\n", "f.csv", c);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("f.csv:2:1"), std::string::npos) << a.status().message();
  EXPECT_FALSE(ParseFaults("10, nv-n0/7, 5\n", "f.csv", c).ok());
  EXPECT_FALSE(ParseFaults("10, nv-n0\n", "f.csv", c).ok());
  EXPECT_FALSE(ParseFaults("-3, nv-n0, 5\n", "f.csv", c).ok());
}

TEST(Faults, KindsAreDownOrAStartFailureOfAWholeNode) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 2}});
  auto f =
      ParseFaults("10, nv-n0, 5\n20, nv-n0, 5, down\n30, nv-n0, 1h, start-failure\n", "f.csv", c);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ(f->size(), 3u);
  EXPECT_FALSE((*f)[1].start_failure);
  EXPECT_TRUE((*f)[2].start_failure);
  auto bad = ParseFaults("10, nv-n0, 5, melt\n", "f.csv", c);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("down or start-failure"), std::string::npos)
      << bad.status().message();
  EXPECT_FALSE(ParseFaults("10, nv-n0/1, 5, start-failure\n", "f.csv", c).ok());
}

// drive::Attempts' rules in the simulator: an injected start failure gives the type up, a time
// limit stops the job, a cancel ends it.
TEST(Simulate, AnInjectedStartFailureSendsTheJobToAnotherType) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}});
  model::Workload w;
  w.jobs = {MakeJob(0, 0, 1000, {{"fast", 2.0}, {"slow", 1.0}})};
  auto faults = ParseFaults("0, fast-n0, 1h, start-failure\n", "f.csv", c);
  ASSERT_TRUE(faults.ok()) << faults.status().ToString();
  SimOptions o;
  o.policy = "fifo-het";
  o.faults = *faults;
  o.record_jobs = true;
  const SimResult r = RunSim(c, w, o);
  ASSERT_EQ(r.jobs[0].status, JobStatus::kCompleted);
  EXPECT_EQ(r.jobs[0].attempts, 2);
  EXPECT_DOUBLE_EQ(r.jobs[0].completion_s, 1000);  // on `slow` from 0
  EXPECT_EQ(r.compat_failures, 0);                 // not a missing stack
}

TEST(Simulate, AJobPastItsTimeLimitIsStoppedAndFails) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  model::Workload w;
  w.jobs = {MakeJob(0, 0, 1000, {{"nv", 1.0}}), MakeJob(1, 0, 100, {{"nv", 1.0}})};
  w.jobs[0].time_limit_s = 500;
  w.jobs[1].time_limit_s = 500;
  SimOptions o;
  o.policy = "fifo";
  o.checkpoint_save_s = 0;
  o.record_jobs = true;
  const SimResult r = RunSim(c, w, o);
  EXPECT_EQ(r.jobs[0].status, JobStatus::kFailed);
  EXPECT_NE(r.jobs[0].reason.find("time limit of 500 s"), std::string::npos) << r.jobs[0].reason;
  EXPECT_EQ(r.jobs[1].status, JobStatus::kCompleted);
  EXPECT_NEAR(r.jobs[1].completion_s, 600, 1e-3);  // after job 0 was stopped at 500
}

TEST(Simulate, ACancelEndsARunningJobAndOneBeforeItsArrivalIsRefused) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  model::Workload w;
  w.jobs = {MakeJob(0, 0, 1000, {{"nv", 1.0}}), MakeJob(1, 50, 100, {{"nv", 1.0}})};
  SimOptions o;
  o.policy = "fifo";
  o.checkpoint_save_s = 0;
  o.record_jobs = true;
  o.cancels = {{200, 0}};
  const SimResult r = RunSim(c, w, o);
  EXPECT_EQ(r.jobs[0].status, JobStatus::kCancelled);
  EXPECT_EQ(r.jobs_cancelled, 1);
  EXPECT_NEAR(r.jobs[1].completion_s, 300, 1e-3);
  o.cancels = {{10, 1}};  // job 1 arrives at 50
  EXPECT_FALSE(Simulate(c, w, nullptr, o).ok());
}

TEST(Simulate, MeasureWindowAveragesThoseJobsOnly) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  model::Workload w;
  for (int i = 0; i < 10; ++i) w.jobs.push_back(MakeJob(i, i * 100.0, 10 * (i + 1), {{"nv", 1.0}}));
  SimOptions o;
  o.policy = "fifo";
  o.measure = std::make_pair(2, 4);
  const SimResult r = RunSim(c, w, o);
  EXPECT_EQ(r.measured_jobs, 2);
  EXPECT_DOUBLE_EQ(r.avg_jct_s, 35);  // 30 and 40 steps at 1 step/s, no waiting
  EXPECT_LT(r.jobs_completed, 10);    // it stops once jobs 2 and 3 are done
  EXPECT_GE(r.jobs_unfinished, 5);    // jobs 5..9 have not even arrived
  ExpectAllAccounted(r);
  o.measure = std::make_pair(5, 50);
  EXPECT_FALSE(Simulate(c, w, nullptr, o).ok());
}

TEST(Simulate, GangAcrossNodesPaysSynchronization) {
  const auto c = MakeCluster({{"nv", "cuda", 2, 2}});
  model::Workload w;
  w.jobs = {MakeJob(0, 0, 100, {{"nv", 1.0}}, 2), MakeJob(1, 0, 100, {{"nv", 1.0}}, 3)};
  w.jobs[0].sync_bytes_per_step = 1ull << 30;
  w.jobs[1].sync_bytes_per_step = 1ull << 30;
  SimOptions o;
  o.policy = "fifo";
  o.record_jobs = true;
  const SimResult r = RunSim(c, w, o);
  EXPECT_GT(r.network_bytes, 0);
  EXPECT_DOUBLE_EQ(r.gangs_within_node, 0.5);  // job 0 inside a node, job 1 across two
  EXPECT_GT(r.jobs[0].completion_s, 100);
  EXPECT_GT(r.jobs[1].completion_s - r.jobs[1].first_start_s, r.jobs[0].completion_s);
}

TEST(Simulate, UnknownPolicyIsAnError) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  SimOptions o;
  o.policy = "magic";
  auto r = Simulate(c, model::Workload{}, nullptr, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("known:"), std::string::npos);
}

TEST(Estimates, WhatTheSchedulerIsToldChangesItsOrder) {
  // A long and a short job arrive together on one device. Told nothing, the scheduler cannot
  // tell them apart and runs them in arrival order; told the truth (oracle), it runs the short
  // one first. No full decision after the first (whose due time would wake the simulator):
  // at 300 s the long job's attained service would tell them apart even under `none`.
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  model::Workload w;
  w.jobs = {MakeJob(0, 0, 1000, {{"nv", 1.0}}), MakeJob(1, 0, 10, {{"nv", 1.0}})};
  SimOptions o;
  o.policy = "srpt-het";
  o.sched.preempt_interval_s = 2000;
  o.estimates.kind = EstimateMode::kNone;
  EXPECT_DOUBLE_EQ(RunSim(c, w, o).avg_jct_s, (1000 + 1010) / 2.0);
  o.estimates.kind = EstimateMode::kOracle;
  const SimResult oracle = RunSim(c, w, o);
  EXPECT_DOUBLE_EQ(oracle.avg_jct_s, (10 + 1010) / 2.0);
  EXPECT_EQ(oracle.estimates, "oracle");
  EXPECT_EQ(report::ToJson(oracle)["oracle"],
            "true job sizes: an upper bound no real scheduler has");
  // The workload's own estimates count under the default mode, not under `none`.
  w.jobs[0].estimate_s = 1000;
  w.jobs[1].estimate_s = 10;
  o.estimates.kind = EstimateMode::kWorkload;
  EXPECT_DOUBLE_EQ(RunSim(c, w, o).avg_jct_s, (10 + 1010) / 2.0);
  o.estimates.kind = EstimateMode::kNone;
  EXPECT_DOUBLE_EQ(RunSim(c, w, o).avg_jct_s, (1000 + 1010) / 2.0);
}

TEST(Estimates, NoisyModesAreDeterministicForASeed) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 2}});
  model::Workload w;
  for (int i = 0; i < 40; ++i) {
    w.jobs.push_back(MakeJob(i, i * 7.0, 50 + (i * 37) % 400, {{"nv", 1.0}}));
  }
  SimOptions o;
  o.policy = "srpt-het";
  for (const char* mode : {"lognormal:1", "user-limit:5", "history"}) {
    auto m = ParseEstimateMode(mode);
    ASSERT_TRUE(m.ok()) << mode;
    o.estimates = *m;
    EXPECT_EQ(EstimateModeName(*m), mode);
    const SimResult a = RunSim(c, w, o), b = RunSim(c, w, o);
    EXPECT_EQ(a.avg_jct_s, b.avg_jct_s) << mode;
    EXPECT_EQ(a.jobs_completed, 40) << mode;
  }
}

TEST(Estimates, BadModesAreRejectedListingTheKnownOnes) {
  for (const char* bad : {"psychic", "lognormal", "lognormal:-1", "lognormal:abc", "user-limit:0.5",
                          "user-limit:1e9", "oracle:2", "lognormal:nan"}) {
    auto m = ParseEstimateMode(bad);
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_NE(m.status().message().find(std::string("--estimates '") + bad + "'"),
              std::string::npos)
        << m.status().message();
  }
  EXPECT_NE(ParseEstimateMode("psychic").status().message().find("lognormal:SIGMA"),
            std::string::npos);
}

TEST(Simulate, CheckpointSaveHoldsTheDevicesOfAPreemptedJob) {
  // As SrptWaitsForTheFastDeviceWhenThatIsSooner, with a 5 s checkpoint write: job 1 starts
  // only at 15, when job 0 has released the device.
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}});
  model::Workload w;
  w.jobs = {MakeJob(0, 0, 100, {{"fast", 1.0}}), MakeJob(1, 10, 10, {{"fast", 1.0}})};
  SimOptions o;
  o.policy = "srpt-het";
  o.record_jobs = true;
  o.sched.preempt_interval_s = 0;
  o.estimates.kind = EstimateMode::kOracle;
  o.checkpoint_save_s = 5;
  o.restore_s = 3;
  o.sched.preempt_quantum_s = 8;  // the smallest allowed: one cost
  const SimResult r = RunSim(c, w, o);
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_DOUBLE_EQ(r.preemptions_per_job, 0.5);
  // What it cost: 5 s of writing and 3 s of reading, on one device, out of 118 s of capacity.
  EXPECT_NEAR(r.checkpoint_save_device_hours * 3600, 5, 1e-6);
  EXPECT_NEAR(r.restore_device_hours * 3600, 3, 1e-6);
  EXPECT_DOUBLE_EQ(r.restart_device_hours, 0);
  EXPECT_NEAR(r.preemption_share, 8.0 / 118, 1e-9);
  EXPECT_DOUBLE_EQ(r.jobs[1].first_start_s, 15);
  EXPECT_DOUBLE_EQ(r.jobs[1].completion_s, 25);
  EXPECT_DOUBLE_EQ(r.jobs[0].completion_s, 25 + 3 + 90);  // restore, then the 90 steps left
  EXPECT_DOUBLE_EQ(r.utilization.at("fast"), 1.0);        // busy while it saved
  ExpectAllAccounted(r);
}

TEST(Simulate, ReportsWhenArrivalsEndBeforeTheMeasuredJobsAreDone) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  model::Workload w;
  for (int i = 0; i < 10; ++i) w.jobs.push_back(MakeJob(i, i * 10.0, 100, {{"nv", 1.0}}));
  SimOptions o;
  o.policy = "fifo";
  o.measure = std::make_pair(2, 4);  // jobs 2 and 3 are done at 400 s
  SimResult r = RunSim(c, w, o);
  EXPECT_TRUE(r.arrivals_ended_early);  // the last arrival (90 s) came before 400 s
  EXPECT_DOUBLE_EQ(r.last_arrival_s, 90);
  for (int i = 0; i < 10; ++i) w.jobs[i].arrival_s = i * 1000.0;
  r = RunSim(c, w, o);
  EXPECT_FALSE(r.arrivals_ended_early);  // jobs 2 and 3 were done long before job 9 arrived
}

// LP policies count the work a move across vendors would redo: jobs whose checkpoints do not
// load on the other vendor's devices are not shuttled between them (they were restarted
// thousands of times and never finished).
TEST(CrossVendor, LpPoliciesDoNotShuttleNonPortableJobs) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}, {"amd", "rocm", 1, 1}});
  model::Workload w;
  for (int i = 0; i < 3; ++i) {
    w.jobs.push_back(MakeJob(i, 0, 10000, {{"nv", 1.0}, {"amd", 1.0}}));
    w.jobs.back().stacks = {{"cuda", ""}, {"rocm", ""}};
  }
  for (const char* policy : {"maxmin-het", "max-throughput", "default"}) {
    SimOptions o;
    o.policy = policy;
    o.round_s = 360;
    o.until_s = 1e6;  // each job needs 1e4 s; shuttled jobs never finish
    const SimResult r = RunSim(c, w, o);
    EXPECT_EQ(r.jobs_completed, 3) << policy;
    EXPECT_LE(r.cross_vendor_restarts, 3) << policy;
  }
}

// Under rounds, devices a checkpoint write held are filled as soon as it is done, not at the
// next round, and the move counts as a migration.
TEST(Simulate, RoundsFillDevicesFreedByACheckpointWrite) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}});
  model::Workload w;
  w.jobs = {MakeJob(0, 0, 10000, {{"fast", 1.0}}), MakeJob(1, 100, 10, {{"fast", 1.0}})};
  SimOptions o;
  o.policy = "srpt-het";
  o.record_jobs = true;
  o.round_s = 360;
  o.estimates.kind = EstimateMode::kOracle;
  o.checkpoint_save_s = 30;
  o.sched.preempt_quantum_s = 30;  // one cost: job 0 may be preempted at the first round
  const SimResult r = RunSim(c, w, o);
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_DOUBLE_EQ(r.jobs[1].first_start_s, 390);  // the round at 360, plus the 30 s write
  ExpectAllAccounted(r);
}

}  // namespace
}  // namespace hetsched::sim
