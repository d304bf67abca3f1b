#include "sched/preemptive_strategy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "model/tenant.h"
#include "sched/core_harness.h"
#include "sched/test_cluster.h"

namespace hetsched::sched {
namespace {

using testing::CoreHarness;
using testing::MakeCluster;
using testing::MakeJob;
using testing::NvJob;
using testing::PreemptedIds;

// Every decision reconsiders the running jobs.
SchedulerOptions EveryDecision() {
  SchedulerOptions o;
  o.preempt_interval_s = 0;
  return o;
}

// Full decisions at most every 10 s; a preempted job holds its devices while it writes its
// checkpoint (until the harness's Stopped).
SchedulerOptions CheckpointsHoldDevices() {
  SchedulerOptions o;
  o.preempt_interval_s = 10;
  o.stop_holds_devices = true;
  return o;
}

model::Job Prioritized(int id, double arrival_s, int priority, int gang = 1,
                       bool preemptible = true) {
  model::Job j = NvJob(id, arrival_s, gang);
  j.priority = priority;
  j.preemptible = preemptible;
  return j;
}

TEST(PreemptiveStrategy, PriorityPreemptsOnlyLowerPreemptibleJobs) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 2}});
  CoreHarness h(c, "priority", EveryDecision());
  PreemptiveStrategy s(h.core());
  h.Admit(Prioritized(0, 0, 0), 0);
  h.Admit(Prioritized(1, 0, 0, 1, /*preemptible=*/false), 0);
  ASSERT_EQ(h.Decide(s, 0).placed.size(), 2u);
  h.Admit(Prioritized(2, 5, 5), 5);
  const Decision d = h.Decide(s, 5);
  EXPECT_EQ(PreemptedIds(d), (std::vector<int>{0}));
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job.value(), 2);
  EXPECT_EQ(h.record(1).phase, JobPhase::kRunning);
  // An equal priority displaces nobody.
  h.Admit(Prioritized(3, 6, 5), 6);
  EXPECT_TRUE(h.Decide(s, 6).preempted.empty());
}

TEST(PreemptiveStrategy, GangPreemptsNothingWhenItCannotGetAWholeGang) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 2}});
  CoreHarness h(c, "priority", EveryDecision());
  PreemptiveStrategy s(h.core());
  h.Admit(Prioritized(0, 0, 0), 0);
  h.Admit(Prioritized(1, 0, 0, 1, /*preemptible=*/false), 0);
  h.Decide(s, 0);
  // Gang of 2: one device could be freed, the other cannot: nobody is stopped for nothing.
  h.Admit(Prioritized(2, 5, 5, 2), 5);
  const Decision d = h.Decide(s, 5);
  EXPECT_TRUE(d.preempted.empty());
  EXPECT_TRUE(d.placed.empty());
}

TEST(PreemptiveStrategy, GangTakesTheDevicesOfEveryJobItDisplaces) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 2}});
  CoreHarness h(c, "priority", EveryDecision());
  PreemptiveStrategy s(h.core());
  h.Admit(Prioritized(0, 0, 0), 0);
  h.Admit(Prioritized(1, 0, 1), 0);
  h.Decide(s, 0);
  h.Admit(Prioritized(2, 5, 5, 2), 5);
  const Decision d = h.Decide(s, 5);
  EXPECT_EQ(d.preempted.size(), 2u);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].devices.size(), 2u);
}

