// Fair share between tenants (sched/tenant_shares.h) through the Scheduler: weights split the
// devices, a guarantee comes first, borrowing and lending stay within their limits, an owner's
// jobs take back what others borrowed, and the LP policies refuse tenants.
#include "sched/tenant_shares.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "sched/scheduler.h"
#include "sched/test_cluster.h"

namespace hetsched::sched {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

model::Tenant Team(std::string name, double weight, int32_t quota = 0) {
  model::Tenant t;
  t.name = std::move(name);
  t.weight = weight;
  if (quota > 0) t.per_type["nv"] = quota;
  return t;
}

SchedulerOptions WithTenants(std::vector<model::Tenant> list) {
  auto tenants = std::make_shared<model::Tenants>();
  tenants->list = std::move(list);
  tenants->fair_share.reference_type = "nv";
  SchedulerOptions o;
  o.tenants = std::move(tenants);
  o.preemption_cost_s = 0;  // no quantum: reclaims wait for nothing but the decision
  return o;
}

// Submits `count` identical long jobs of `tenant` at `now_s`, ids from `first`.
void SubmitJobs(Scheduler& s, const std::string& tenant, int first, int count, double now_s) {
  for (int i = first; i < first + count; ++i) {
    model::Job j = MakeJob(i, now_s, 1e6, {{"nv", 1.0}});
    j.tenant = tenant;
    ASSERT_TRUE(s.Submit(j, now_s).accepted);
  }
}

// Jobs with ids in [first, end) that `d` placed.
int Placed(const Decision& d, int first, int end) {
  int n = 0;
  for (const Placement& p : d.placed) n += p.job.value() >= first && p.job.value() < end ? 1 : 0;
  return n;
}

const model::Cluster& Six() {
  static const model::Cluster c = MakeCluster({{"nv", "cuda", 1, 6}});
  return c;
}

TEST(TenantShares, WeightsSplitTheDevicesWhateverThePolicyOrder) {
  // All of a's jobs come first in arrival order; b weighs twice as much.
  for (std::string_view policy : {"fifo", "fifo-het", "las-het", "srpt-het", "default"}) {
    auto s = Scheduler::Create(Six(), nullptr, policy, WithTenants({Team("a", 1), Team("b", 2)}));
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    SubmitJobs(**s, "a", 0, 12, 0);
    SubmitJobs(**s, "b", 12, 12, 0);
    const Decision d = (*s)->Decide(0);
    EXPECT_EQ(Placed(d, 0, 12), 2) << policy;
    EXPECT_EQ(Placed(d, 12, 24), 4) << policy;
  }
}

TEST(TenantShares, AGuaranteeComesBeforeWeight) {
  auto s = Scheduler::Create(Six(), nullptr, "fifo-het",
                             WithTenants({Team("a", 1, /*quota=*/4), Team("b", 5)}));
  ASSERT_TRUE(s.ok());
  SubmitJobs(**s, "b", 0, 12, 0);
  SubmitJobs(**s, "a", 12, 12, 0);
  const Decision d = (*s)->Decide(0);
  EXPECT_EQ(Placed(d, 12, 24), 4);  // a's
  EXPECT_EQ(Placed(d, 0, 12), 2);
}

TEST(TenantShares, AQuotaOnTypesAJobCannotUseGuaranteesItNothing) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 6}, {"amd", "rocm", 1, 4}});
  model::Tenant a = Team("a", 1, /*quota=*/1);
  a.per_type["amd"] = 4;  // its jobs are CUDA-only
  auto s = Scheduler::Create(c, nullptr, "fifo", WithTenants({a, Team("b", 1)}));
  ASSERT_TRUE(s.ok());
  SubmitJobs(**s, "a", 0, 12, 0);
  SubmitJobs(**s, "b", 12, 12, 0);
  const Decision d = (*s)->Decide(0);
  // One guaranteed NVIDIA device, then turns: not five devices ahead of b.
  EXPECT_EQ(Placed(d, 0, 12), 3);
  EXPECT_EQ(Placed(d, 12, 24), 3);
}

TEST(TenantShares, BorrowingStopsAtTheLimit) {
  model::Tenant a = Team("a", 1, /*quota=*/1);
  a.borrow_limit = 1;
  auto s = Scheduler::Create(Six(), nullptr, "fifo", WithTenants({a, Team("b", 1)}));
  ASSERT_TRUE(s.ok());
  SubmitJobs(**s, "a", 0, 6, 0);
  EXPECT_EQ((*s)->Decide(0).placed.size(), 2u);  // its one guaranteed and one borrowed
}

