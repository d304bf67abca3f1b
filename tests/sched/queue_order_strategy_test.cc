#include "sched/queue_order_strategy.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "sched/core_harness.h"
#include "sched/test_cluster.h"

namespace hetsched::sched {
namespace {

using testing::CoreHarness;
using testing::MakeCluster;
using testing::MakeJob;
using testing::NvJob;

TEST(QueueOrderStrategy, FifoBlocksBehindAHeadThatDoesNotFit) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 4}});
  CoreHarness h(c, "fifo");
  QueueOrderStrategy s(h.core());
  h.Admit(NvJob(0, 0, 2), 0);
  ASSERT_EQ(h.Decide(s, 0).placed.size(), 1u);
  h.Admit(NvJob(1, 1, 4), 1);  // needs all four: two are busy
  h.Admit(NvJob(2, 2, 1), 2);  // would fit, but comes later
  const Decision d = h.Decide(s, 2);
  EXPECT_TRUE(d.placed.empty());
  EXPECT_EQ(h.core().queue().size(), 2u);
}

TEST(QueueOrderStrategy, FillSkipsJobsThatDoNotFit) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 4}});
  CoreHarness h(c, "fifo");
  QueueOrderStrategy s(h.core());
  h.Admit(NvJob(0, 0, 2), 0);
  h.Admit(NvJob(1, 1, 4), 1);
  h.Admit(NvJob(2, 2, 1), 2);
  Decision d;
  h.core().BeginDecision(2);
  s.StartInOrder(2, /*fill=*/true, d);
  ASSERT_EQ(d.placed.size(), 2u);
  EXPECT_EQ(d.placed[0].job.value(), 0);
  EXPECT_EQ(d.placed[1].job.value(), 2);
}

TEST(QueueOrderStrategy, ArrivalOrderNotSubmissionOrder) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  CoreHarness h(c, "fifo");
  QueueOrderStrategy s(h.core());
  h.Admit(NvJob(0, 5, 1), 5);  // submitted first, arrived later
  h.Admit(NvJob(1, 3, 1), 5);
  const Decision d = h.Decide(s, 5);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job.value(), 1);
}

// Four devices; job 0 (gang 2, 100 s estimated) runs, job 1 (gang 4) waits at the head: its
// reservation is at t = 100 with no device to spare.
class EasyBackfill : public ::testing::Test {
 protected:
  EasyBackfill() : cluster_(MakeCluster({{"nv", "cuda", 1, 4}})), h_(cluster_, "easy-backfill") {
    h_.Admit(NvJob(0, 0, 2, 100), 0);
    EXPECT_EQ(h_.Decide(s_, 0).placed.size(), 1u);
    h_.Admit(NvJob(1, 1, 4), 1);
  }
  model::Cluster cluster_;
  CoreHarness h_;
  QueueOrderStrategy s_{h_.core()};
};

TEST_F(EasyBackfill, ShortJobsThatEndBeforeTheReservationStart) {
  h_.Admit(NvJob(2, 2, 2, 50), 2);  // ends at 52 < 100
  const Decision d = h_.Decide(s_, 2);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job.value(), 2);
}

TEST_F(EasyBackfill, JobsThatWouldDelayTheHeadWait) {
  h_.Admit(NvJob(2, 2, 1, 200), 2);  // ends at 202 > 100, and no device is spare then
  h_.Admit(NvJob(3, 3, 1), 3);       // nothing known: it could run for ever
  EXPECT_TRUE(h_.Decide(s_, 3).placed.empty());
  // Once job 0 ends, the head starts first and takes every device.
  h_.Finish(s_, 0, 90);
  const Decision d = h_.Decide(s_, 90);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job.value(), 1);
}

TEST_F(EasyBackfill, ReservationFollowsTheRunningJobsProgress) {
  // At t = 60, job 0 has 40 s left: a 45 s job would end at 105, past the reservation.
  h_.Admit(NvJob(2, 60, 1, 45), 60);
  EXPECT_TRUE(h_.Decide(s_, 60).placed.empty());
  h_.Admit(NvJob(3, 61, 1, 30), 61);  // ends at 91
  const Decision d = h_.Decide(s_, 61);
  ASSERT_EQ(d.placed.size(), 1u);
  EXPECT_EQ(d.placed[0].job.value(), 3);
}

TEST(QueueOrderStrategy, AgnosticSpreadsAwareTakesTheFastest) {
  const auto c = MakeCluster({{"slow", "cuda", 1, 3}, {"fast", "cuda", 1, 1}});
  const model::Job j = MakeJob(0, 0, 0, {{"slow", 1.0}, {"fast", 4.0}});
  // fifo: type-agnostic, the type with the most free devices.
  CoreHarness agnostic(c, "fifo");
  QueueOrderStrategy a(agnostic.core());
  agnostic.Admit(j, 0);
  EXPECT_EQ(agnostic.PlacedTypes(agnostic.Decide(a, 0), 1)[0], "slow");
  // easy-backfill is type-aware: the fastest type with room.
  CoreHarness aware(c, "easy-backfill");
  QueueOrderStrategy b(aware.core());
  aware.Admit(j, 0);
  EXPECT_EQ(aware.PlacedTypes(aware.Decide(b, 0), 1)[0], "fast");
}

TEST(QueueOrderStrategy, NeverPlacesAJobWhereItsStackDoesNotRun) {
  // Free devices are all AMD; the CUDA jobs wait, the ROCm job starts there.
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}, {"amd", "rocm", 1, 4}});
  for (std::string_view policy : {"fifo", "easy-backfill"}) {
    CoreHarness h(c, policy);
    QueueOrderStrategy s(h.core());
    h.Admit(MakeJob(0, 0, 0, {{"nv", 1.0}, {"amd", 9.0}}), 0);  // takes nv
    h.Admit(MakeJob(1, 1, 0, {{"nv", 1.0}, {"amd", 9.0}}), 1);
    h.Admit(MakeJob(2, 2, 0, {{"nv", 1.0}, {"amd", 1.0}}, 1, "rocm"), 2);
    Decision d;
    h.core().BeginDecision(2);
    s.StartInOrder(2, /*fill=*/true, d);
    EXPECT_EQ(h.PlacedTypes(d, 3), (std::vector<std::string>{"nv", "", "amd"})) << policy;
    for (const Placement& p : d.placed) {
      for (model::DeviceId dev : p.devices) EXPECT_EQ(c.device(dev).type, p.type) << policy;
    }
  }
}

TEST(QueueOrderStrategy, GangsStartWholeAndInsideOneNodeWhenTheyCan) {
  const auto c = MakeCluster({{"nv", "cuda", 2, 2}});
  CoreHarness h(c, "fifo");
  QueueOrderStrategy s(h.core());
  h.Admit(NvJob(0, 0, 1), 0);
  h.Admit(NvJob(1, 1, 2), 1);
  h.Admit(NvJob(2, 2, 2), 2);  // 1 device left after job 1: all or nothing
  const Decision d = h.Decide(s, 2);
  ASSERT_EQ(d.placed.size(), 2u);
  const Placement& gang = d.placed[1];
  ASSERT_EQ(gang.job.value(), 1);
  ASSERT_EQ(gang.devices.size(), 2u);
  // Job 0 took one device of a node: the gang gets the other node whole.
  EXPECT_EQ(c.device(gang.devices[0]).node, c.device(gang.devices[1]).node);
  EXPECT_NE(c.device(gang.devices[0]).node, c.device(d.placed[0].devices[0]).node);
  EXPECT_EQ(h.record(2).phase, JobPhase::kQueued);
}

}  // namespace
}  // namespace hetsched::sched