TEST(PreemptiveStrategy, TimeSlicingWaitsOutTheQuantum) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  SchedulerOptions o = EveryDecision();
  o.preemption_cost_s = 10;
  o.preempt_quantum_s = 100;
  CoreHarness h(c, "las", o);
  PreemptiveStrategy s(h.core());
  h.Admit(MakeJob(0, 0, 0, {{"nv", 1.0}}), 0);
  ASSERT_EQ(h.Decide(s, 0).placed.size(), 1u);
  // Job 1 has attained less service, but job 0 is inside its quantum.
  h.Admit(MakeJob(1, 50, 0, {{"nv", 1.0}}), 50);
  Decision d = h.Decide(s, 50);
  EXPECT_TRUE(d.preempted.empty());
  EXPECT_TRUE(d.placed.empty());
  d = h.Decide(s, 99.9);
  EXPECT_TRUE(d.preempted.empty());
  // The quantum is over: the job with less service takes the device.
  d = h.Decide(s, 100);
  EXPECT_EQ(PreemptedIds(d), (std::vector<int>{0}));
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job.value(), 1);
}

// fifo-het: job 0 (fast only) takes "fast", job 1 (2 steps/s there, 1 on "slow") gets "slow";
// job 0 ends at t = 10 and job 1 may move up. It has run 9 s at 1 step/s.
Decision MoveAfterFastFrees(double estimate_s, const model::Cluster& c) {
  CoreHarness h(c, "fifo-het", EveryDecision());  // preemption costs the default 90 s
  PreemptiveStrategy s(h.core());
  h.Admit(MakeJob(0, 0, 0, {{"fast", 1.0}}), 0);
  h.Decide(s, 0);
  model::Job mover = MakeJob(1, 1, 0, {{"slow", 1.0}, {"fast", 2.0}});
  mover.estimate_s = estimate_s;
  h.Admit(mover, 1);
  EXPECT_EQ(h.PlacedTypes(h.Decide(s, 1), 2)[1], "slow");
  h.Finish(s, 0, 10);
  return h.Decide(s, 10);  // nobody queued: an upgrade
}

TEST(PreemptiveStrategy, RunningJobMovesToAFasterTypeOnlyWhenTheMovePays) {
  const auto c = MakeCluster({{"slow", "cuda", 1, 1}, {"fast", "cuda", 1, 1}});
  // Expected on its best type: 100 s, 4.5 s done: 191 steps left, 191 s where it is, 95.5 s
  // on fast. Saving 95.5 s does not repay two preemption costs (180 s).
  Decision d = MoveAfterFastFrees(100, c);
  EXPECT_TRUE(d.preempted.empty());
  EXPECT_TRUE(d.placed.empty());
  // 1000 s expected: 1991 steps left, the move saves 995.5 s.
  d = MoveAfterFastFrees(1000, c);
  EXPECT_EQ(PreemptedIds(d), (std::vector<int>{1}));
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(c.catalog.Get(d.placed[0].type).name, "fast");
  EXPECT_TRUE(d.placed[0].migrated);
  EXPECT_TRUE(d.placed[0].resumed);
}

// SchedulerOptions::gavel_rebuilds: as Gavel's simulator runs fifo_perf, free preemption.
SchedulerOptions GavelRebuilds(double interval_s) {
  SchedulerOptions o;
  o.preempt_interval_s = interval_s;
  o.preemption_cost_s = 0;
  o.gavel_rebuilds = true;
  return o;
}

TEST(PreemptiveStrategy, GavelRebuildsLeaveFreedDevicesIdleUntilTheNextRebuild) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 2}});
  for (const bool gavel : {false, true}) {
    SchedulerOptions o = GavelRebuilds(100);
    o.gavel_rebuilds = gavel;
    CoreHarness h(c, "fifo-het", o);
    PreemptiveStrategy s(h.core());
    h.Admit(NvJob(0, 0), 0);
    h.Admit(NvJob(1, 0), 0);
    ASSERT_EQ(h.Decide(s, 0).placed.size(), 2u);
    h.Admit(NvJob(2, 10), 10);
    h.Finish(s, 0, 20);
    // hetsched fills the freed device at once; Gavel waits for the interval to pass.
    EXPECT_EQ(h.Decide(s, 20).placed.size(), gavel ? 0u : 1u);
    if (!gavel) continue;
    const Decision d = h.Decide(s, 100);
    ASSERT_EQ(d.placed.size(), 1u);
    EXPECT_EQ(d.placed[0].job.value(), 2);
    // With nothing running, an arrival starts at once, the interval notwithstanding.
    h.Finish(s, 1, 110);
    h.Finish(s, 2, 120);
    h.Admit(NvJob(3, 130), 130);
    EXPECT_EQ(h.Decide(s, 130).placed.size(), 1u);
  }
}