TEST(TenantShares, IdleGuaranteeBeyondTheLendLimitIsKept) {
  model::Tenant a = Team("a", 1, /*quota=*/4);
  a.lend_limit = 1;
  auto s = Scheduler::Create(Six(), nullptr, "fifo", WithTenants({a, Team("b", 1)}));
  ASSERT_TRUE(s.ok());
  SubmitJobs(**s, "b", 0, 10, 0);
  // The two devices nobody guarantees and the one a lends.
  EXPECT_EQ((*s)->Decide(0).placed.size(), 3u);
}

TEST(TenantShares, TheOwnersJobsTakeBackWhatWasBorrowed) {
  auto s = Scheduler::Create(Six(), nullptr, "fifo-het",
                             WithTenants({Team("a", 1, /*quota=*/4), Team("b", 1)}));
  ASSERT_TRUE(s.ok());
  SubmitJobs(**s, "b", 0, 10, 0);
  EXPECT_EQ((*s)->Decide(0).placed.size(), 6u);  // a is idle: b borrows all it guarantees
  SubmitJobs(**s, "a", 10, 4, 1000);
  const Decision d = (*s)->Decide(1000);  // past the preempt interval: a full decision
  EXPECT_EQ(d.preempted.size(), 4u);
  EXPECT_EQ(Placed(d, 10, 14), 4);
}

TEST(TenantShares, AFifoBaselineDoesNotMoveWithThePreemptIntervalItDoesNotUse) {
  // At 2000 s one device frees: a has used 1000 reference-device-seconds and runs one job, b
  // has used 2000 and runs none. Counting a's running job for 300 s, a comes first; counting it
  // for a 2,400 s preempt interval, b would. fifo never preempts: the interval must not decide.
  const auto c = MakeCluster({{"nv", "cuda", 1, 2}});
  for (const double interval_s : {300.0, 2400.0}) {
    SchedulerOptions o = WithTenants({Team("a", 1), Team("b", 1)});
    o.preempt_interval_s = interval_s;
    auto s = Scheduler::Create(c, nullptr, "fifo", o);
    ASSERT_TRUE(s.ok());
    model::Job b0 = MakeJob(0, 0, 2000, {{"nv", 1.0}});
    b0.tenant = "b";
    ASSERT_TRUE((*s)->Submit(b0, 0).accepted);
    ASSERT_EQ((*s)->Decide(0).placed.size(), 1u);
    SubmitJobs(**s, "a", 1, 1, 1000);
    ASSERT_EQ((*s)->Decide(1000).placed.size(), 1u);
    SubmitJobs(**s, "a", 2, 1, 1500);
    SubmitJobs(**s, "b", 3, 1, 1500);
    (*s)->Finish(model::JobId(0), 2000);
    const Decision d = (*s)->Decide(2000);
    ASSERT_EQ(d.placed.size(), 1u) << interval_s;
    EXPECT_EQ(d.placed[0].job.value(), 2) << interval_s;  // a's
  }
}

TEST(TenantShares, ATenantKeepsItsTurnForItsNextJob) {
  // Order's keys: a, b, a, none, b, a (by job id). The walk takes position 0 (a) and finds the
  // plan gives it no type: a's next jobs are 2, then 5; b's next after 1 is 4.
  model::Tenants tenants;
  tenants.list = {Team("a", 1), Team("b", 1)};
  tenants.fair_share.reference_type = "nv";
  const TenantShares shares(tenants, Six(), 300);
  const std::vector<std::string> owner = {"a", "b", "a", "", "b", "a"};
  std::vector<JobRecord> records(owner.size());
  std::vector<TenantShares::Key> keys;
  for (size_t i = 0; i < owner.size(); ++i) {
    model::Job j = MakeJob(static_cast<int>(i), 0, 1, {{"nv", 1.0}});
    j.tenant = owner[i];
    records[i].job = std::make_unique<const model::Job>(j);
    keys.emplace_back(0.0, 0.0, static_cast<int64_t>(i), static_cast<int32_t>(i));
  }
  TenantTurnsKept turns(shares, records, keys);
  EXPECT_EQ(turns.NextOfTenant(0), 2u);
  turns.Take(2);
  EXPECT_EQ(turns.NextOfTenant(2), 5u);
  EXPECT_EQ(turns.NextOfTenant(1), 4u);
  EXPECT_TRUE(turns.Taken(2));
  EXPECT_FALSE(turns.Taken(4));
  turns.Take(5);
  EXPECT_EQ(turns.NextOfTenant(5), keys.size());  // a has no job left
  EXPECT_EQ(turns.NextOfTenant(3), keys.size());  // no tenant
}

