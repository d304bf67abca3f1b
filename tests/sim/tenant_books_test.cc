// Tenants in a simulation (sim/tenant_books.h, sched/tenant_shares.h): weights split the
// normalized throughput, device-hours count by type and by worth, and idle guarantees show as
// lent while others borrow.
#include "sim/tenant_books.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "sched/test_cluster.h"
#include "sim/run_sim.h"

namespace hetsched::sim {
namespace {

using testing::MakeCluster;
using testing::MakeJob;
using testing::RunSim;

model::Tenant Team(std::string name, double weight, int32_t quota = 0) {
  model::Tenant t;
  t.name = std::move(name);
  t.weight = weight;
  if (quota > 0) t.per_type["slow"] = quota;
  return t;
}

SimOptions WithTenants(std::vector<model::Tenant> list, double until_s) {
  auto tenants = std::make_shared<model::Tenants>();
  tenants->list = std::move(list);
  tenants->fair_share.reference_type = "slow";
  SimOptions o;
  o.sched.tenants = std::move(tenants);
  o.until_s = until_s;
  return o;
}

// `count` jobs of `tenant` that outlast any run here, 4x as fast on "fast" as on "slow".
void AddJobs(model::Workload& w, const std::string& tenant, int count) {
  for (int i = 0; i < count; ++i) {
    const int id = static_cast<int>(w.jobs.size());
    model::Job j = MakeJob(id, 0, 1e9, {{"fast", 4.0}, {"slow", 1.0}});
    j.tenant = tenant;
    w.jobs.push_back(std::move(j));
  }
}

TEST(TenantBooks, WeightsSplitNormalizedThroughput) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 2}, {"slow", "cuda", 1, 6}});
  model::Workload w;
  AddJobs(w, "a", 30);
  AddJobs(w, "b", 30);
  // Decisions every round: nothing else happens while these jobs run.
  for (const char* policy : {"default", "las-het", "fifo-het"}) {
    SimOptions o = WithTenants({Team("a", 1), Team("b", 3)}, 48 * 3600.0);
    o.policy = policy;
    o.round_s = 360;
    const SimResult r = RunSim(c, w, o);
    ASSERT_EQ(r.tenants.size(), 2u);
    const TenantResult& a = r.tenants.at("a");
    const TenantResult& b = r.tenants.at("b");
    EXPECT_NEAR(a.normalized_share, 0.25, 0.25 * 0.05) << policy;
    EXPECT_NEAR(b.normalized_share, 0.75, 0.75 * 0.05) << policy;
    EXPECT_NEAR(a.normalized_share + b.normalized_share, 1, 1e-9);
    for (const TenantResult* t : {&a, &b}) {
      // A fast device-hour is worth four reference (slow) ones to these jobs.
      const double fast = t->device_hours.count("fast") ? t->device_hours.at("fast") : 0;
      const double slow = t->device_hours.count("slow") ? t->device_hours.at("slow") : 0;
      EXPECT_NEAR(t->normalized_device_hours, 4 * fast + slow, 1e-6) << policy;
    }
    // The whole cluster was busy throughout.
    EXPECT_NEAR(a.device_hours.at("slow") + b.device_hours.at("slow"), 6 * 48, 1e-6) << policy;
  }
}

TEST(TenantBooks, AnIdleGuaranteeIsLentToWhoBorrows) {
  const auto c = MakeCluster({{"slow", "cuda", 1, 4}});
  model::Workload w;
  AddJobs(w, "b", 10);
  const SimResult r = RunSim(c, w, WithTenants({Team("a", 1, /*quota=*/2), Team("b", 1)}, 36000));
  const TenantResult& a = r.tenants.at("a");
  const TenantResult& b = r.tenants.at("b");
  EXPECT_NEAR(b.device_hours.at("slow"), 40, 1e-6);
  EXPECT_NEAR(b.borrowed_device_hours, 40, 1e-6);  // b is guaranteed nothing
  // Two devices nobody guarantees; the other two are a's, idle.
  EXPECT_NEAR(a.lent_device_hours, 20, 1e-6);
  EXPECT_DOUBLE_EQ(a.borrowed_device_hours, 0);
  EXPECT_DOUBLE_EQ(b.lent_device_hours, 0);
  EXPECT_TRUE(a.device_hours.empty());
  EXPECT_EQ(a.lent_device_hours_by_type.size(), 1u);
  EXPECT_NEAR(a.lent_device_hours_by_type.at("slow"), 20, 1e-6);
  EXPECT_TRUE(b.lent_device_hours_by_type.empty());
}