// fast x2, slow x2: job 0 takes a fast device, job 1 (a gang of 2) the slow pair, job 2 the
// other fast device. When job 0 ends, the rebuild walks in arrival order: job 1 takes both fast
// devices and pushes job 2 down to slow; hetsched's own rule leaves both where they are.
TEST(PreemptiveStrategy, GavelRebuildsLetAnEarlierJobPushALaterOneDown) {
  const auto c = MakeCluster({{"slow", "cuda", 1, 2}, {"fast", "cuda", 1, 2}});
  for (const bool gavel : {false, true}) {
    SchedulerOptions o = GavelRebuilds(0);
    o.gavel_rebuilds = gavel;
    CoreHarness h(c, "fifo-het", o);
    PreemptiveStrategy s(h.core());
    h.Admit(MakeJob(0, 0, 0, {{"slow", 1.0}, {"fast", 2.0}}), 0);
    h.Admit(MakeJob(1, 0, 0, {{"slow", 1.0}, {"fast", 2.0}}, 2), 0);
    h.Admit(MakeJob(2, 0, 0, {{"slow", 1.0}, {"fast", 2.0}}), 0);
    EXPECT_EQ(h.PlacedTypes(h.Decide(s, 0), 3), (std::vector<std::string>{"fast", "slow", "fast"}));
    h.Finish(s, 0, 10);
    const Decision d = h.Decide(s, 10);
    if (!gavel) {
      EXPECT_TRUE(d.preempted.empty());
      continue;
    }
    std::vector<int> preempted = PreemptedIds(d);
    std::sort(preempted.begin(), preempted.end());
    EXPECT_EQ(preempted, (std::vector<int>{1, 2}));
    EXPECT_EQ(h.PlacedTypes(d, 3), (std::vector<std::string>{"", "fast", "slow"}));
  }
}

TEST(PreemptiveStrategy, MaxThroughputGivesTheFastTypeToWhoGainsMost) {
  const auto c = MakeCluster({{"slow", "cuda", 1, 1}, {"fast", "cuda", 1, 1}});
  // Job 0 runs 2x faster on fast, job 1 10x: job 1 loses more on slow.
  const model::Job a = MakeJob(0, 0, 0, {{"slow", 1.0}, {"fast", 2.0}});
  const model::Job b = MakeJob(1, 1, 0, {{"slow", 1.0}, {"fast", 10.0}});
  CoreHarness regret(c, "las-het", EveryDecision());
  PreemptiveStrategy r(regret.core());
  regret.Admit(a, 1);
  regret.Admit(b, 1);
  EXPECT_EQ(regret.PlacedTypes(regret.Decide(r, 1), 2), (std::vector<std::string>{"slow", "fast"}));
  // Greedy fastest (srpt-het): the first in order (equal ranks, earlier arrival) takes fast.
  CoreHarness greedy(c, "srpt-het", EveryDecision());
  PreemptiveStrategy g(greedy.core());
  greedy.Admit(a, 1);
  greedy.Admit(b, 1);
  EXPECT_EQ(greedy.PlacedTypes(greedy.Decide(g, 1), 2), (std::vector<std::string>{"fast", "slow"}));
}