TEST(TenantShares, StandingSpreadsBorrowedAndLentOverTheTypesBorrowersHold) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 4}, {"amd", "cuda", 1, 4}});
  model::Tenant a = Team("a", 1, /*quota=*/2);
  a.per_type["amd"] = 2;
  auto s = Scheduler::Create(c, nullptr, "fifo", WithTenants({a, Team("b", 1)}));
  ASSERT_TRUE(s.ok());
  for (int i = 0; i < 8; ++i) {
    model::Job j = MakeJob(i, 0, 1e6, {{"nv", 1.0}, {"amd", 1.0}});
    j.tenant = "b";
    ASSERT_TRUE((*s)->Submit(j, 0).accepted);
  }
  ASSERT_EQ((*s)->Decide(0).placed.size(), 8u);  // a is idle: b borrows all it guarantees
  const std::vector<TenantStanding> st = (*s)->TenantStandings(10);
  ASSERT_EQ(st.size(), 2u);
  const int32_t nv = c.catalog.FindId("nv")->value(), amd = c.catalog.FindId("amd")->value();
  // b holds 4 + 4 with no guarantee; the 4 nobody is guaranteed and a's idle 4 are what it
  // borrows, a's 4 lent as b's devices lie: half on each type.
  EXPECT_DOUBLE_EQ(st[1].borrowed, 8);
  EXPECT_DOUBLE_EQ(st[1].borrowed_devices[nv], 4);
  EXPECT_DOUBLE_EQ(st[1].borrowed_devices[amd], 4);
  EXPECT_DOUBLE_EQ(st[0].lent, 4);
  EXPECT_DOUBLE_EQ(st[0].lent_devices[nv], 2);
  EXPECT_DOUBLE_EQ(st[0].lent_devices[amd], 2);
  EXPECT_DOUBLE_EQ(st[0].borrowed_devices[nv] + st[1].lent_devices[nv], 0);
}

// The options of WithTenants(list), counted Kueue's way when `kueue`, with `reference` as the
// reference type.
SchedulerOptions Accounted(std::vector<model::Tenant> list, bool kueue,
                           const std::string& reference = "nv") {
  SchedulerOptions o = WithTenants(std::move(list));
  auto tenants = std::make_shared<model::Tenants>(*o.tenants);
  tenants->fair_share.kueue = kueue;
  tenants->fair_share.reference_type = reference;
  o.tenants = std::move(tenants);
  return o;
}

// What an owner is owed is counted per type: its gang of 4 runs on one type. Two devices are
// free on each type and b borrows the other two of each, inside its quantum; summed over the
// types, the four free devices would cover the gang and nothing would be reclaimed, and the
// gang would wait for b's runs to end. Counted per type, b's two runs on the type the gang is
// fastest on are stopped, and the gang starts there.
TEST(TenantShares, AnOwnersGangIsOwedItsDevicesOnOneType) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 4}, {"slow", "cuda", 1, 4}});
  model::Tenant a = Team("a", 1);
  a.per_type = {{"fast", 2}, {"slow", 2}};
  SchedulerOptions o = Accounted({a, Team("b", 1)}, /*kueue=*/false, "fast");
  o.preemption_cost_s = 30;  // a quantum of 40 costs: b's runs may be stopped only to reclaim
  auto s = Scheduler::Create(c, nullptr, "las-het", o);
  ASSERT_TRUE(s.ok());
  for (int i = 0; i < 4; ++i) {  // 0 and 1 run on fast only, 2 and 3 on slow only
    model::Job j = MakeJob(i, 0, 1e6, {{i < 2 ? "fast" : "slow", 1.0}});
    j.tenant = "b";
    ASSERT_TRUE((*s)->Submit(j, 0).accepted);
  }
  ASSERT_EQ((*s)->Decide(0).placed.size(), 4u);
  model::Job gang = MakeJob(4, 400, 1e6, {{"fast", 2.0}, {"slow", 1.0}}, /*gang=*/4);
  gang.tenant = "a";
  ASSERT_TRUE((*s)->Submit(gang, 400).accepted);
  const Decision d = (*s)->Decide(400);  // past the preempt interval: a full decision
  std::vector<int> preempted;
  for (model::JobId id : d.preempted) preempted.push_back(id.value());
  std::sort(preempted.begin(), preempted.end());
  EXPECT_EQ(preempted, (std::vector<int>{0, 1}));
  ASSERT_EQ(Placed(d, 4, 5), 1);
  EXPECT_EQ(d.placed.back().type, c.catalog.FindId("fast").value());
  EXPECT_EQ(d.placed.back().devices.size(), 4u);
}

