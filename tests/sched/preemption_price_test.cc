#include "sched/preemption_price.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>

#include "sched/scheduler.h"
#include "sched/test_cluster.h"

namespace hetsched::sched {
namespace {

using ::testing::HasSubstr;
using testing::MakeCluster;
using testing::MakeJob;

SchedulerOptions Costing(double cost_s, double quantum_s = -1) {
  SchedulerOptions o;
  o.preemption_cost_s = cost_s;
  o.preempt_quantum_s = quantum_s;
  return o;
}

// `default` whose preempted jobs keep their devices while they write their checkpoints, with a
// quantum of one cost (a running job may be stopped at once).
std::unique_ptr<Scheduler> Checkpointing(const model::Cluster& c) {
  SchedulerOptions o = Costing(90, 90);
  o.preempt_interval_s = 300;
  o.stop_holds_devices = true;
  auto s = Scheduler::Create(c, nullptr, "default", o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

TEST(PreemptionPrice, TheQuantumIsFortyCostsUnlessSetAndNeverBelowOneCost) {
  auto shipped = PreemptionPrice::FromOptions(Costing(90));
  ASSERT_TRUE(shipped.ok());
  EXPECT_DOUBLE_EQ(shipped->quantum_s(), 3600);
  auto free = PreemptionPrice::FromOptions(Costing(0));
  ASSERT_TRUE(free.ok());
  EXPECT_DOUBLE_EQ(free->quantum_s(), 0);  // Gavel's setup decides as before
  auto by_hand = PreemptionPrice::FromOptions(Costing(90, 90));
  ASSERT_TRUE(by_hand.ok());
  EXPECT_DOUBLE_EQ(by_hand->quantum_s(), 90);

  auto below = PreemptionPrice::FromOptions(Costing(90, 60));
  ASSERT_FALSE(below.ok());
  EXPECT_THAT(below.status().message(), HasSubstr("preempt quantum: 60 s is below"));
  for (double bad : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    auto r = PreemptionPrice::FromOptions(Costing(bad));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("preemption cost"));
  }
  EXPECT_FALSE(PreemptionPrice::FromOptions(Costing(90, std::nan(""))).ok());
  // The scheduler refuses what the price refuses.
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  EXPECT_FALSE(Scheduler::Create(c, nullptr, "las", Costing(-5)).ok());
}

TEST(PreemptionPrice, ThePlansHysteresisIsSetOrShippedAndOnlyWherePreemptionsCost) {
  auto shipped = PreemptionPrice::FromOptions(Costing(90));
  ASSERT_TRUE(shipped.ok());
  EXPECT_DOUBLE_EQ(shipped->plan_incumbency(), PreemptionPrice::kPlanIncumbency);
  SchedulerOptions set = Costing(90);
  set.plan_incumbency = 0.05;
  auto by_hand = PreemptionPrice::FromOptions(set);
  ASSERT_TRUE(by_hand.ok());
  EXPECT_DOUBLE_EQ(by_hand->plan_incumbency(), 0.05);
  set.preemption_cost_s = 0;  // free moves: the plan is followed exactly
  EXPECT_DOUBLE_EQ(PreemptionPrice::FromOptions(set)->plan_incumbency(), 0);
  set.plan_incumbency = std::numeric_limits<double>::infinity();
  auto bad = PreemptionPrice::FromOptions(set);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("plan incumbency"));
}

TEST(PreemptionPrice, AMovePaysWhenItSavesTwiceItsCost) {
  const PreemptionPrice p(90, 3600);
  // 1000 steps left at 1 step/s, or at 2: 500 s saved >= 180.
  EXPECT_TRUE(p.MovePays(1000, 1, 2));
  // 200 steps left: 100 s saved < 180.
  EXPECT_FALSE(p.MovePays(200, 1, 2));
  EXPECT_FALSE(p.MovePays(1e9, 2, 1));  // never to a slower type
  // Free moves: any faster type.
  EXPECT_TRUE(PreemptionPrice(0, 0).MovePays(1, 1, 1.01));
}

TEST(PreemptionPrice, TheMarginIsTheSmallestGainThatPays) {
  const PreemptionPrice p(90, 3600);
  // 1000 s left on the best type, at half its speed now: 2000 s at this speed.
  const double m = p.MoveMargin(1000, 0.5);
  // At 0.5 + m the job takes 2000 - 180 s.
  EXPECT_NEAR(1000 / (0.5 + m), 2000 - 180, 1e-6);
  EXPECT_TRUE(std::isinf(p.MoveMargin(50, 0.5)));  // 100 s left: nothing can save 180
  EXPECT_DOUBLE_EQ(PreemptionPrice(0, 0).MoveMargin(1000, 0.5), 0);
}

// Least attained service with a cost: an arrival that is ahead in the order (no service yet)
// takes the device only once the running job has had its quantum.
TEST(PreemptionPrice, TimeSlicingWaitsForTheQuantumOfTheRunningJob) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  for (std::string_view policy : {"las", "las-het", "srpt-het", "default", "maxmin-het"}) {
    SchedulerOptions o = Costing(90);
    o.preempt_interval_s = 0;
    auto made = Scheduler::Create(c, nullptr, policy, o);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    auto& s = *made;
    ASSERT_TRUE(s->Submit(MakeJob(0, 0, 100000, {{"nv", 1.0}}), 0).accepted);
    ASSERT_EQ(s->Decide(0).placed.size(), 1u) << policy;
    ASSERT_TRUE(s->Submit(MakeJob(1, 100, 100000, {{"nv", 1.0}}), 100).accepted);
    EXPECT_TRUE(s->Decide(100).preempted.empty()) << policy;
    EXPECT_TRUE(s->Decide(3599).preempted.empty()) << policy;
    const Decision d = s->Decide(3600);
    ASSERT_EQ(d.preempted.size(), 1u) << policy;
    EXPECT_EQ(d.preempted[0].value(), 0) << policy;
  }
}

// The same arrival without a cost preempts at once (Gavel's setup).
TEST(PreemptionPrice, WithoutACostTimeSlicingPreemptsAtOnce) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  SchedulerOptions o = Costing(0);
  o.preempt_interval_s = 0;
  auto made = Scheduler::Create(c, nullptr, "las", o);
  ASSERT_TRUE(made.ok());
  auto& s = *made;
  ASSERT_TRUE(s->Submit(MakeJob(0, 0, 100000, {{"nv", 1.0}}), 0).accepted);
  ASSERT_EQ(s->Decide(0).placed.size(), 1u);
  ASSERT_TRUE(s->Submit(MakeJob(1, 100, 100000, {{"nv", 1.0}}), 100).accepted);
  EXPECT_EQ(s->Decide(100).preempted.size(), 1u);
}