// srpt-het-fair (default) takes types from the max-throughput plan: under load, the slow type
// goes to the job that loses least there, even when jobs ahead of it in the order are queued;
// those wait for the fast type instead of crawling on the slow one.
TEST(PreemptiveStrategy, PlannedTypesGiveTheSlowTypeToWhoLosesLeastThere) {
  const auto c = MakeCluster({{"slow", "cuda", 1, 1}, {"fast", "cuda", 1, 1}});
  // Jobs 0 and 1 run at a tenth of their speed on slow; job 2, last in order, at 80 %.
  const model::Job a = MakeJob(0, 0, 0, {{"slow", 1.0}, {"fast", 10.0}});
  const model::Job b = MakeJob(1, 1, 0, {{"slow", 1.0}, {"fast", 10.0}});
  const model::Job k = MakeJob(2, 2, 0, {{"slow", 8.0}, {"fast", 10.0}});
  CoreHarness planned(c, "srpt-het-fair", EveryDecision());
  PreemptiveStrategy p(planned.core());
  for (const model::Job& j : {a, b, k}) planned.Admit(j, 2);
  const Decision d = planned.Decide(p, 2);
  ASSERT_EQ(d.placed.size(), 2u);
  EXPECT_EQ(d.placed[0].job.value(), 0);
  EXPECT_EQ(c.catalog.Get(d.placed[0].type).name, "fast");
  EXPECT_EQ(d.placed[1].job.value(), 2);
  EXPECT_EQ(c.catalog.Get(d.placed[1].type).name, "slow");
  EXPECT_EQ(planned.record(1).phase, JobPhase::kQueued);
  // The regret greedy of las-het picks among the first two in order only.
  CoreHarness regret(c, "las-het", EveryDecision());
  PreemptiveStrategy r(regret.core());
  for (const model::Job& j : {a, b, k}) regret.Admit(j, 2);
  const Decision g = regret.Decide(r, 2);
  ASSERT_EQ(g.placed.size(), 2u);
  EXPECT_EQ(regret.record(2).phase, JobPhase::kQueued);
}

// The plan moves running jobs only past their quantum, and only jobs expected to run long
// enough to repay the move.
TEST(PreemptiveStrategy, PlannedMovesWaitForTheQuantum) {
  const auto c = MakeCluster({{"slow", "cuda", 1, 1}, {"fast", "cuda", 1, 1}});
  SchedulerOptions o = EveryDecision();
  o.preemption_cost_s = 10;
  o.preempt_quantum_s = 100;
  CoreHarness h(c, "srpt-het-fair", o);
  PreemptiveStrategy s(h.core());
  // Job 0 alone takes fast. Job 1 loses 10x on slow where job 0 loses only 20 %: it starts on
  // the free slow device, and the plan swaps them once both quanta are over.
  model::Job a = MakeJob(0, 0, 1e6, {{"slow", 8.0}, {"fast", 10.0}});
  model::Job b = MakeJob(1, 10, 1e6, {{"slow", 1.0}, {"fast", 10.0}});
  a.estimate_s = b.estimate_s = 1e5;
  h.Admit(a, 0);
  ASSERT_EQ(h.PlacedTypes(h.Decide(s, 0), 1), (std::vector<std::string>{"fast"}));
  h.Admit(b, 10);
  Decision d = h.Decide(s, 10);
  EXPECT_TRUE(d.preempted.empty());
  EXPECT_EQ(h.PlacedTypes(d, 2), (std::vector<std::string>{"", "slow"}));
  EXPECT_TRUE(h.Decide(s, 105).preempted.empty());  // job 1 is inside its quantum
  d = h.Decide(s, 150);
  EXPECT_EQ(PreemptedIds(d), (std::vector<int>{0, 1}));
  // Without an estimate job 1 is believed to need only as long again as it ran (14 s on fast):
  // less than two moves cost, so it stays where it is, and job 0 keeps fast.
  CoreHarness unknown(c, "srpt-het-fair", o);
  PreemptiveStrategy u(unknown.core());
  unknown.Admit(MakeJob(0, 0, 1e6, {{"slow", 8.0}, {"fast", 10.0}}), 0);
  unknown.Decide(u, 0);
  unknown.Admit(MakeJob(1, 10, 1e6, {{"slow", 1.0}, {"fast", 10.0}}), 10);
  unknown.Decide(u, 10);
  EXPECT_TRUE(unknown.Decide(u, 150).preempted.empty());
}

