// Space sharing (SchedulerOptions::space_sharing) in the simulator: exact times of hand-made
// pairs, the rules that keep a pair from forming, faults on a shared device, and runs of
// Gavel-like traces under a preemptive and an LP policy.
#include <gtest/gtest.h>

#include "model/io/cluster_reader.h"
#include "model/io/gavel_reader.h"
#include "sched/test_cluster.h"
#include "sim/engine.h"
#include "sim/faults.h"
#include "sim/run_sim.h"
#include "sim/trace_gen.h"
#include "testing/build_paths.h"

namespace hetsched::sim {
namespace {

using testing::ExpectAllAccounted;
using testing::MakeCluster;

// A job of `type` whose speed comes from the profile.
model::Job TypedJob(int id, double arrival_s, double work, const std::string& type) {
  model::Job j;
  j.id = model::JobId(id);
  j.name = "job-" + std::to_string(id);
  j.job_type = type;
  j.arrival_s = arrival_s;
  j.work = work;
  j.stacks = {{"cuda", ""}};
  return j;
}

// Job types A, B, C at 1 step/s alone on "gpu"; (A, B) together run at the given fractions.
model::ThroughputProfile PairProfile(double a_frac, double b_frac) {
  model::ThroughputProfile p;
  for (const char* t : {"A", "B", "C"}) p.SetIsolated(t, 1, "gpu", 1.0);
  p.SetColocated("A", 1, "B", 1, "gpu", a_frac, b_frac);
  return p;
}

SimResult RunWith(const model::Cluster& c, const model::Workload& w,
                  const model::ThroughputProfile& profile, SimOptions o) {
  o.record_jobs = true;
  return testing::RunSim(c, w, o, &profile);
}

SimOptions Sharing(const std::string& policy) {
  SimOptions o;
  o.policy = policy;
  o.sched.space_sharing = true;
  return o;
}

TEST(SpaceSharing, PairBeatsRunningApartWithExactTimes) {
  // One device; A and B (90 steps each) arrive at 0. Apart: A done at 90, B at 180. Together
  // each runs at 0.75 steps/s (1.5 > 1.1): both done at 120.
  const auto c = MakeCluster({{"gpu", "cuda", 1, 1}});
  const auto profile = PairProfile(0.75, 0.75);
  model::Workload w;
  w.jobs = {TypedJob(0, 0, 90, "A"), TypedJob(1, 0, 90, "B")};
  SimOptions fifo;
  fifo.policy = "fifo";
  const SimResult apart = RunWith(c, w, profile, fifo);
  EXPECT_DOUBLE_EQ(apart.jobs[0].completion_s, 90);
  EXPECT_DOUBLE_EQ(apart.jobs[1].completion_s, 180);
  EXPECT_FALSE(apart.space_sharing);

  const SimResult r = RunWith(c, w, profile, Sharing("fifo"));
  EXPECT_EQ(r.jobs_completed, 2);
  EXPECT_EQ(r.pairs_formed, 1);
  EXPECT_DOUBLE_EQ(r.jobs[0].completion_s, 120);
  EXPECT_DOUBLE_EQ(r.jobs[1].completion_s, 120);
  EXPECT_DOUBLE_EQ(r.jobs[1].first_start_s, 0);
  EXPECT_DOUBLE_EQ(r.avg_jct_s, 120);
  // One device busy 120 s out of 120: shared time counts once.
  EXPECT_DOUBLE_EQ(r.utilization.at("gpu"), 1.0);
  EXPECT_DOUBLE_EQ(r.shared_device_hours, 120.0 / 3600);
}

TEST(SpaceSharing, PartnerReturnsToItsAloneRateWhenTheOtherFinishes) {
  // A has 45 steps: done at 60 at 0.75 steps/s. B did 45 of its 90 by then and runs the other
  // 45 alone at 1 step/s: done at 105. The device is busy 0..105, shared 0..60.
  const auto c = MakeCluster({{"gpu", "cuda", 1, 1}});
  const auto profile = PairProfile(0.75, 0.75);
  model::Workload w;
  w.jobs = {TypedJob(0, 0, 45, "A"), TypedJob(1, 0, 90, "B")};
  SimOptions o = Sharing("fifo");
  o.timeline_sample_s = 10;
  const SimResult r = RunWith(c, w, profile, o);
  EXPECT_DOUBLE_EQ(r.jobs[0].completion_s, 60);
  EXPECT_DOUBLE_EQ(r.jobs[1].completion_s, 105);
  EXPECT_DOUBLE_EQ(r.utilization.at("gpu"), 1.0);
  EXPECT_DOUBLE_EQ(r.shared_device_hours, 60.0 / 3600);
  // The timeline never counts the shared device twice.
  for (const auto& s : r.timeline.samples) EXPECT_LE(s.busy[0], 1) << s.time_s;
  // The host (A) left first: the guest (B) now holds the device, busy once.
  ASSERT_GE(r.timeline.samples.size(), 8u);
  EXPECT_EQ(r.timeline.samples[7].busy[0], 1);  // t = 70
  EXPECT_EQ(r.timeline.samples[7].running, 1);
}

TEST(SpaceSharing, GuestLeavingFirstLeavesTheHostAlone) {
  // The roles reversed: the guest B (45 steps) ends first at 60; the host A runs its last 45
  // steps alone: done at 105.
  const auto c = MakeCluster({{"gpu", "cuda", 1, 1}});
  const auto profile = PairProfile(0.75, 0.75);
  model::Workload w;
  w.jobs = {TypedJob(0, 0, 90, "A"), TypedJob(1, 0, 45, "B")};
  const SimResult r = RunWith(c, w, profile, Sharing("fifo"));
  EXPECT_DOUBLE_EQ(r.jobs[1].completion_s, 60);
  EXPECT_DOUBLE_EQ(r.jobs[0].completion_s, 105);
  EXPECT_DOUBLE_EQ(r.utilization.at("gpu"), 1.0);
}

TEST(SpaceSharing, GuestMovesToADeviceThatComesFree) {
  // Two devices: A and C (30 steps) start alone, B joins A. At 30 C is done and nothing is
  // queued; B (22.5 steps done) moves to the free device, and both run their last 67.5 steps
  // alone at 1 step/s: done at 97.5 (instead of 120 in the pair).
  const auto c = MakeCluster({{"gpu", "cuda", 1, 2}});
  const auto profile = PairProfile(0.75, 0.75);
  model::Workload w;
  w.jobs = {TypedJob(0, 0, 90, "A"), TypedJob(1, 0, 30, "C"), TypedJob(2, 0, 90, "B")};
  const SimResult r = RunWith(c, w, profile, Sharing("fifo"));
  EXPECT_EQ(r.pairs_formed, 1);
  EXPECT_EQ(r.migrations, 1);
  EXPECT_DOUBLE_EQ(r.jobs[1].completion_s, 30);
  EXPECT_DOUBLE_EQ(r.jobs[0].completion_s, 97.5);
  EXPECT_DOUBLE_EQ(r.jobs[2].completion_s, 97.5);
  EXPECT_DOUBLE_EQ(r.shared_device_hours, 30.0 / 3600);
}

TEST(SpaceSharing, NoPairWhenItDoesNotBeatRunningApartByTheMargin) {
  // 0.5 + 0.55 = 1.05: below 1 + the default margin of 0.1, so B waits for A.
  const auto c = MakeCluster({{"gpu", "cuda", 1, 1}});
  const auto profile = PairProfile(0.5, 0.55);
  model::Workload w;
  w.jobs = {TypedJob(0, 0, 90, "A"), TypedJob(1, 0, 90, "B")};
  const SimResult r = RunWith(c, w, profile, Sharing("fifo"));
  EXPECT_EQ(r.pairs_formed, 0);
  EXPECT_DOUBLE_EQ(r.jobs[0].completion_s, 90);
  EXPECT_DOUBLE_EQ(r.jobs[1].completion_s, 180);
  EXPECT_DOUBLE_EQ(r.shared_device_hours, 0);
  // Without a margin the pair forms: A at 0.5 needs 180 s; B at 0.55 has done 99 > 90 steps
  // by then, so B ends first at 90 / 0.55 and A finishes its rest alone.
  SimOptions o = Sharing("fifo");
  o.sched.space_sharing_min_gain = 0;
  const SimResult r0 = RunWith(c, w, profile, o);
  EXPECT_EQ(r0.pairs_formed, 1);
  const double b_end = 90 / 0.55;
  EXPECT_NEAR(r0.jobs[1].completion_s, b_end, 1e-5);
  EXPECT_NEAR(r0.jobs[0].completion_s, b_end + (90 - 0.5 * b_end), 1e-5);
}

TEST(SpaceSharing, PairOnlyWithAProfileEntry) {
  // (A, C) has no pair entry: C waits although A runs alone.
  const auto c = MakeCluster({{"gpu", "cuda", 1, 1}});
  const auto profile = PairProfile(0.75, 0.75);
  model::Workload w;
  w.jobs = {TypedJob(0, 0, 90, "A"), TypedJob(1, 0, 90, "C")};
  const SimResult r = RunWith(c, w, profile, Sharing("fifo"));
  EXPECT_EQ(r.pairs_formed, 0);
  EXPECT_DOUBLE_EQ(r.jobs[1].completion_s, 180);
}

TEST(SpaceSharing, BothJobsMemoryMustFitOnTheDevice) {
  // The test devices have 32 GiB: 20 + 20 GiB do not fit together, 16 + 16 do.
  const auto c = MakeCluster({{"gpu", "cuda", 1, 1}});
  const auto profile = PairProfile(0.75, 0.75);
  model::Workload w;
  w.jobs = {TypedJob(0, 0, 90, "A"), TypedJob(1, 0, 90, "B")};
  for (auto& j : w.jobs) j.memory_per_worker = 20ull << 30;
  EXPECT_EQ(RunWith(c, w, profile, Sharing("fifo")).pairs_formed, 0);
  for (auto& j : w.jobs) j.memory_per_worker = 16ull << 30;
  EXPECT_EQ(RunWith(c, w, profile, Sharing("fifo")).pairs_formed, 1);
}

TEST(SpaceSharing, NeverMoreThanTwoJobsOnADevice) {
  // A, B and another B: every (A, B) pair gains, but the device takes one pair. The second B
  // starts once the pair ends (both at 120), then alone: done at 210.
  const auto c = MakeCluster({{"gpu", "cuda", 1, 1}});
  auto profile = PairProfile(0.75, 0.75);
  profile.SetColocated("B", 1, "B", 1, "gpu", 0.75, 0.75);
  model::Workload w;
  w.jobs = {TypedJob(0, 0, 90, "A"), TypedJob(1, 0, 90, "B"), TypedJob(2, 0, 90, "B")};
  SimOptions o = Sharing("fifo");
  o.timeline_sample_s = 5;
  const SimResult r = RunWith(c, w, profile, o);
  EXPECT_EQ(r.pairs_formed, 1);
  EXPECT_DOUBLE_EQ(r.jobs[2].first_start_s, 120);
  EXPECT_DOUBLE_EQ(r.jobs[2].completion_s, 210);
  for (const auto& s : r.timeline.samples) EXPECT_LE(s.running, 2) << s.time_s;
}

TEST(SpaceSharing, FaultOnASharedDeviceRequeuesBoth) {
  // The pair runs at 0.75 steps/s each from 0; the device fails at 20 for 10 s. With a
  // checkpoint every 10 s both keep 15 steps (75 left) and pair again at 30: done at 130.
  const auto c = MakeCluster({{"gpu", "cuda", 1, 1}});
  const auto profile = PairProfile(0.75, 0.75);
  model::Workload w;
  w.jobs = {TypedJob(0, 0, 90, "A"), TypedJob(1, 0, 90, "B")};
  SimOptions o = Sharing("fifo");
  o.checkpoint_interval_s = 10;
  Fault f;
  f.time_s = 20;
  f.device = c.device_of(model::NodeId(0), 0);
  f.duration_s = 10;
  o.faults = {f};
  const SimResult r = RunWith(c, w, profile, o);
  EXPECT_EQ(r.faults, 1);
  EXPECT_EQ(r.pairs_formed, 2);
  EXPECT_DOUBLE_EQ(r.jobs[0].completion_s, 130);
  EXPECT_DOUBLE_EQ(r.jobs[1].completion_s, 130);
  EXPECT_DOUBLE_EQ(r.lost_device_hours, 0);
  // Busy 0..20 and 30..130 on the one device, which is down 10 s of the 130.
  EXPECT_DOUBLE_EQ(r.utilization.at("gpu"), 1.0);
  EXPECT_DOUBLE_EQ(r.shared_device_hours, 120.0 / 3600);
}

TEST(SpaceSharing, WithoutAProfileItIsAnError) {
  const auto c = MakeCluster({{"gpu", "cuda", 1, 1}});
  model::Workload w;
  w.jobs = {testing::MakeJob(0, 0, 10, {{"gpu", 1.0}})};
  auto r = Simulate(c, w, nullptr, Sharing("fifo"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("pair"), std::string::npos) << r.status().ToString();
}

const model::ThroughputProfile& GavelProfile() {
  static const auto profile = model::io::LoadGavelThroughputs(
      std::string(HETSCHED_SOURCE_DIR) + "/data/gavel/simulation_throughputs.json");
  EXPECT_TRUE(profile.ok()) << profile.status().ToString();
  return *profile;
}

// Random Gavel-like traces at a load that keeps a queue: every job completes, pairs form,
// busy time never exceeds capacity, and the run without the flag shares nothing.
TEST(SpaceSharing, GavelTracesUnderPreemptiveAndLpPolicies) {
  auto cluster = model::io::LoadCluster("v100=4,p100=4,k80=4");
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  for (uint64_t seed : {1, 2}) {
    GavelTraceOptions t;
    t.rate_per_hour = 8;
    t.jobs = 120;
    t.seed = seed;
    t.multi_gpu = seed == 2;
    auto w = GenerateGavelTrace(GavelProfile(), t);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    for (const char* policy : {"default", "maxmin-het", "fifo-het"}) {
      SimOptions o = Sharing(policy);
      o.round_s = 360;
      o.timeline_sample_s = 600;
      auto r = Simulate(*cluster, *w, &GavelProfile(), o);
      ASSERT_TRUE(r.ok()) << policy << ": " << r.status().ToString();
      ExpectAllAccounted(*r);
      // Every job completes but the 8-worker gangs, which the cluster rejects.
      EXPECT_EQ(r->jobs_unfinished, 0) << policy << " seed " << seed;
      EXPECT_EQ(r->jobs_completed + r->jobs_rejected, t.jobs) << policy << " seed " << seed;
      EXPECT_GT(r->pairs_formed, 0) << policy << " seed " << seed;
      EXPECT_GT(r->shared_device_hours, 0) << policy;
      for (const auto& [type, u] : r->utilization) EXPECT_LE(u, 1 + 1e-9) << policy << type;
      for (const auto& s : r->timeline.samples) {
        for (size_t i = 0; i < s.busy.size(); ++i) {
          EXPECT_LE(s.busy[i], r->timeline.type_total[i]) << policy << " t=" << s.time_s;
        }
        // At most two jobs per device.
        EXPECT_LE(s.running, 2 * 12) << policy;
      }
      o.sched.space_sharing = false;
      auto off = Simulate(*cluster, *w, &GavelProfile(), o);
      ASSERT_TRUE(off.ok());
      EXPECT_EQ(off->pairs_formed, 0);
      EXPECT_EQ(off->jobs_completed, r->jobs_completed);
    }
  }
}

}  // namespace
}  // namespace hetsched::sim
