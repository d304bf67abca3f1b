// PreemptiveStrategy::SelectByClass and SelectByOrder against the full walk they stand in for:
// the throughput-plan policy (srpt-het-fair) on random arrivals and completions, each followed
// by a full decision, once with them and once walking every job.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sched/core_harness.h"
#include "sched/preemptive_strategy.h"
#include "sched/test_cluster.h"

namespace hetsched::sched {
namespace {

using testing::CoreHarness;
using testing::MakeCluster;
using testing::MakeJob;

struct Counts {
  int64_t full = 0, by_class = 0, ordered = 0, least_keys = 0, movable = 0, preempted = 0,
          placed = 0;
  // Classes whose least running key SelectByOrder found by a plain pass (not in floor order),
  // and walks that took a class's running keys from those keyed for its least.
  int64_t least_by_pass = 0, keys_reused = 0;
  // By-class decisions while the queue asked for more devices than were free, and full walks
  // SelectByOrder made with its own plan (where the full walk displaces running jobs).
  int64_t past_free = 0, ordered_full_walks = 0;
  // SelectByOrder's decisions with queued jobs whose class moves with their progress.
  int64_t ordered_with_apart = 0;
  // Decisions by class of the strategy without the running order, and of those the ones with
  // the queue asking for more than was free.
  int64_t class_only = 0, class_only_past_free = 0;
  // Decisions by class, and of those by running order, begun with devices held for reserved jobs.
  int64_t by_class_with_held = 0, ordered_with_held = 0;
  // Classes of movable running jobs in the held rooms SelectByOrder made, and of those the ones
  // listed job by job; decisions it left to the full walk for many changes.
  int64_t room_classes = 0, room_classes_listed = 0, many_changes = 0;
  // Plans SelectByOrder solved with its kept running jobs counted by class, each compared with
  // the plan made from every job; rows in them of classes only kept jobs were of.
  int64_t plans_compared = 0, kept_only_rows = 0;
  // Elastic jobs placed at fewer workers than their largest size (resized while queued).
  int64_t placed_smaller = 0;
};

void ExpectSame(const Decision& a, const Decision& b, int step, Counts& counts) {
  counts.preempted += static_cast<int64_t>(a.preempted.size());
  counts.placed += static_cast<int64_t>(a.placed.size());
  testing::ExpectSameDecision(a, b, step);
}

// A job of a few classes (speeds from small sets, gangs 1, 2 and 4), half with an estimate.
// `mixed`: one in six may also run on rocm (the slow type's stack), its checkpoint loading there
// or not (a class that moves with its progress once it ran).
// `elastic`: half of them may run at 1 up to 2, 4 or 8 workers (sched/elastic.h).
model::Job RandomJob(int id, double now_s, std::mt19937& rng, bool mixed, bool elastic) {
  const double fast = 1.0 + static_cast<double>(rng() % 3), mid = 1.0 + (rng() % 2) * 0.5;
  model::Job j = MakeJob(id, now_s, 0, {{"fast", fast}, {"mid", mid}, {"slow", 1.0}},
                         1 << static_cast<int>(rng() % 3));
  if (rng() % 2 == 0) j.estimate_s = 100.0 + static_cast<double>(rng() % 2000);
  j.preemptible = rng() % 10 != 0;
  if (mixed && rng() % 6 == 0) {
    j.stacks.push_back({"rocm", ""});
    j.portable_checkpoint = rng() % 2 == 0;
  }
  if (elastic && rng() % 2 == 0) {
    j.min_workers = 1;
    j.max_workers = 2 << static_cast<int>(rng() % 3);
  }
  return j;
}

// `cost_s`: what a preemption costs (0: free, no quantum; else the default quantum of 40 costs
// keeps started jobs in place, and the plan favours running jobs on their type). `max_gap_s`:
// the longest time between arrivals. `learn`: completed jobs' sizes are learned (Gittins ranks
// from tables that change as jobs complete), else estimates are exact and the others ranked by
// attained service. `checkpointed`: a preempted job keeps its devices while it writes its
// checkpoint, until the next arrival (stop_holds_devices): the jobs a decision gave those
// devices, and those moving, wait reserved, with the free devices of their type held for them
// (sched/reservations.h), so later decisions see held devices. `mixed`: the slow type runs
// rocm, which some jobs can also run on (RandomJob). `many_changes`: SelectByOrder leaves a
// decision to the full walk past that many running jobs started or stopped (0: its default).
// `elastic`: elastic jobs among them (RandomJob), resized around each decision as the Scheduler
// resizes them (SchedulerOptions::elastic).
void ExpectSameAsTheFullWalk(uint32_t seed, double cost_s, int max_gap_s, bool learn,
                             Counts& counts, bool checkpointed = false, bool mixed = false,
                             size_t many_changes = 0, bool elastic = false) {
  const auto c = MakeCluster(
      {{"fast", "cuda", 2, 4}, {"mid", "cuda", 2, 4}, {"slow", mixed ? "rocm" : "cuda", 3, 4}});
  SchedulerOptions options;
  options.preempt_interval_s = 0;
  options.preemption_cost_s = cost_s;
  options.stop_holds_devices = checkpointed;
  options.elastic = elastic;
  CoreHarness a(c, "srpt-het-fair", options), b(c, "srpt-het-fair", options),
      o(c, "srpt-het-fair", options);
  PreemptiveStrategy by_class(a.core()), walked(b.core(), /*by_class=*/false),
      class_only(o.core(), /*by_class=*/true, /*by_order=*/false);
  if (many_changes > 0) by_class.set_many_changes(many_changes);
  std::mt19937 rng(seed);
  std::vector<int> live;
  std::vector<int> stopping;  // writing their checkpoints
  double now = 0;
  // All three decide, the same way; the jobs they stop write their checkpoints until the next
  // arrival.
  const auto decide = [&](int step) {
    const bool held = a.core().state().reserved_devices() > 0;
    const int64_t class_before = by_class.by_class_decisions();
    const int64_t ordered_before = by_class.ordered_decisions();
    const int64_t plans_before = by_class.plans_by_order();
    const Decision d = a.Decide(by_class, now);
    if (held && by_class.by_class_decisions() > class_before) ++counts.by_class_with_held;
    if (held && by_class.ordered_decisions() > ordered_before) ++counts.ordered_with_held;
    const Decision full = b.Decide(walked, now);
    ExpectSame(d, full, step, counts);
    for (const Placement& p : d.placed) {
      const JobRecord& r = a.record(p.job.value());
      if (!r.sizes.empty() && std::ssize(p.devices) < r.sizes.back().workers) {
        ++counts.placed_smaller;
      }
    }
    testing::ExpectSameDecision(o.Decide(class_only, now), full, step);
    // SelectByOrder's plan, its kept running jobs counted by class, is the plan made from every
    // job with the kept ones added to their rows one by one (SolvePlan without the running
    // order): the same rows in the same order, budgets equal to the last bit.
    if (by_class.plans_by_order() > plans_before) {
      ASSERT_EQ(by_class.first_plan(), class_only.first_plan()) << "step " << step;
      ASSERT_EQ(by_class.first_plan(), walked.first_plan()) << "step " << step;
      ++counts.plans_compared;
    }
    for (model::JobId id : d.preempted) {
      if (a.record(id.value()).phase == JobPhase::kStopping) stopping.push_back(id.value());
    }
  };
  for (int id = 0; id < 300; ++id) {
    now += static_cast<double>(rng() % max_gap_s);
    for (int s : stopping) {
      a.Stopped(s, now);
      b.Stopped(s, now);
      o.Stopped(s, now);
    }
    stopping.clear();
    const model::Job j = RandomJob(id, now, rng, mixed, elastic);
    a.Admit(j, now);
    b.Admit(j, now);
    o.Admit(j, now);
    live.push_back(id);
    // Up to two completions, each followed by a decision, then the arrival's decision; every
    // third arrival waits for the next decision, so that queues build up.
    for (int k = static_cast<int>(rng() % 3); k > 0 && !live.empty(); --k) {
      const size_t at = rng() % live.size();
      if (a.record(live[at]).phase != JobPhase::kRunning) continue;
      a.Finish(by_class, live[at], now, learn);
      b.Finish(walked, live[at], now, learn);
      o.Finish(class_only, live[at], now, learn);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
      ASSERT_NO_FATAL_FAILURE(decide(id));
    }
    if (rng() % 3 == 0) continue;
    ASSERT_NO_FATAL_FAILURE(decide(id));
  }
  EXPECT_EQ(by_class.full_decisions(), walked.full_decisions());
  EXPECT_EQ(walked.by_class_decisions(), 0);
  EXPECT_EQ(walked.ordered_decisions(), 0);
  EXPECT_EQ(class_only.ordered_decisions(), 0);
  counts.class_only += class_only.by_class_decisions();
  counts.class_only_past_free += class_only.past_free_decisions();
  counts.full += by_class.full_decisions();
  counts.by_class += by_class.by_class_decisions();
  counts.ordered += by_class.ordered_decisions();
  counts.least_keys += by_class.least_keys_evaluated();
  counts.least_by_pass += by_class.least_by_pass();
  counts.keys_reused += by_class.keys_reused();
  counts.movable += by_class.movable_in_order();
  counts.past_free += by_class.past_free_decisions();
  counts.ordered_full_walks += by_class.ordered_full_walks();
  counts.ordered_with_apart += by_class.ordered_with_apart();
  counts.room_classes += by_class.room_classes();
  counts.room_classes_listed += by_class.room_classes_listed();
  counts.many_changes += by_class.many_changes_decisions();
  counts.kept_only_rows += by_class.kept_only_rows();
}

// Loaded (arrivals faster than the 28 devices finish them: queues, moves and preemptions) and
// light (room on most types), with free and costly preemptions, sizes learned or not, on five
// seeds each. Among the decisions by class are some whose queued jobs ask for more devices
// than are free (their room then depends on the running jobs keyed after them).
TEST(SelectByClass, DecidesAsTheFullWalk) {
  int64_t preempted = 0, ordered_full_walks = 0, room_classes = 0, room_classes_listed = 0;
  int64_t plans_compared = 0, kept_only_rows = 0;
  for (bool learn : {false, true}) {
    for (double cost_s : {0.0, 30.0}) {
      for (int max_gap_s : {20, 400}) {
        Counts counts;
        SCOPED_TRACE(::testing::Message()
                     << "cost " << cost_s << " gap " << max_gap_s << " learn " << learn);
        for (uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
          ExpectSameAsTheFullWalk(seed, cost_s, max_gap_s, learn, counts);
          ASSERT_FALSE(HasFatalFailure());
        }
        // Every way was taken, and the decisions compared did something.
        EXPECT_GT(counts.ordered, 0);
        EXPECT_LE(counts.ordered, counts.by_class);
        EXPECT_LE(counts.least_keys, counts.movable);
        // Least keys found by plain passes, and running keys reused by the walks, were among
        // the decisions compared.
        EXPECT_GT(counts.least_by_pass, 0);
        EXPECT_GT(counts.keys_reused, 0);
        EXPECT_LT(counts.by_class, counts.full);
        EXPECT_GT(counts.placed, 100);
        // Walks by class decided where the queue asked for more than was free.
        EXPECT_GT(counts.past_free, 10);
        EXPECT_GT(counts.class_only_past_free, 10);  // and without the running order
        EXPECT_LT(counts.class_only, counts.full);
        ordered_full_walks += counts.ordered_full_walks;
        preempted += counts.preempted;
        room_classes += counts.room_classes;
        room_classes_listed += counts.room_classes_listed;
        plans_compared += counts.plans_compared;
        if (cost_s > 0) kept_only_rows += counts.kept_only_rows;
      }
    }
  }
  EXPECT_GT(preempted, 10);  // moves and stops were among the decisions compared
  // The held rooms SelectByOrder's walks asked for listed some classes job by job and counted
  // others whole.
  EXPECT_GT(room_classes_listed, 10);
  EXPECT_LT(room_classes_listed, room_classes);
  // SelectByOrder walked every job with its own plan where the full walk displaces running jobs.
  EXPECT_GT(ordered_full_walks, 100);
  // Its plans, the kept running jobs counted by class, were compared with those made from every
  // job; under a quantum (cost_s > 0) thousands of their rows were of classes only kept jobs
  // were of, placed by each one's first running job.
  EXPECT_GT(plans_compared, 5000);
  EXPECT_GT(kept_only_rows, 10000);
}

// With checkpoints written between decisions, devices held for reserved jobs (moving ones, and
// those waiting for the devices being checkpointed) are not free to the class path's walk or
// to its room check, as they are not to the full walk: the decisions stay the same.
TEST(SelectByClass, DecidesAsTheFullWalkWhileDevicesAreHeldForReservedJobs) {
  int64_t ordered_with_held = 0;
  for (bool learn : {false, true}) {
    for (int max_gap_s : {20, 400}) {
      Counts counts;
      for (uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
        ExpectSameAsTheFullWalk(seed, /*cost_s=*/0.0, max_gap_s, learn, counts,
                                /*checkpointed=*/true);
        ASSERT_FALSE(HasFatalFailure()) << "gap " << max_gap_s << " learn " << learn;
      }
      SCOPED_TRACE(::testing::Message() << "gap " << max_gap_s << " learn " << learn);
      EXPECT_GT(counts.by_class, 0);
      EXPECT_LT(counts.by_class, counts.full);
      EXPECT_GT(counts.by_class_with_held, 10);
      EXPECT_GT(counts.preempted, 10);
      ordered_with_held += counts.ordered_with_held;
    }
  }
  EXPECT_GT(ordered_with_held, 0);  // SelectByOrder decided with devices held too
}

// Some jobs may also run on another vendor's type, where their checkpoints may not load: once
// they ran, their class moves with their progress. SelectByOrder leaves the decision to the
// walk while such a job runs; while one waits it keys it apart from its index of the queue.
TEST(SelectByClass, DecidesAsTheFullWalkWithQueuedJobsOfMovingClasses) {
  Counts counts;
  for (bool learn : {false, true}) {
    for (uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
      ExpectSameAsTheFullWalk(seed, /*cost_s=*/0.0, /*max_gap_s=*/20, learn, counts,
                              /*checkpointed=*/false, /*mixed=*/true);
      ASSERT_FALSE(HasFatalFailure()) << "seed " << seed << " learn " << learn;
    }
  }
  EXPECT_GT(counts.ordered, 0);
  EXPECT_LT(counts.ordered, counts.full);
  EXPECT_GT(counts.ordered_with_apart, 0);
}

// Decisions after many running jobs started or stopped (past set_many_changes) are left to the
// full walk, and the running and queued orders still take those changes: the decisions by
// order after them stay the same.
TEST(SelectByClass, DecidesAsTheFullWalkAfterManyChanges) {
  Counts counts;
  for (bool learn : {false, true}) {
    for (double cost_s : {0.0, 30.0}) {
      for (uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
        ExpectSameAsTheFullWalk(seed, cost_s, /*max_gap_s=*/20, learn, counts,
                                /*checkpointed=*/false, /*mixed=*/false, /*many_changes=*/2);
        ASSERT_FALSE(HasFatalFailure()) << "seed " << seed << " learn " << learn;
      }
    }
  }
  EXPECT_GT(counts.many_changes, 20);
  EXPECT_GT(counts.ordered, 20);
  EXPECT_GT(counts.preempted, 10);
}

// Elastic jobs change size while queued (SizeQueued before each decision and after the
// resizes), their plan class with their gang, and running ones are stopped to shrink or grow:
// the decisions by class and by order, taking each resize as a queue change, stay those of the
// full walk.
TEST(SelectByClass, DecidesAsTheFullWalkWithElasticJobs) {
  Counts counts;
  for (bool learn : {false, true}) {
    for (double cost_s : {0.0, 30.0}) {
      for (int max_gap_s : {20, 400}) {
        for (uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
          ExpectSameAsTheFullWalk(seed, cost_s, max_gap_s, learn, counts, /*checkpointed=*/false,
                                  /*mixed=*/false, /*many_changes=*/0, /*elastic=*/true);
          ASSERT_FALSE(HasFatalFailure()) << "seed " << seed << " cost " << cost_s << " gap "
                                          << max_gap_s << " learn " << learn;
        }
      }
    }
  }
  // Resized and preempted jobs writing their checkpoints hold their devices (reserved jobs),
  // some classes move with their progress, and many changes leave decisions to the full walk.
  for (uint32_t seed : {1u, 2u, 3u}) {
    ExpectSameAsTheFullWalk(seed, /*cost_s=*/0.0, /*max_gap_s=*/20, /*learn=*/true, counts,
                            /*checkpointed=*/true, /*mixed=*/false, /*many_changes=*/0,
                            /*elastic=*/true);
    ExpectSameAsTheFullWalk(seed, /*cost_s=*/30.0, /*max_gap_s=*/20, /*learn=*/false, counts,
                            /*checkpointed=*/false, /*mixed=*/true, /*many_changes=*/2,
                            /*elastic=*/true);
    ASSERT_FALSE(HasFatalFailure()) << "seed " << seed;
  }
  EXPECT_GT(counts.ordered, 20);
  EXPECT_LE(counts.ordered, counts.by_class);
  EXPECT_LT(counts.by_class, counts.full);
  EXPECT_GT(counts.class_only, 20);
  EXPECT_GT(counts.past_free, 10);
  EXPECT_GT(counts.preempted, 10);
  EXPECT_GT(counts.placed_smaller, 100);
}

}  // namespace
}  // namespace hetsched::sched