// With preemption costs the plan moves a running job only for a clear gain: swapping two jobs
// that lose 10 % and 15 % on the slow type gains 2.5 % of a device, less than the hysteresis
// (PreemptionPrice::kPlanIncumbency); without costs, or without the hysteresis, the plan swaps
// them.
TEST(PreemptiveStrategy, PlannedMovesNeedAClearGainWhenMovesCost) {
  const auto c = MakeCluster({{"slow", "cuda", 1, 1}, {"fast", "cuda", 1, 1}});
  const auto swaps_at = [&](double cost_s, double incumbency = -1) {
    SchedulerOptions o = EveryDecision();
    o.preemption_cost_s = cost_s;
    o.preempt_quantum_s = 100;
    o.plan_incumbency = incumbency;
    CoreHarness h(c, "srpt-het-fair", o);
    PreemptiveStrategy s(h.core());
    model::Job a = MakeJob(0, 0, 1e6, {{"slow", 9.0}, {"fast", 10.0}});
    model::Job b = MakeJob(1, 10, 1e6, {{"slow", 8.5}, {"fast", 10.0}});
    a.estimate_s = b.estimate_s = 1e5;
    h.Admit(a, 0);
    EXPECT_EQ(h.PlacedTypes(h.Decide(s, 0), 1), (std::vector<std::string>{"fast"}));
    h.Admit(b, 10);
    EXPECT_EQ(h.PlacedTypes(h.Decide(s, 10), 2), (std::vector<std::string>{"", "slow"}));
    return PreemptedIds(h.Decide(s, 150));
  };
  EXPECT_TRUE(swaps_at(10).empty());
  EXPECT_EQ(swaps_at(0), (std::vector<int>{0, 1}));
  // --plan-incumbency 0: no hysteresis, the plan swaps them though moves cost.
  EXPECT_EQ(swaps_at(10, 0), (std::vector<int>{0, 1}));
}

// Tenants: a job the plan put on the slow type while fast was held (it loses 10x there) moves
// to fast as soon as fast comes free, inside its quantum: the quantum keeps a job its place,
// not a misfit type, and the move pays for the job itself. One whose expected remaining time
// (no estimate: as long again as it ran) does not repay the stop keeps its type.
TEST(PreemptiveStrategy, TenantsPlanMovesAKeptJobUpWhenTheMovePaysForIt) {
  const auto c = MakeCluster({{"slow", "cuda", 1, 1}, {"fast", "cuda", 1, 1}});
  const auto decisions_after_fast_frees = [&](bool estimated) {
    SchedulerOptions o = EveryDecision();
    o.preemption_cost_s = 10;
    o.preempt_quantum_s = 100;
    auto tenants = std::make_shared<model::Tenants>();
    for (const char* name : {"a", "b"}) {
      model::Tenant t;
      t.name = name;
      t.weight = 1;
      tenants->list.push_back(t);
    }
    tenants->fair_share.reference_type = "fast";
    o.tenants = std::move(tenants);
    CoreHarness h(c, "srpt-het-fair", o);
    PreemptiveStrategy s(h.core());
    model::Job holder = MakeJob(2, 0, 1e6, {{"slow", 1.0}, {"fast", 10.0}});
    holder.tenant = "b";
    holder.estimate_s = 20;
    h.Admit(holder, 0);
    EXPECT_EQ(h.PlacedTypes(h.Decide(s, 0), 3), (std::vector<std::string>{"", "", "fast"}));
    model::Job misfit = MakeJob(0, 1, 1e6, {{"slow", 1.0}, {"fast", 10.0}});
    misfit.tenant = "a";
    if (estimated) misfit.estimate_s = 1e5;
    h.Admit(misfit, 1);
    EXPECT_EQ(h.PlacedTypes(h.Decide(s, 1), 3), (std::vector<std::string>{"slow", "", ""}));
    h.Finish(s, 2, 20);
    return h.Decide(s, 21);
  };
  const Decision moved = decisions_after_fast_frees(true);
  EXPECT_EQ(PreemptedIds(moved), (std::vector<int>{0}));
  ASSERT_EQ(moved.placed.size(), 1u);
  EXPECT_EQ(moved.placed[0].job.value(), 0);
  EXPECT_TRUE(moved.placed[0].migrated);
  // 20 s run, 20 s expected: the move saves 18 s, less than the two stops (20 s) it must repay.
  EXPECT_TRUE(decisions_after_fast_frees(false).preempted.empty());
}

