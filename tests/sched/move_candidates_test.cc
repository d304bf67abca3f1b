#include "sched/move_candidates.h"

#include <gtest/gtest.h>

#include <map>
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

// What the index answers, recomputed from every filed job.
struct Filed {
  MoveCandidates::Key key;
  std::vector<int32_t> gains;
  int32_t room = 0;
  int32_t surplus = 0;
};

bool AnyMayMoveByScan(const std::map<int32_t, Filed>& filed, const std::vector<int32_t>& free) {
  for (const auto& [id, f] : filed) {
    for (int32_t t : f.gains) {
      if (free[t] >= f.room) return true;
    }
  }
  return false;
}

TEST(MoveCandidates, AgreesWithAScanOnRandomSequences) {
  constexpr int32_t kTypes = 4;
  std::mt19937 rng(7);
  MoveCandidates index(kTypes);
  std::map<int32_t, Filed> filed;
  int answered_yes = 0, answered_no = 0;
  for (int step = 0; step < 20000; ++step) {
    const int32_t id = static_cast<int32_t>(rng() % 12);
    if (rng() % 3 == 0) {
      index.Remove(id);
      filed.erase(id);
    } else {
      Filed f;
      // Few distinct keys, so that equal policy keys fall back on the tie-breaks.
      f.key = {static_cast<double>(rng() % 10), static_cast<double>(rng() % 5),
               static_cast<int64_t>(step), id};
      for (int32_t t = 0; t < kTypes; ++t) {
        if (rng() % 6 == 0) f.gains.push_back(t);
      }
      f.room = static_cast<int32_t>(rng() % 8);
      f.surplus = rng() % 10 == 0 ? 1 : 0;
      index.Add(id, f.key, f.gains, f.room, f.surplus);
      filed[id] = f;
    }
    std::vector<int32_t> free(kTypes);
    for (auto& n : free) n = static_cast<int32_t>(rng() % 4);
    const bool expected = AnyMayMoveByScan(filed, free);
    ASSERT_EQ(index.AnyMayMove(free), expected) << "step " << step;
    (expected ? answered_yes : answered_no)++;
    ASSERT_EQ(index.size(), filed.size());
    const MoveCandidates::Key* last = index.LastKey();
    if (filed.empty()) {
      ASSERT_EQ(last, nullptr);
    } else {
      MoveCandidates::Key max = filed.begin()->second.key;
      bool exact = true;
      for (const auto& [i, f] : filed) {
        max = std::max(max, f.key);
        exact = exact && f.surplus == 0;
      }
      ASSERT_NE(last, nullptr);
      ASSERT_EQ(*last, max);
      ASSERT_EQ(index.Exact(), exact);
    }
  }
  // Both answers occurred often: the comparison covered both.
  EXPECT_GT(answered_yes, 1000);
  EXPECT_GT(answered_no, 1000);
}

TEST(MoveCandidates, OtherTypesThanItWasMadeForMayMove) {
  MoveCandidates index(2);
  EXPECT_FALSE(index.AnyMayMove({5, 5}));
  EXPECT_TRUE(index.AnyMayMove({5, 5, 5}));
}

// What the indexed run did.
struct Counts {
  int64_t full = 0, indexed = 0, preempted = 0;
};

void ExpectSame(const Decision& a, const Decision& b, int job, Counts& counts) {
  counts.preempted += static_cast<int64_t>(a.preempted.size());
  testing::ExpectSameDecision(a, b, job);
}

// Random arrivals, completions and full decisions (preempt interval 0) of a preemptive
// greedy-fastest policy, once with the index (scorer "speed") and once without (a locality
// scorer of weight 0 reads the state, so the core keeps no index, while every score is the
// same): every decision must be the same.
void ExpectSameDecisionsWithAndWithoutIndex(const std::string& policy, uint32_t seed, bool pile_up,
                                            Counts& counts) {
  const auto c =
      MakeCluster({{"fast", "cuda", 2, 4}, {"mid", "cuda", 2, 4}, {"slow", "cuda", 3, 4}});
  SchedulerOptions indexed;
  indexed.preempt_interval_s = 0;
  SchedulerOptions scanned = indexed;
  scanned.scorers = "speed,locality:0";
  CoreHarness a(c, policy, indexed), b(c, policy, scanned);
  ASSERT_NE(a.core().move_candidates(), nullptr);
  ASSERT_EQ(b.core().move_candidates(), nullptr);
  PreemptiveStrategy sa(a.core()), sb(b.core());
  std::mt19937 rng(seed);
  std::vector<int> live;
  double now = 0;
  for (int id = 0; id < 400; ++id) {
    now += static_cast<double>(rng() % 50);
    // Speeds that sometimes make a move worth it and sometimes not (stickiness 0.05).
    const double fast = 1.0 + (rng() % 4) * 0.5, mid = 1.0 + (rng() % 3) * 0.3;
    model::Job j = MakeJob(id, now, 0, {{"fast", fast}, {"mid", mid}, {"slow", 1.0}},
                           1 + static_cast<int>(rng() % 4));
    j.priority = static_cast<int>(rng() % 3);
    j.preemptible = rng() % 8 != 0;
    a.Admit(j, now);
    b.Admit(j, now);
    live.push_back(id);
    // Completions, each followed by a decision; or (`pile_up`) several, then one decision,
    // and arrivals left waiting for a later decision, so that walks meet queues longer than the
    // free devices.
    for (int k = static_cast<int>(rng() % 4); k > 0 && !live.empty(); --k) {
      const size_t at = rng() % live.size();
      if (a.record(live[at]).phase != JobPhase::kRunning) continue;
      a.Finish(sa, live[at], now);
      b.Finish(sb, live[at], now);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
      if (!pile_up) {
        ASSERT_NO_FATAL_FAILURE(ExpectSame(a.Decide(sa, now), b.Decide(sb, now), id, counts));
      }
    }
    if (pile_up && rng() % 3 == 0) continue;
    ASSERT_NO_FATAL_FAILURE(ExpectSame(a.Decide(sa, now), b.Decide(sb, now), id, counts));
  }
  EXPECT_EQ(sa.full_decisions(), sb.full_decisions());
  EXPECT_EQ(sb.indexed_decisions(), 0);
  counts.full += sa.full_decisions();
  counts.indexed += sa.indexed_decisions();
}

// Five seeds, each with and without piling up.
Counts CompareOnSeeds(const std::string& policy) {
  Counts counts;
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
    for (bool pile_up : {false, true}) {
      ExpectSameDecisionsWithAndWithoutIndex(policy, seed, pile_up, counts);
      if (::testing::Test::HasFatalFailure()) return counts;
    }
  }
  return counts;
}

TEST(MoveCandidates, FifoHetDecidesAsTheFullWalk) {
  const Counts counts = CompareOnSeeds("fifo-het");
  ASSERT_FALSE(HasFatalFailure());
  // In arrival order queued jobs come after running ones: every full decision took the
  // indexed walk, and it moved running jobs up (each move is a preemption).
  EXPECT_EQ(counts.indexed, counts.full);
  EXPECT_GT(counts.preempted, 5);
}

TEST(MoveCandidates, PriorityDecidesAsTheFullWalk) {
  const Counts counts = CompareOnSeeds("priority");
  ASSERT_FALSE(HasFatalFailure());
  // A higher priority arriving comes before running jobs: then the full walk.
  EXPECT_GT(counts.indexed, 0);
  EXPECT_LT(counts.indexed, counts.full);
  EXPECT_GT(counts.preempted, 20);
}

}  // namespace
}  // namespace hetsched::sched