TEST(TenantBooks, LentDeviceHoursSplitByTypeAsBorrowersHoldThem) {
  // b borrows all 8 devices, 4 of each type; 6 are guaranteed to nobody, a's 2 are idle and
  // lent: over 10 h, 20 device-hours, half on each type as b's devices are.
  const auto c = MakeCluster({{"fast", "cuda", 1, 4}, {"slow", "cuda", 1, 4}});
  model::Workload w;
  AddJobs(w, "b", 8);
  const SimResult r = RunSim(c, w, WithTenants({Team("a", 1, /*quota=*/2), Team("b", 1)}, 36000));
  const TenantResult& a = r.tenants.at("a");
  ASSERT_NEAR(r.tenants.at("b").device_hours.at("fast"), 40, 1e-6);
  EXPECT_NEAR(a.lent_device_hours, 20, 1e-6);
  ASSERT_EQ(a.lent_device_hours_by_type.size(), 2u);
  EXPECT_NEAR(a.lent_device_hours_by_type.at("fast"), 10, 1e-6);
  EXPECT_NEAR(a.lent_device_hours_by_type.at("slow"), 10, 1e-6);
}

// a guaranteed 4 devices, b (of weight `b_weight`) nothing, under `policy` with the shipped
// preemption costs (a 30 s checkpoint write that holds the devices, a 60 s restore).
SimOptions ReclaimOptions(const char* policy, double b_weight = 1) {
  SimOptions o = WithTenants({Team("a", 1, /*quota=*/4), Team("b", b_weight)}, 0);
  o.policy = policy;
  o.checkpoint_save_s = 30;
  o.restore_s = 60;
  return o;
}

// Runs `w` on `c` under `policy` (ReclaimOptions). The owner a waited, for the decision or the
// borrowers' checkpoints, and no longer than the bound (docs/simulator.md, "Reclaim"): the
// next full decision (one preempt interval) and the borrowers' checkpoint writes; a's `a_jobs`
// and b's 16 jobs completed, and no work was lost.
SimResult ExpectReclaimWithinTheBound(const model::Cluster& c, const model::Workload& w,
                                      const char* policy, int a_jobs) {
  const SimOptions o = ReclaimOptions(policy);
  SimResult r = RunSim(c, w, o);
  const TenantResult& a = r.tenants.at("a");
  EXPECT_GT(a.reclaim_wait_s, 0) << policy;
  EXPECT_LE(a.reclaim_wait_s, o.sched.preempt_interval_s + o.checkpoint_save_s) << policy;
  EXPECT_EQ(a.jobs_completed, a_jobs) << policy;
  EXPECT_EQ(r.tenants.at("b").jobs_completed, 16) << policy;
  EXPECT_DOUBLE_EQ(r.lost_device_hours, 0) << policy;
  return r;
}

TEST(TenantBooks, AnOwnerTakesItsGuaranteeBackWithinTheBound) {
  // b's CUDA jobs of 10 h take every NVIDIA device at 2.5 h, a's idle guarantee included; a
  // submits 4 jobs of 1 h at 3 h plus a minute, between two full decisions, while b's runs are
  // inside their quantum (an hour) and the AMD devices nobody can use here leave a throughput
  // plan two types to plan. The bound (docs/simulator.md, "Reclaim"): the next full decision
  // (one preempt interval) and the borrowers' checkpoint writes.
  const auto c = MakeCluster({{"slow", "cuda", 1, 8}, {"amd", "rocm", 1, 4}});
  model::Workload w;
  for (int i = 0; i < 20; ++i) {
    const bool of_a = i >= 16;
    model::Job j =
        MakeJob(i, of_a ? 3 * 3600 + 60 : 2.5 * 3600, (of_a ? 1 : 10) * 3600, {{"slow", 1.0}});
    j.tenant = of_a ? "a" : "b";
    w.jobs.push_back(std::move(j));
  }
  for (const char* policy : {"default", "las-het", "fifo-het"}) {
    const SimResult r = ExpectReclaimWithinTheBound(c, w, policy, /*a_jobs=*/4);
    // b's stopped runs resumed from their checkpoints (every job done, no work lost above).
    EXPECT_GE(r.tenants.at("b").preempted_runs, 4) << policy;
    EXPECT_EQ(r.tenants.at("a").preempted_runs, 0) << policy;
  }
}