// fifo-het moves a running job up to a faster type that came free only when the move pays on
// its expected remaining time (here: its estimate).
TEST(PreemptionPrice, FifoHetMovesUpOnlyWhenTheMovePays) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}});
  for (const double estimate_s : {50.0, 100000.0}) {
    SchedulerOptions o = Costing(90);
    o.preempt_interval_s = 0;
    auto made = Scheduler::Create(c, nullptr, "fifo-het", o);
    ASSERT_TRUE(made.ok());
    auto& s = *made;
    model::Job holder = MakeJob(0, 0, 1e9, {{"fast", 1.0}, {"slow", 0.9}});
    model::Job mover = MakeJob(1, 1, 1e9, {{"fast", 4.0}, {"slow", 1.0}});
    mover.estimate_s = estimate_s;  // seconds on its best type
    ASSERT_TRUE(s->Submit(holder, 0).accepted);
    ASSERT_EQ(s->Decide(0).placed.size(), 1u);
    ASSERT_TRUE(s->Submit(mover, 1).accepted);
    Decision d = s->Decide(1);
    ASSERT_EQ(d.placed.size(), 1u);
    ASSERT_EQ(c.catalog.Get(d.placed[0].type).name, "slow");
    s->SetProgress(model::JobId(1), 1.0, 1);
    s->Finish(model::JobId(0), 10);  // the fast device comes free
    d = s->Decide(10);
    const bool moved = !d.preempted.empty();
    // Left: 191 of 200 steps (50 s at 4/s), or 399,991: moving from 1 to 4 steps/s saves
    // 143 s or ~300,000 s against a cost of 90 s, paid back twice over only in the second.
    EXPECT_EQ(moved, estimate_s > 1000) << estimate_s;
  }
}