// Seven "nv" devices: a (weight 1, guaranteed `quota`) runs one job from 0, b (weight 10, no
// quota) borrows the other six; b's runs are inside their quantum (a cost of 30 s: 40 costs),
// so only a reclaim stops them. At 400 a's usage against its share stands above b's, so b's
// turns come before a's turns beyond its guarantee, and the four AMD devices nobody is
// guaranteed (nobody here runs on them) leave room to borrow, so b's runs that take their
// turns keep their devices. `jobs` (ids from 7) are then submitted in that order, gang and
// arrival each, and a full decision is made.
Decision OwnerArrivesBehindAHeavierBorrower(int32_t quota,
                                            const std::vector<std::pair<int32_t, double>>& jobs) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 7}, {"amd", "rocm", 1, 4}});
  SchedulerOptions o = WithTenants({Team("a", 1, quota), Team("b", 10)});
  o.preemption_cost_s = 30;
  auto s = Scheduler::Create(c, nullptr, "las-het", o);
  EXPECT_TRUE(s.ok());
  SubmitJobs(**s, "a", 0, 1, 0);
  SubmitJobs(**s, "b", 1, 6, 0);
  EXPECT_EQ((*s)->Decide(0).placed.size(), 7u);
  int id = 7;
  for (const auto& [gang, arrival_s] : jobs) {
    model::Job j = MakeJob(id++, arrival_s, 1e6, {{"nv", 1.0}}, gang);
    j.tenant = "a";
    EXPECT_TRUE((*s)->Submit(j, 400).accepted);
  }
  return (*s)->Decide(400);  // past the preempt interval: a full decision
}

// a holds 1 of its 4; its gang of 4 (first in policy order) would take it beyond them, its
// gang of 2 behind fits in them. The 2 are owed, and the gang of 2 takes its turn inside the
// guarantee ahead of b's: before, the tenant's turn waited on its first job, beyond the
// guarantee and so behind b's runs, which kept the devices reclaimed for the gang of 2 (the
// four-team day's 630 s wait, docs/results.md).
TEST(TenantShares, AJobInsideTheGuaranteeIsNotKeptWaitingBehindOneBeyondIt) {
  const Decision d = OwnerArrivesBehindAHeavierBorrower(4, {{4, 300}, {2, 400}});
  EXPECT_EQ(d.preempted.size(), 2u);
  EXPECT_EQ(Placed(d, 7, 8), 0);
  EXPECT_EQ(Placed(d, 8, 9), 1);
}

// a holds 1 of its 5; its gang of 2 is queued before its gang of 4, which the policy orders
// first (it arrived earlier). Either fits the guarantee alone, not both: what is owed is
// counted in policy order, for the gang of 4 that takes the turn inside the guarantee.
// Counted in queue order, the 2 owed to the gang of 2 could not start the gang of 4, and the
// gang of 2, beyond the guarantee behind it, came after b's runs.
TEST(TenantShares, WhatIsOwedIsCountedInPolicyOrder) {
  const Decision d = OwnerArrivesBehindAHeavierBorrower(5, {{2, 400}, {4, 300}});
  EXPECT_EQ(d.preempted.size(), 4u);
  EXPECT_EQ(Placed(d, 8, 9), 1);
  EXPECT_EQ(Placed(d, 7, 8), 0);
}