TEST(TenantBooks, AnOwnersGangTakesItsGuaranteeBackWithinTheBound) {
  // b's CUDA jobs take every NVIDIA device at 2.5 h and keep 8 more queued. a submits a gang
  // of 4 at 3 h 1 min, when one of b's runs ends: the full decision then counts for the gang
  // the device that run frees and 3 of b's, which it preempts. The gang holds the free device
  // while b's checkpoints are written (sched/reservations.h); were it given to b's queued jobs,
  // the 3 released devices could not take the gang and it would wait for a later decision.
  const auto c = MakeCluster({{"slow", "cuda", 1, 8}, {"amd", "rocm", 1, 4}});
  model::Workload w;
  for (int i = 0; i < 17; ++i) {
    const bool of_a = i == 16;
    const double arrival_s = of_a ? 3 * 3600 + 60 : 2.5 * 3600;
    // Job 0 runs from 2.5 h until a's gang arrives.
    const double work = of_a ? 3600 : i == 0 ? 3 * 3600 + 60 - arrival_s : 10 * 3600;
    model::Job j = MakeJob(i, arrival_s, work, {{"slow", 1.0}}, of_a ? 4 : 1);
    j.tenant = of_a ? "a" : "b";
    w.jobs.push_back(std::move(j));
  }
  for (const char* policy : {"default", "las-het", "fifo-het"}) {
    ExpectReclaimWithinTheBound(c, w, policy, /*a_jobs=*/1);
  }
}

TEST(TenantBooks, AnOwnerTakesItsGuaranteeBackWithinTheBoundInAQuietStretch) {
  // b's 16 CUDA jobs of 10 h arrive at 0: 8 run, 8 wait. a submits 4 jobs of 1 h a minute
  // after the full decision at 0, and then nothing happens until b's first runs end at 10 h.
  // The next full decision falls due at 300 s with no event there: the simulator wakes for it
  // (Scheduler::NextDecisionDue), as the daemon decides on its ticks, rather than at 10 h.
  const auto c = MakeCluster({{"slow", "cuda", 1, 8}, {"amd", "rocm", 1, 4}});
  model::Workload w;
  for (int i = 0; i < 20; ++i) {
    const bool of_a = i >= 16;
    model::Job j = MakeJob(i, of_a ? 60 : 0, (of_a ? 1 : 10) * 3600, {{"slow", 1.0}});
    j.tenant = of_a ? "a" : "b";
    w.jobs.push_back(std::move(j));
  }
  for (const char* policy : {"default", "las-het", "fifo-het"}) {
    const SimResult r = ExpectReclaimWithinTheBound(c, w, policy, /*a_jobs=*/4);
    // The decision due at 300 s (woken a microsecond after), then b's checkpoint writes (30 s).
    EXPECT_NEAR(r.tenants.at("a").reclaim_wait_s, 270, 1e-5) << policy;
    EXPECT_GE(r.tenants.at("b").preempted_runs, 4) << policy;
  }
  // With no interval every decision reallocates, and only events bring decisions: nothing to
  // wake for (a wake-up a microsecond after each decision would never end).
  SimOptions o = ReclaimOptions("las-het");
  o.sched.preempt_interval_s = 0;
  const SimResult r = RunSim(c, w, o);
  EXPECT_EQ(r.tenants.at("a").jobs_completed, 4);
  EXPECT_LT(r.decisions, 200);
}

TEST(TenantBooks, AnOwnersSmallJobTakesItsGuaranteeBackWithinTheBoundBehindAGangBeyondIt) {
  // a (guaranteed 4) runs one job from 0; b, weighing ten times as much, borrows the other six
  // NVIDIA devices with runs of 10 h, and the AMD devices nobody runs on leave it room to
  // borrow. At 6 min a submits a gang of 4 (beyond its guarantee with what it holds) and then
  // a gang of 2 (within it), between two full decisions and inside b's quantum. The gang of 2
  // is owed 2 devices; it must take its turn inside the guarantee ahead of b's runs, not wait
  // behind its tenant's gang of 4, whose turn comes after b's (a has used more against its
  // share). Before, it waited for b's quantum to end (the four-team day's 630 s,
  // docs/results.md).
  const auto c = MakeCluster({{"slow", "cuda", 1, 7}, {"amd", "rocm", 1, 4}});
  model::Workload w;
  const auto add = [&](const char* tenant, double arrival_s, double hours, int gang) {
    const int id = static_cast<int>(w.jobs.size());
    model::Job j = MakeJob(id, arrival_s, hours * 3600, {{"slow", 1.0}}, gang);
    j.tenant = tenant;
    w.jobs.push_back(std::move(j));
  };
  add("a", 0, 10, 1);
  for (int i = 0; i < 6; ++i) add("b", 0, 10, 1);
  add("a", 360, 1, 4);
  add("a", 361, 1, 2);
  for (const char* policy : {"default", "las-het", "fifo-het"}) {
    const SimOptions o = ReclaimOptions(policy, /*b_weight=*/10);
    const SimResult r = RunSim(c, w, o);
    const TenantResult& a = r.tenants.at("a");
    EXPECT_GT(a.reclaim_wait_s, 0) << policy;
    EXPECT_LE(a.reclaim_wait_s, o.sched.preempt_interval_s + o.checkpoint_save_s) << policy;
    EXPECT_EQ(a.jobs_completed, 3) << policy;
    EXPECT_EQ(r.tenants.at("b").jobs_completed, 6) << policy;
    EXPECT_GE(r.tenants.at("b").preempted_runs, 2) << policy;
    EXPECT_DOUBLE_EQ(r.lost_device_hours, 0) << policy;
  }
}