// The plan says where jobs run, not who stops: a running job ahead in the order keeps its
// devices even when the plan would rather give them to another class.
TEST(PreemptiveStrategy, PlannedTypesStopNobodyTheOrderKeeps) {
  const auto c = MakeCluster({{"slow", "cuda", 1, 1}, {"fast", "cuda", 1, 1}});
  SchedulerOptions o = EveryDecision();
  o.preemption_cost_s = 10;
  o.preempt_quantum_s = 100;
  CoreHarness h(c, "srpt-het-fair", o);
  PreemptiveStrategy s(h.core());
  model::Job pinned = MakeJob(2, 0, 1e6, {{"slow", 1.0}});
  pinned.preemptible = false;
  h.Admit(pinned, 0);
  h.Decide(s, 0);  // holds slow
  // Job 0 runs at half its best speed on fast, nearly done; job 1, long, at its best there:
  // the plan gives fast to job 1's class, the order (remaining time) to job 0.
  model::Job a = MakeJob(0, 0, 1e6, {{"slow", 10.0}, {"fast", 5.0}});
  a.estimate_s = 300;
  model::Job b = MakeJob(1, 10, 1e6, {{"fast", 10.0}});
  b.estimate_s = 1e5;
  h.Admit(a, 0);
  EXPECT_EQ(h.PlacedTypes(h.Decide(s, 0), 3), (std::vector<std::string>{"fast", "", ""}));
  h.Admit(b, 10);
  EXPECT_TRUE(h.Decide(s, 10).placed.empty());
  const Decision d = h.Decide(s, 150);
  EXPECT_TRUE(d.preempted.empty());
  EXPECT_EQ(h.record(0).phase, JobPhase::kRunning);
}

// With one device type there is no type to plan: the order alone decides, whatever class of
// equal worth the LP would have picked.
TEST(PreemptiveStrategy, OneTypeIsFilledInTheOrderAlone) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 2}});
  CoreHarness h(c, "srpt-het-fair", EveryDecision());
  PreemptiveStrategy s(h.core());
  // Jobs 0 and 1 (one class) arrive first; jobs 2-4 (another) after them.
  for (int id = 0; id < 5; ++id) {
    h.Admit(MakeJob(id, id, 0, {{"nv", id < 2 ? 1.0 : 3.0}}), 4);
  }
  EXPECT_EQ(h.PlacedTypes(h.Decide(s, 4), 5), (std::vector<std::string>{"nv", "nv", "", "", ""}));
}

