#include "sched/scheduler_core.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "sched/core_harness.h"
#include "sched/test_cluster.h"

namespace hetsched::sched {
namespace {

using testing::CoreHarness;
using testing::MakeCluster;
using testing::NvJob;

// Teaches the core's belief that ten jobs without an estimate took `size_s` each.
void LearnSizes(SchedulerCore& core, double size_s) {
  for (int i = 0; i < 10; ++i) {
    JobRecord r;
    r.job = std::make_unique<model::Job>();
    r.ref_speed = 1;
    r.done_work = size_s;
    core.belief().Observe(r);
  }
}

// Queued ids in the queue index's order.
std::vector<int32_t> IndexOrder(const SchedulerCore& core) {
  std::vector<int32_t> ids;
  for (const auto& key : core.sorted_queue()) ids.push_back(std::get<3>(key));
  return ids;
}

// Every queued job is filed under its key now, the index is in key order, and each key is
// found by search (the index is a valid search tree).
void ExpectFiledByKey(const SchedulerCore& core) {
  std::vector<SchedulerCore::QueueKey> want;
  for (int32_t id : core.queue()) {
    EXPECT_EQ(core.queue_key(id), core.KeyOf(core.record(id), 0)) << "job " << id;
    EXPECT_EQ(core.sorted_queue().count(core.KeyOf(core.record(id), 0)), 1u) << "job " << id;
    want.push_back(core.KeyOf(core.record(id), 0));
  }
  std::sort(want.begin(), want.end());
  EXPECT_EQ(
      std::vector<SchedulerCore::QueueKey>(core.sorted_queue().begin(), core.sorted_queue().end()),
      want);
}

// Jobs 0, 2, 4 have no estimate, jobs 1, 3, 5 estimates of 10, 20, 30 s. Before anything
// completed the ones without an estimate rank first (least attained service); once jobs of
// 1000 s were seen they rank behind the estimated ones: the refresh moves the order.
TEST(SchedulerCore, RefileAfterARefreshThatMovesTheOrder) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  CoreHarness h(c, "default");
  for (int id = 0; id < 6; ++id) h.Admit(NvJob(id, id, 1, id % 2 ? 10.0 * (id + 1) / 2 : 0), id);
  h.core().BeginDecision(5);
  EXPECT_EQ(h.core().queue_refiles(), 0);
  EXPECT_EQ(IndexOrder(h.core()), (std::vector<int32_t>{0, 2, 4, 1, 3, 5}));

  LearnSizes(h.core(), 1000);
  h.core().BeginDecision(400);  // a preempt interval (300 s) later: the belief is refreshed
  EXPECT_EQ(h.core().queue_refiles(), 1);
  // Jobs leave and join the queue before the index is next read.
  h.core().Dequeue(3);
  h.Admit(NvJob(6, 6, 1, 5), 400);
  h.Admit(NvJob(7, 7), 400);
  EXPECT_EQ(IndexOrder(h.core()), (std::vector<int32_t>{6, 1, 5, 0, 2, 4, 7}));
  ExpectFiledByKey(h.core());
  // Taking jobs off the queue finds them under their new keys.
  h.core().Dequeue(0);
  h.core().Dequeue(7);
  EXPECT_EQ(IndexOrder(h.core()), (std::vector<int32_t>{6, 1, 5, 2, 4}));
  ExpectFiledByKey(h.core());
}

// Jobs without an estimate and no progress all rank by the sizes table at 0: a refresh moves
// their keys alike and the order holds, under new keys.
TEST(SchedulerCore, RefileAfterARefreshThatKeepsTheOrder) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  CoreHarness h(c, "default");
  for (int id = 0; id < 5; ++id) h.Admit(NvJob(id, 4 - id), 4);
  h.core().BeginDecision(4);
  const std::vector<int32_t> before = IndexOrder(h.core());
  EXPECT_EQ(before, (std::vector<int32_t>{4, 3, 2, 1, 0}));
  const SchedulerCore::QueueKey old_key = h.core().queue_key(2);

  LearnSizes(h.core(), 1000);
  h.core().BeginDecision(400);
  EXPECT_EQ(h.core().queue_refiles(), 1);
  EXPECT_NE(h.core().queue_key(2), old_key);
  h.core().Dequeue(2);  // before the index is next read
  EXPECT_EQ(IndexOrder(h.core()), (std::vector<int32_t>{4, 3, 1, 0}));
  ExpectFiledByKey(h.core());
  h.core().Dequeue(4);
  EXPECT_EQ(IndexOrder(h.core()), (std::vector<int32_t>{3, 1, 0}));
}