// With checkpoint writes (stop_holds_devices) the job a reallocation chose starts on the devices
// it displaced a job from as soon as that job's checkpoint is written.
TEST(PreemptionPrice, TheChosenJobStartsWhenTheCheckpointIsWritten) {
  const auto c = MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}});
  auto s = Checkpointing(c);
  ASSERT_TRUE(s->Submit(MakeJob(0, 0, 1e7, {{"fast", 4.0}, {"slow", 1.0}}), 0).accepted);
  ASSERT_TRUE(s->Submit(MakeJob(1, 0, 1e7, {{"fast", 4.0}, {"slow", 1.0}}), 0).accepted);
  ASSERT_EQ(s->Decide(0).placed.size(), 2u);
  s->SetProgress(model::JobId(0), 4.0, 0);
  s->SetProgress(model::JobId(1), 4.0, 0);
  ASSERT_TRUE(s->Submit(MakeJob(2, 5000, 1e7, {{"fast", 4.0}, {"slow", 1.0}}), 5000).accepted);
  Decision d = s->Decide(5000);
  ASSERT_FALSE(d.preempted.empty());
  const model::JobId stopped = d.preempted[0];
  EXPECT_EQ(s->record(stopped).phase, JobPhase::kStopping);
  for (const Placement& p : d.placed) EXPECT_NE(p.job.value(), 2) << "no device is free yet";
  s->Stopped(stopped, 5030);
  d = s->Decide(5030);
  bool started = false;
  for (const Placement& p : d.placed) started = started || p.job.value() == 2;
  EXPECT_TRUE(started);
}

// Two running jobs swap types (the one that gains most from the fast device gets it); both
// write their checkpoints first. A job that arrives meanwhile, ahead of both in the policy
// order, must not take the fast device when it is released: the swap's devices are reserved.
TEST(PreemptionPrice, ASwapKeepsItsDevicesWhileTheCheckpointsAreWritten) {
  // "other" runs none of these jobs; a free device keeps the scheduler re-deciding running
  // jobs with nobody queued (Scheduler::HasWork).
  const auto c =
      MakeCluster({{"fast", "cuda", 1, 1}, {"slow", "cuda", 1, 1}, {"other", "cuda", 1, 1}});
  auto s = Checkpointing(c);
  const model::JobId a(0), b(1), newcomer(2);
  ASSERT_TRUE(s->Submit(MakeJob(0, 0, 1e7, {{"fast", 1.1}, {"slow", 1.0}}), 0).accepted);
  Decision d = s->Decide(0);
  ASSERT_EQ(d.placed.size(), 1u);
  ASSERT_EQ(c.catalog.Get(d.placed[0].type).name, "fast");
  s->SetProgress(a, 1.1, 0);
  ASSERT_TRUE(s->Submit(MakeJob(1, 10, 1e7, {{"fast", 4.0}, {"slow", 1.0}}), 10).accepted);
  d = s->Decide(10);
  ASSERT_EQ(d.placed.size(), 1u);
  ASSERT_EQ(c.catalog.Get(d.placed[0].type).name, "slow");
  s->SetProgress(b, 1.0, 10);
  d = s->Decide(3000);  // full: the swap
  ASSERT_EQ(d.preempted.size(), 2u);
  ASSERT_TRUE(d.placed.empty());
  ASSERT_TRUE(s->Submit(MakeJob(2, 3010, 1e7, {{"fast", 4.0}, {"slow", 1.0}}), 3010).accepted);
  EXPECT_TRUE(s->Decide(3010).placed.empty());  // nothing is free yet
  s->Stopped(a, 3030);
  s->Stopped(b, 3030);
  d = s->Decide(3030);
  std::map<int32_t, std::string> where;
  for (const Placement& p : d.placed) where[p.job.value()] = c.catalog.Get(p.type).name;
  EXPECT_EQ(where[b.value()], "fast");
  EXPECT_EQ(where[a.value()], "slow");
  EXPECT_EQ(where.count(newcomer.value()), 0u);
}

}  // namespace
}  // namespace hetsched::sched