// One type on offer still has a plan: the cluster's other type, held by a job this decision
// keeps, is planned too. Job 2 (first in the order) runs twice as fast on "slow" as on the
// free "fast", job 3 ten times slower on "slow": every optimal plan gives "fast" to job 3
// (job 2 is worth no more than the kept job 1 on "slow"), and job 2 waits for "slow". Taken in
// the order alone, job 2 would take "fast".
TEST(PreemptiveStrategy, OneTypeOnOfferGoesToTheClassThatLosesMostElsewhere) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}});
  CoreHarness h(c, "srpt-het-fair", EveryDecision());
  PreemptiveStrategy s(h.core());
  h.Admit(MakeJob(0, 0, 100, {{"fast", 1.0}}), 0);
  model::Job kept = MakeJob(1, 0, 1e4, {{"slow", 1.0}});
  kept.preemptible = false;
  h.Admit(kept, 0);
  ASSERT_EQ(h.PlacedTypes(h.Decide(s, 0), 2), (std::vector<std::string>{"fast", "slow"}));
  h.Finish(s, 0, 10);
  h.Admit(MakeJob(2, 5, 100, {{"fast", 0.5}, {"slow", 1.0}}), 10);
  h.Admit(MakeJob(3, 10, 100, {{"fast", 1.0}, {"slow", 0.1}}), 10);
  EXPECT_EQ(h.PlacedTypes(h.Decide(s, 10), 4), (std::vector<std::string>{"", "", "", "fast"}));
}

// Between full decisions a freed device goes first to a queued job whose class the last plan
// gave that type. The plan at t = 3 gives "fast" to the class that loses 10x on "slow" (jobs 0
// and 1) and "slow" to the class that runs best there (jobs 2 and 3). When job 2 ends, job 1,
// next in the order, would crawl on "slow" for its quantum (an hour with the default
// preemption costs): job 3 takes it instead, and job 1 waits for "fast". With no queued job
// planned on "slow", job 1 takes it: the fill leaves no device idle that a job can use.
TEST(PreemptiveStrategy, FillsFollowTheLastPlan) {
  const auto c = MakeCluster({{"slow", "cuda", 1, 1}, {"fast", "cuda", 1, 1}});
  for (const bool planned_job_waits : {true, false}) {
    SCOPED_TRACE(planned_job_waits);
    SchedulerOptions o;
    o.preempt_interval_s = 100;
    CoreHarness h(c, "srpt-het-fair", o);
    PreemptiveStrategy s(h.core());
    const int jobs = planned_job_waits ? 4 : 3;
    for (int id = 0; id < jobs; ++id) {
      h.Admit(MakeJob(id, id, 0, {{"slow", id < 2 ? 1.0 : 10.0}, {"fast", id < 2 ? 10.0 : 8.0}}),
              3);
    }
    std::vector<std::string> placed(jobs);
    placed[0] = "fast";
    placed[2] = "slow";
    EXPECT_EQ(h.PlacedTypes(h.Decide(s, 3), jobs), placed);
    h.Finish(s, 2, 10);
    placed.assign(jobs, "");
    placed[planned_job_waits ? 3 : 1] = "slow";
    EXPECT_EQ(h.PlacedTypes(h.Decide(s, 10), jobs), placed);  // a fill: the next full is at 103
  }
}

TEST(PreemptiveStrategy, NeverPreemptsForAJobThatCannotRunThere) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}, {"amd", "rocm", 1, 1}});
  CoreHarness h(c, "priority", EveryDecision());
  PreemptiveStrategy s(h.core());
  h.Admit(MakeJob(0, 0, 0, {{"nv", 1.0}}), 0);
  model::Job rocm_top = MakeJob(1, 0, 0, {{"amd", 1.0}}, 1, "rocm");
  rocm_top.priority = 9;
  h.Admit(rocm_top, 0);
  EXPECT_EQ(h.PlacedTypes(h.Decide(s, 0), 2), (std::vector<std::string>{"nv", "amd"}));
  // A ROCm job that outranks job 0 and lists a speed on nv: nv is not its stack.
  model::Job rocm = MakeJob(2, 5, 0, {{"nv", 5.0}, {"amd", 1.0}}, 1, "rocm");
  rocm.priority = 5;
  h.Admit(rocm, 5);
  const Decision d = h.Decide(s, 5);
  EXPECT_TRUE(d.preempted.empty());
  EXPECT_TRUE(d.placed.empty());
}