// Dequeue erases a job's own entry of the index, which SortQueue re-files under new keys: jobs
// queued, taken off and queued again at random, across refreshes that move the order (jobs with
// and without estimates, sizes learnt ever larger), the index read now and then (a stale index
// is re-sorted when read, its entries then hold other jobs).
TEST(SchedulerCore, TakingJobsOffFindsTheirEntriesAcrossRefiles) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  CoreHarness h(c, "default");
  std::mt19937 rng(11);
  std::vector<int32_t> off;  // admitted, taken off the queue
  int next_id = 0;
  double now = 0;
  int refiles_read = 0;
  for (int step = 0; step < 600; ++step) {
    const int op = static_cast<int>(rng() % 8);
    if (op < 3) {
      h.Admit(NvJob(next_id, now, 1, rng() % 2 ? 5.0 + static_cast<double>(rng() % 50) : 0), now);
      ++next_id;
    } else if (op < 5 && !h.core().queue().empty()) {
      const int32_t id = h.core().queue()[rng() % h.core().queue().size()];
      h.core().Dequeue(id);
      off.push_back(id);
    } else if (op == 5 && !off.empty()) {
      const size_t k = rng() % off.size();
      h.core().Enqueue(off[k], now);
      off.erase(off.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (op == 6) {
      LearnSizes(h.core(), 10.0 * (step + 1));
      now += 400;  // past the preempt interval: the belief is refreshed
      h.core().BeginDecision(now);
    } else {
      if (h.core().queue_refiles() > 0) ++refiles_read;
      ExpectFiledByKey(h.core());
      if (HasFailure()) FAIL() << "step " << step;
    }
  }
  ExpectFiledByKey(h.core());
  EXPECT_GT(h.core().queue_refiles(), 10);
  EXPECT_GT(refiles_read, 10);
}

// The same bits: a key read from the queue equals a fresh one, rounding and sign of zero
// included.
bool SameBits(const SchedulerCore::QueueKey& a, const SchedulerCore::QueueKey& b) {
  return std::bit_cast<uint64_t>(std::get<0>(a)) == std::bit_cast<uint64_t>(std::get<0>(b)) &&
         std::bit_cast<uint64_t>(std::get<1>(a)) == std::bit_cast<uint64_t>(std::get<1>(b)) &&
         std::get<2>(a) == std::get<2>(b) && std::get<3>(a) == std::get<3>(b);
}

// A belief refresh re-keys only the queued jobs with a key of their own (estimated, or with
// work done); those that never ran share a rank. Every queued job's key, read from the queue
// and from the index, must be the one KeyOf computes afresh, bit for bit: jobs with and without
// estimates queued, taken off, given work done (preempted) and queued again, across refreshes
// of sizes learnt ever larger, under aging (srpt-het-fair) and without (srpt-het).
TEST(SchedulerCore, KeysOfJobsThatNeverRanAreFreshAfterRefreshes) {
  const auto c = MakeCluster({{"nv", "cuda", 1, 1}});
  for (const char* policy : {"default", "srpt-het"}) {
    CoreHarness h(c, policy);
    std::mt19937 rng(7);
    int next_id = 0;
    double now = 0;
    int64_t checked_new = 0, checked_own = 0;
    for (int step = 0; step < 400; ++step) {
      const int op = static_cast<int>(rng() % 6);
      if (op < 3) {
        h.Admit(NvJob(next_id, now, 1, rng() % 3 ? 0 : 5.0 + static_cast<double>(rng() % 50)), now);
        ++next_id;
      } else if (op == 3 && !h.core().queue().empty()) {
        // Preempted: queued again with the work it did.
        const int32_t id = h.core().queue()[rng() % h.core().queue().size()];
        h.core().Dequeue(id);
        h.core().record(id).done_work = 0.37 * static_cast<double>(1 + rng() % 40);
        h.core().Enqueue(id, now);
      } else if (op == 4) {
        LearnSizes(h.core(), 3.0 * (step + 1) + 0.1);
        now += 400;  // past the preempt interval: the belief is refreshed
        h.core().BeginDecision(now);
      } else {
        for (int32_t id : h.core().queue()) {
          const SchedulerCore::QueueKey fresh = h.core().KeyOf(h.core().record(id), 0);
          ASSERT_TRUE(SameBits(h.core().queue_key(id), fresh))
              << policy << ": job " << id << " at step " << step;
          ++(h.core().keyed_as_new(id) ? checked_new : checked_own);
        }
        for (const auto& key : h.core().sorted_queue()) {
          ASSERT_TRUE(SameBits(key, h.core().KeyOf(h.core().record(std::get<3>(key)), 0)))
              << policy << ": job " << std::get<3>(key) << " at step " << step;
        }
      }
    }
    EXPECT_GT(h.core().queue_refiles(), 10) << policy;
    EXPECT_GT(checked_new, 1000) << policy;
    EXPECT_GT(checked_own, 1000) << policy;
  }
}

}  // namespace
}  // namespace hetsched::sched
