#include "sched/reservations.h"

#include <gtest/gtest.h>

#include <vector>

#include "sched/core_harness.h"
#include "sched/queue_order_strategy.h"
#include "sched/test_cluster.h"

namespace hetsched::sched {
namespace {

using testing::CoreHarness;
using testing::MakeCluster;
using testing::NvJob;

const model::DeviceTypeId kNv(0);

std::vector<int> PlacedIds(const Decision& d) {
  std::vector<int> out;
  for (const Placement& p : d.placed) out.push_back(p.job.value());
  return out;
}

// Runs job `id` on the free devices of "nv" now.
void StartNow(CoreHarness& h, int id, double now_s) {
  auto devs = h.core().PlaceOn(h.record(id), kNv);
  ASSERT_TRUE(devs.has_value());
  h.core().Start(id, kNv, *devs, now_s, false);
}

TEST(Reservations, StartInTheOrderAddedNotInQueueOrder) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 2}});
  CoreHarness h(c, "fifo");
  for (int id : {0, 1, 2}) h.Admit(NvJob(id, 0), 0);
  Reservations r;
  r.Add(h.core(), 2, kNv);
  r.Add(h.core(), 1, kNv);
  Decision d;
  r.StartFree(h.core(), 0, d);
  EXPECT_EQ(PlacedIds(d), (std::vector<int>{2, 1}));
  EXPECT_EQ(h.record(0).phase, JobPhase::kQueued);
}

TEST(Reservations, WaitForBusyDevicesThenStartOnce) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  CoreHarness h(c, "fifo");
  QueueOrderStrategy strategy(h.core());  // only for the harness's Finish
  h.Admit(NvJob(0, 0), 0);
  h.Admit(NvJob(1, 0), 0);
  StartNow(h, 0, 0);
  Reservations r;
  r.Add(h.core(), 1, kNv);
  Decision d;
  r.StartFree(h.core(), 1, d);
  EXPECT_TRUE(d.placed.empty());  // kept while the device is busy
  h.Finish(strategy, 0, 2);
  r.StartFree(h.core(), 2, d);
  EXPECT_EQ(PlacedIds(d), (std::vector<int>{1}));
  // The entry went with the start: stopped and queued again, the job is not started by it.
  Decision again;
  h.core().Preempt(1, 3, again);
  ASSERT_EQ(h.record(1).phase, JobPhase::kQueued);
  r.StartFree(h.core(), 3, again);
  EXPECT_TRUE(again.placed.empty());
}

TEST(Reservations, DroppedWhenTheSlotNamesAnotherJob) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  CoreHarness h(c, "fifo");
  QueueOrderStrategy strategy(h.core());
  h.Admit(NvJob(0, 0), 0);
  Reservations r;
  r.Add(h.core(), 0, kNv);
  h.Finish(strategy, 0, 1);  // ended while queued; id 0 goes to a new job
  h.Admit(NvJob(0, 0), 2);
  Decision d;
  r.StartFree(h.core(), 2, d);
  EXPECT_TRUE(d.placed.empty());
}

TEST(Reservations, ReplanKeepsOnlyJobsStillWritingTheirCheckpoints) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 2}});
  SchedulerOptions o;
  o.stop_holds_devices = true;
  CoreHarness h(c, "priority", o);
  h.Admit(NvJob(0, 0), 0);
  h.Admit(NvJob(1, 0), 0);
  StartNow(h, 0, 0);
  Decision d;
  h.core().Preempt(0, 1, d);
  ASSERT_EQ(h.record(0).phase, JobPhase::kStopping);
  Reservations r;
  r.Add(h.core(), 0, kNv);  // moves once its checkpoint is written
  r.Add(h.core(), 1, kNv);  // queued: the next full decision sees it anyway
  r.Replan(h.core());
  h.Stopped(0, 2);
  Decision after;
  r.StartFree(h.core(), 2, after);
  EXPECT_EQ(PlacedIds(after), (std::vector<int>{0}));
  EXPECT_EQ(h.record(1).phase, JobPhase::kQueued);
}

// A gang of 3 that waits for the device job 0 holds: the two free ones are kept out of the
// free index for it until it starts, and given back when a full decision re-plans.
TEST(Reservations, HoldTheFreeDevicesOfTheGangUntilItStartsOrIsReplanned) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 3}});
  CoreHarness h(c, "fifo");
  QueueOrderStrategy strategy(h.core());
  const ClusterState& state = h.core().state();
  h.Admit(NvJob(0, 0), 0);
  h.Admit(NvJob(1, 0, /*gang=*/3), 0);
  StartNow(h, 0, 0);
  Reservations r;
  r.Add(h.core(), 1, kNv);
  EXPECT_EQ(state.FreeOfType(kNv), 0);
  EXPECT_TRUE(h.record(1).reserved);
  Decision d;
  r.StartFree(h.core(), 1, d);
  EXPECT_TRUE(d.placed.empty());
  EXPECT_EQ(state.FreeOfType(kNv), 0);  // still held while the gang waits
  r.Replan(h.core());
  EXPECT_EQ(state.FreeOfType(kNv), 2);
  EXPECT_FALSE(h.record(1).reserved);
  // Held again, then the third device comes free: the gang starts on all three.
  r.Add(h.core(), 1, kNv);
  h.Finish(strategy, 0, 2);
  r.StartFree(h.core(), 2, d);
  ASSERT_EQ(PlacedIds(d), (std::vector<int>{1}));
  EXPECT_EQ(d.placed[0].devices.size(), 3u);
  EXPECT_FALSE(h.record(1).reserved);
  EXPECT_EQ(state.reserved_devices(), 0);
}

}  // namespace
}  // namespace hetsched::sched