// b is guaranteed the 4 "amd" devices and borrows all 8 "nv" devices with one gang of 8 while
// a, guaranteed 4 of them, is idle: b is 4 over its guarantee, and stopping its gang would take
// it 4 below. When a's gang of 4 arrives the owner's guarantee wins: the gang is stopped,
// inside its quantum, and a's starts. Keeping b at its guarantee instead, a waited for b's run
// to end.
TEST(TenantShares, AnOwnersGuaranteeWinsOverABorrowersIndivisibleGang) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 8}, {"amd", "cuda", 1, 4}});
  model::Tenant a = Team("a", 1, /*quota=*/4);
  model::Tenant b = Team("b", 1);
  b.per_type["amd"] = 4;
  SchedulerOptions o = WithTenants({a, b});
  o.preemption_cost_s = 30;  // a quantum of 40 costs: b's run may be stopped only to reclaim
  auto s = Scheduler::Create(c, nullptr, "las-het", o);
  ASSERT_TRUE(s.ok());
  model::Job wide = MakeJob(0, 0, 1e6, {{"nv", 1.0}, {"amd", 1.0}}, /*gang=*/8);
  wide.tenant = "b";
  ASSERT_TRUE((*s)->Submit(wide, 0).accepted);
  const Decision first = (*s)->Decide(0);
  ASSERT_EQ(first.placed.size(), 1u);
  ASSERT_EQ(first.placed[0].type, c.catalog.FindId("nv").value());
  model::Job owner = MakeJob(1, 400, 1e6, {{"nv", 1.0}}, /*gang=*/4);
  owner.tenant = "a";
  ASSERT_TRUE((*s)->Submit(owner, 400).accepted);
  const Decision d = (*s)->Decide(400);  // past the preempt interval: a full decision
  ASSERT_EQ(d.preempted.size(), 1u);
  EXPECT_EQ(d.preempted[0].value(), 0);
  EXPECT_EQ(Placed(d, 1, 2), 1);
}

TEST(TenantShares, KueueStyleCountsDevicesWhateverTheyAreWorth) {
  // a's jobs run 4x faster on the slow type than on the reference; b's alike on both. Measured,
  // one device of a's is worth four of b's; Kueue-style, a device is a device.
  const auto c = MakeCluster({{"fast", "cuda", 1, 2}, {"slow", "cuda", 1, 2}});
  for (const bool kueue : {true, false}) {
    auto s = Scheduler::Create(c, nullptr, "fifo",
                               Accounted({Team("a", 1), Team("b", 1)}, kueue,
                                         /*reference=*/"fast"));
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    for (int i = 0; i < 8; ++i) {
      const double on_slow = i < 4 ? 4.0 : 1.0;
      model::Job j = MakeJob(i, 0, 1e6, {{"fast", 1.0}, {"slow", on_slow}});
      j.tenant = i < 4 ? "a" : "b";
      ASSERT_TRUE((*s)->Submit(j, 0).accepted);
    }
    const Decision d = (*s)->Decide(0);
    EXPECT_EQ(Placed(d, 0, 4), kueue ? 2 : 1) << kueue;
    EXPECT_EQ(Placed(d, 4, 8), kueue ? 2 : 3) << kueue;
  }
}

TEST(TenantShares, KueueStyleRanksByDevicesBeyondTheQuota) {
  // a holds its 4 guaranteed devices. Kueue-style, the rest goes to whoever borrows fewer
  // devices (a tie to the first listed): a 1 beyond, b 1. Measured, a's guaranteed usage counts
  // too, so b catches up: a 4, b 2.
  for (const bool kueue : {true, false}) {
    auto s = Scheduler::Create(Six(), nullptr, "fifo",
                               Accounted({Team("a", 1, /*quota=*/4), Team("b", 1)}, kueue));
    ASSERT_TRUE(s.ok());
    SubmitJobs(**s, "a", 0, 12, 0);
    SubmitJobs(**s, "b", 12, 12, 0);
    const Decision d = (*s)->Decide(0);
    EXPECT_EQ(Placed(d, 0, 12), kueue ? 5 : 4) << kueue;
    EXPECT_EQ(Placed(d, 12, 24), kueue ? 1 : 2) << kueue;
  }
}

TEST(TenantShares, LpPoliciesRefuseTenants) {
  auto s = Scheduler::Create(Six(), nullptr, "maxmin-het", WithTenants({Team("a", 1)}));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("tenants: policy maxmin-het"), std::string::npos);
}

}  // namespace
}  // namespace hetsched::sched