TEST(PreemptiveStrategy, ReservedJobStartsFirstOnDevicesFreedByACheckpoint) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  CoreHarness h(c, "priority", CheckpointsHoldDevices());
  PreemptiveStrategy s(h.core());
  h.Admit(Prioritized(0, 0, 0), 0);
  h.Decide(s, 0);
  h.Admit(Prioritized(1, 10, 5), 10);
  Decision d = h.Decide(s, 10);  // a full decision: job 0 stops, writing its checkpoint
  EXPECT_EQ(PreemptedIds(d), (std::vector<int>{0}));
  EXPECT_TRUE(d.placed.empty());
  EXPECT_EQ(h.record(0).phase, JobPhase::kStopping);
  // A job that outranks job 1 arrives before the device is released.
  h.Admit(Prioritized(2, 12, 9), 12);
  EXPECT_TRUE(h.Decide(s, 12).placed.empty());
  h.Stopped(0, 15);
  d = h.Decide(s, 15);  // between full decisions: reservations, then the fill
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job.value(), 1);
  EXPECT_EQ(h.record(2).phase, JobPhase::kQueued);
}

// A gang of 4 that needs the 2 free devices and the 2 that job 0, preempted for it, writes its
// checkpoint on: the free ones are held for it, so neither the fill right after the full
// decision nor the ones before the checkpoint is written give them to the jobs behind it.
TEST(PreemptiveStrategy, ReservedGangKeepsTheFreeDevicesItWasCounted) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 4}});
  CoreHarness h(c, "priority", CheckpointsHoldDevices());
  PreemptiveStrategy s(h.core());
  h.Admit(Prioritized(0, 0, 0, /*gang=*/2), 0);
  ASSERT_EQ(h.Decide(s, 0).placed.size(), 1u);
  h.Admit(Prioritized(1, 10, 5, /*gang=*/4), 10);
  h.Admit(Prioritized(2, 10, 1), 10);
  Decision d = h.Decide(s, 10);  // full: job 0 stops for job 1
  EXPECT_EQ(PreemptedIds(d), (std::vector<int>{0}));
  EXPECT_TRUE(d.placed.empty());
  EXPECT_EQ(h.core().state().FreeOfType(model::DeviceTypeId(0)), 0);
  h.Admit(Prioritized(3, 12, 1), 12);
  EXPECT_TRUE(h.Decide(s, 12).placed.empty());  // between full decisions: only the fill
  h.Stopped(0, 15);
  d = h.Decide(s, 15);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job.value(), 1);
  EXPECT_EQ(d.placed[0].devices.size(), 4u);
  EXPECT_EQ(h.record(2).phase, JobPhase::kQueued);
  EXPECT_EQ(h.record(3).phase, JobPhase::kQueued);
}

// The fills do not settle a reserved gang on a slower type with room: it waits for the fast
// pair, one free and one being checkpointed.
TEST(PreemptiveStrategy, ReservedGangIsNotStartedElsewhereByTheFill) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 2}, {"slow", "cuda", 1, 4}});
  CoreHarness h(c, "priority", CheckpointsHoldDevices());
  PreemptiveStrategy s(h.core());
  h.Admit(MakeJob(0, 0, 0, {{"fast", 1.0}}), 0);
  ASSERT_EQ(h.Decide(s, 0).placed.size(), 1u);
  model::Job gang = MakeJob(1, 10, 0, {{"fast", 4.0}, {"slow", 1.0}}, /*gang=*/2);
  gang.priority = 5;
  h.Admit(gang, 10);
  Decision d = h.Decide(s, 10);
  EXPECT_EQ(PreemptedIds(d), (std::vector<int>{0}));
  EXPECT_TRUE(d.placed.empty());
  EXPECT_EQ(h.record(1).phase, JobPhase::kQueued);
  EXPECT_TRUE(h.Decide(s, 12).placed.empty());
  h.Stopped(0, 15);
  d = h.Decide(s, 15);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job.value(), 1);
  EXPECT_EQ(d.placed[0].type, model::DeviceTypeId(0));
}

}  // namespace
}  // namespace hetsched::sched
