// SchedulerOptions::redeal_cap: a full decision of a preemptive policy stops at most that many
// running jobs, the highest-priority jobs' displacements first; the next decision goes on at
// once, and the series ends where one uncapped decision would have led.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sched/core_harness.h"
#include "sched/preemptive_strategy.h"
#include "sched/test_cluster.h"

namespace hetsched::sched {
namespace {

using testing::CoreHarness;
using testing::ExpectSameDecision;
using testing::MakeCluster;
using testing::MakeJob;
using testing::NvJob;
using testing::PreemptedIds;

constexpr int kRunning = 8;

// Full decisions every 10 s, at most `cap` re-deals each (0: no bound).
SchedulerOptions Capped(int64_t cap) {
  SchedulerOptions o;
  o.preempt_interval_s = 10;
  o.redeal_cap = cap;
  return o;
}

// `priority` on one 8-device type: jobs 0-7 run (job i at priority 7 - i, so the running order
// is the reverse of the policy's), then jobs 8-15 arrive at priorities 20-27 (job 15 highest).
// Returns after the full decision at t = 10, which displaces them all when uncapped.
Decision Redeal(CoreHarness& h, PreemptiveStrategy& s) {
  for (int i = 0; i < kRunning; ++i) {
    model::Job j = NvJob(i, 0);
    j.priority = kRunning - 1 - i;
    h.Admit(j, 0);
  }
  EXPECT_EQ(h.Decide(s, 0).placed.size(), static_cast<size_t>(kRunning));
  for (int i = 0; i < kRunning; ++i) {
    model::Job j = NvJob(kRunning + i, 5);
    j.priority = 20 + i;
    h.Admit(j, 5);
  }
  EXPECT_TRUE(h.Decide(s, 5).preempted.empty());  // not due: the interval
  return h.Decide(s, 10);
}

std::vector<int> PlacedIds(const Decision& d) {
  std::vector<int> out;
  for (const Placement& p : d.placed) out.push_back(p.job.value());
  return out;
}

std::vector<int> RunningIds(const CoreHarness& h, int jobs) {
  std::vector<int> out;
  for (int i = 0; i < jobs; ++i) {
    if (h.record(i).phase == JobPhase::kRunning) out.push_back(i);
  }
  return out;
}

TEST(RedealCap, CappedDecisionStopsAtMostKTheHighestPriorityDisplacementsFirst) {
  const auto c = MakeCluster({{"nv", "cuda", 1, kRunning}});
  CoreHarness h(c, "priority", Capped(3));
  PreemptiveStrategy s(h.core());
  const Decision d = Redeal(h, s);
  // The three highest queued jobs start, in the policy's order; they take the devices of the
  // three lowest running ones (jobs 7, 6, 5), not of those first in the running order.
  EXPECT_EQ(PlacedIds(d), (std::vector<int>{15, 14, 13}));
  std::vector<int> stopped = PreemptedIds(d);
  std::sort(stopped.begin(), stopped.end());
  EXPECT_EQ(stopped, (std::vector<int>{5, 6, 7}));
  EXPECT_EQ(s.capped_decisions(), 1);
  EXPECT_EQ(s.deferred_redeals(), 0);
  // The next decision is due at once, not after the interval.
  EXPECT_LT(s.NextReallocationAt(true), 10.001);
}

TEST(RedealCap, TheNextDecisionsFinishTheRedealAsOneUncappedDecision) {
  // Equal under this condition: no event and no time between the capped decisions (keys
  // that do not change in time would do as well), so the policy's order is the same in each.
  const auto c = MakeCluster({{"nv", "cuda", 1, kRunning}});
  CoreHarness whole(c, "priority", Capped(0));
  PreemptiveStrategy one(whole.core());
  const Decision d = Redeal(whole, one);
  EXPECT_EQ(d.preempted.size(), static_cast<size_t>(kRunning));
  EXPECT_EQ(one.capped_decisions(), 0);

  CoreHarness h(c, "priority", Capped(3));
  PreemptiveStrategy s(h.core());
  size_t stopped = Redeal(h, s).preempted.size();
  int decisions = 1;
  while (s.NextReallocationAt(true) < 10 + 1) {
    ASSERT_LT(decisions, 10) << "the series does not end";
    const Decision next = h.Decide(s, 10);
    EXPECT_LE(next.preempted.size(), 3u);
    stopped += next.preempted.size();
    ++decisions;
  }
  EXPECT_EQ(decisions, 3);  // 3 + 3 + 2
  EXPECT_EQ(stopped, static_cast<size_t>(kRunning));
  EXPECT_EQ(s.capped_decisions(), 2);
  EXPECT_EQ(s.deferred_redeals(), 5);
  EXPECT_EQ(RunningIds(h, 2 * kRunning), RunningIds(whole, 2 * kRunning));
  // The series over, the interval counts again.
  EXPECT_TRUE(h.Decide(s, 15).preempted.empty());
  EXPECT_DOUBLE_EQ(s.NextReallocationAt(true), 20);
}

TEST(RedealCap, ADecisionUnderTheCapIsTheUncappedOne) {
  const auto c = MakeCluster({{"nv", "cuda", 1, kRunning}});
  CoreHarness whole(c, "priority", Capped(0));
  PreemptiveStrategy one(whole.core());
  CoreHarness h(c, "priority", Capped(kRunning));
  PreemptiveStrategy s(h.core());
  ExpectSameDecision(Redeal(whole, one), Redeal(h, s), 10);
  EXPECT_EQ(s.capped_decisions(), 0);
  EXPECT_DOUBLE_EQ(s.NextReallocationAt(true), 20);
}

// Two types, 12 jobs running past their quantum and 12 more arriving that the policy prefers
// (shorter: srpt-het and default), re-dealt at one instant by capped decisions; the
// series' last state by job ("-": not running) and the jobs each decision stopped.
std::vector<std::string> SeriesOnTwoTypes(const std::string& policy, int64_t cap,
                                          std::vector<size_t>& stops) {
  const auto c = MakeCluster({{"slow", "cuda", 1, 6}, {"fast", "cuda", 1, 6}});
  SchedulerOptions o = Capped(cap);
  o.preemption_cost_s = 10;
  o.preempt_quantum_s = 100;
  CoreHarness h(c, policy, o);
  PreemptiveStrategy s(h.core());
  for (int i = 0; i < 12; ++i) {
    model::Job j = MakeJob(i, 0, 0, {{"slow", 1.0}, {"fast", 1.0 + 0.2 * (i % 5)}});
    j.estimate_s = 100000 + 1000 * i;
    h.Admit(j, 0);
  }
  h.Decide(s, 0);
  for (int i = 12; i < 24; ++i) {
    model::Job j = MakeJob(i, 500, 0, {{"slow", 1.0}, {"fast", 1.0 + 0.3 * (i % 4)}});
    j.estimate_s = 200 + 10 * i;
    h.Admit(j, 500);
  }
  const double now = 1000;
  for (int decisions = 0; decisions < 20; ++decisions) {
    stops.push_back(h.Decide(s, now).preempted.size());
    if (s.NextReallocationAt(true) >= now + 1) break;
  }
  std::vector<std::string> where;
  for (int i = 0; i < 24; ++i) {
    const JobRecord& r = h.record(i);
    where.push_back(r.phase == JobPhase::kRunning ? c.catalog.Get(r.type).name : "-");
  }
  return where;
}

TEST(RedealCap, SeriesOnTwoTypesEndsAsOneUncappedDecision) {
  // srpt-het: no throughput plan, keys that do not move within the instant.
  std::vector<size_t> whole_stops, capped_stops;
  const std::vector<std::string> whole = SeriesOnTwoTypes("srpt-het", 0, whole_stops);
  ASSERT_EQ(whole_stops.size(), 1u);
  ASSERT_GT(whole_stops[0], 4u);  // the scenario re-deals more than the cap
  const std::vector<std::string> capped = SeriesOnTwoTypes("srpt-het", 4, capped_stops);
  EXPECT_GT(capped_stops.size(), 1u);
  for (size_t n : capped_stops) EXPECT_LE(n, 4u);
  EXPECT_EQ(capped, whole);
}

TEST(RedealCap, PlannedSeriesStopsTheSameJobsButMayPlanOtherwise) {
  // default: each decision of the series solves its throughput plan again, with the jobs the
  // ones before started booked where they run (inside their quantum), so which queued jobs end
  // on which type may differ from one uncapped decision's plan (an approximation); the jobs
  // stopped, and how many run on each type, are the same here.
  std::vector<size_t> whole_stops, capped_stops;
  const std::vector<std::string> whole = SeriesOnTwoTypes("default", 0, whole_stops);
  ASSERT_EQ(whole_stops.size(), 1u);
  ASSERT_GT(whole_stops[0], 4u);
  const std::vector<std::string> capped = SeriesOnTwoTypes("default", 4, capped_stops);
  EXPECT_GT(capped_stops.size(), 1u);
  for (size_t n : capped_stops) EXPECT_LE(n, 4u);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(capped[i], whole[i]) << "job " << i;
  for (const char* type : {"slow", "fast", "-"}) {
    EXPECT_EQ(std::count(capped.begin(), capped.end(), type),
              std::count(whole.begin(), whole.end(), type))
        << type;
  }
}

// srpt-het-fair (`default`) on three types of 48 devices: 144 long jobs run past their quantum
// when 144 shorter ones arrive, all one device each, so the full decision at t = 1000 re-deals
// the cluster through SelectByOrder's walk over every job. `by_class` false: the reference full
// walk (OpenPool) instead.
struct MassRedeal {
  static constexpr int kJobs = 144;
  model::Cluster cluster =
      MakeCluster({{"slow", "cuda", 6, 8}, {"mid", "cuda", 6, 8}, {"fast", "cuda", 6, 8}});
  CoreHarness h;
  PreemptiveStrategy s;
  Decision redeal;