TEST(TenantBooks, JainAndRhoFollowTheirDefinitions) {
  const auto c = MakeCluster({{"slow", "cuda", 1, 4}});
  model::Workload w;
  AddJobs(w, "a", 1);  // each 1e9 steps at 1 step/s alone
  AddJobs(w, "b", 1);
  model::Tenants tenants;
  tenants.list = {Team("a", 1), Team("b", 1)};
  tenants.fair_share.reference_type = "slow";
  TenantBooks books(tenants, c, w, nullptr);
  books.Run(0, model::DeviceTypeId(0), 1, 0, 100, /*preempted=*/true);
  books.Run(1, model::DeviceTypeId(0), 3, 0, 100, /*preempted=*/false);
  // Two tenants: a 1-device job is within its 1/2 share of 4 devices; alone it takes 1e9 s.
  EXPECT_DOUBLE_EQ(books.AloneS(w.jobs[0], 2), 1e9);
  model::Job wide = w.jobs[0];
  wide.gang_size = 4;  // twice the share of 2 devices: stretched 2x
  EXPECT_DOUBLE_EQ(books.AloneS(wide, 2), 2 * 1e9);
  const std::vector<TenantJobEnd> ends = {{0, 0, 3e9}, {1, 0, -1}};
  const auto by_name = books.Summarize(ends, {0, 100});
  EXPECT_DOUBLE_EQ(by_name.at("a").normalized_share, 0.25);
  EXPECT_DOUBLE_EQ(by_name.at("a").rho, 3);  // JCT 3e9 s against 1e9 s alone
  EXPECT_DOUBLE_EQ(by_name.at("b").rho, 0);  // none completed
  EXPECT_EQ(by_name.at("a").preempted_runs, 1);
  EXPECT_EQ(by_name.at("b").preempted_runs, 0);
  const TenantFairness f = books.Fairness(by_name, ends);
  // Shares 0.25 and 0.75 against 1/2 each: x = 0.5, 1.5; (0.5 + 1.5)^2 / (2 (0.25 + 2.25)).
  EXPECT_DOUBLE_EQ(f.jain_index, 0.8);
  EXPECT_DOUBLE_EQ(f.worst_rho, 3);
}

TEST(TenantBooks, ReclaimWaitIsTheLongestStretchAnOwnerWasKeptBelowItsGuarantee) {
  const auto c = MakeCluster({{"slow", "cuda", 1, 4}});
  model::Workload w;
  AddJobs(w, "a", 2);
  AddJobs(w, "b", 1);
  model::Tenants tenants;
  tenants.list = {Team("a", 1, /*quota=*/2), Team("b", 1)};
  tenants.fair_share.reference_type = "slow";
  TenantBooks books(tenants, c, w, nullptr);
  // a's job 0 arrives at 10 and runs at 40; job 1 arrives at 50 and runs at 60 (a wait of 10
  // within the guarantee) and after a stop at 100 waits again until 200 (100: the longest).
  books.Run(0, model::DeviceTypeId(0), 1, 40, 300, false);
  books.Run(1, model::DeviceTypeId(0), 1, 60, 100, true);
  books.Run(1, model::DeviceTypeId(0), 1, 200, 300, false);
  books.Run(2, model::DeviceTypeId(0), 4, 0, 300, false);
  const std::vector<TenantJobEnd> ends = {{0, 10, 300}, {1, 50, 300}, {2, 0, 300}};
  const auto by_name = books.Summarize(ends, {0, 300});
  EXPECT_DOUBLE_EQ(by_name.at("a").reclaim_wait_s, 100);
  EXPECT_DOUBLE_EQ(by_name.at("b").reclaim_wait_s, 0);  // no guarantee
}

}  // namespace
}  // namespace hetsched::sim