  MassRedeal(int64_t cap, bool by_class)
      : h(cluster, "default", Options(cap)), s(h.core(), by_class) {
    for (int i = 0; i < 2 * kJobs; ++i) {
      const bool late = i >= kJobs;
      model::Job j =
          MakeJob(i, late ? 500 : 0, 0,
                  {{"slow", 1.0}, {"mid", 1.0 + 0.5 * (i % 2)}, {"fast", 1.0 + (i % 3)}});
      j.estimate_s = late ? 2000 + 37 * i : 100000 + 1000 * i;
      h.Admit(j, j.arrival_s);
      if (i == kJobs - 1) h.Decide(s, 0);
    }
    redeal = h.Decide(s, 1000);
  }
  static SchedulerOptions Options(int64_t cap) {
    SchedulerOptions o = Capped(cap);
    o.preemption_cost_s = 10;
    o.preempt_quantum_s = 100;
    return o;
  }
};

TEST(RedealCap, CappedWalkKeysOnlyTheJobsBeforeItsCap) {
  MassRedeal whole(0, /*by_class=*/false);
  ASSERT_GT(whole.redeal.placed.size(), 50u);  // of the 144 queued
  for (int64_t cap : {5, 11}) {
    SCOPED_TRACE(::testing::Message() << "cap " << cap);
    MassRedeal lazy(cap, /*by_class=*/true), walked(cap, /*by_class=*/false);
    // SelectByOrder walked with keys made as it went, and stopped well before every job (its
    // first stretch: 64 keys).
    ASSERT_EQ(lazy.s.ordered_full_walks(), 1);
    EXPECT_EQ(lazy.s.capped_decisions(), 1);
    EXPECT_EQ(lazy.s.capped_walk_jobs(), 2 * MassRedeal::kJobs);
    EXPECT_EQ(lazy.s.capped_walk_keys(), 64);
    // Its re-deals are the uncapped full walk's first ones, in policy order.
    const std::vector<int> placed = PlacedIds(lazy.redeal);
    ASSERT_GT(placed.size(), 0u);
    ASSERT_LE(placed.size(), static_cast<size_t>(cap));
    const std::vector<int> first = PlacedIds(whole.redeal);
    EXPECT_EQ(placed, std::vector<int>(first.begin(), first.begin() + std::ssize(placed)));
    for (size_t i = 0; i < placed.size(); ++i) {
      EXPECT_EQ(lazy.redeal.placed[i].type, whole.redeal.placed[i].type) << i;
    }
    // One device each, nothing free: the jobs it stops are the capped full walk's, the last in
    // policy order of each type.
    ExpectSameDecision(lazy.redeal, walked.redeal, 0);
  }
}

TEST(RedealCap, CappedWalkUnderItsCapIsTheFullWalk) {
  MassRedeal whole(0, /*by_class=*/false), lazy(1000, /*by_class=*/true);
  EXPECT_EQ(lazy.s.ordered_full_walks(), 1);
  EXPECT_EQ(lazy.s.capped_decisions(), 0);
  ExpectSameDecision(lazy.redeal, whole.redeal, 0);
  EXPECT_GT(lazy.redeal.placed.size(), 50u);
  EXPECT_EQ(lazy.s.capped_walk_keys(), lazy.s.capped_walk_jobs());  // it walked them all
}

}  // namespace
}  // namespace hetsched::sched
