// QueuedByClass's lists as queued jobs come and go and take new keys, against a plain map.
#include "sched/queued_by_class.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

namespace hetsched::sched {
namespace {

using Key = QueuedByClass::Key;

// A key with a few repeated first parts (ties broken by the rest, as the core's keys are).
Key RandomKey(int32_t id, std::mt19937& rng) {
  return Key{static_cast<double>(rng() % 50), static_cast<double>(rng() % 5),
             static_cast<int64_t>(rng() % 1000), id};
}

// Each class's visit against the map: the filed jobs in key order, and a visit stopped early.
void ExpectSameAsMap(QueuedByClass& queued, const std::map<int32_t, std::pair<int32_t, Key>>& jobs,
                     int32_t classes) {
  for (int32_t cls = 0; cls < classes; ++cls) {
    std::vector<Key> want;
    for (const auto& [id, filed] : jobs) {
      if (filed.first == cls) want.push_back(filed.second);
    }
    std::sort(want.begin(), want.end());
    const int32_t count = cls < queued.classes() ? queued.count(cls) : 0;
    ASSERT_EQ(count, static_cast<int32_t>(want.size())) << "class " << cls;
    if (count == 0) continue;
    std::vector<Key> got;
    queued.VisitInOrder(cls, [&](const Key& key) {
      got.push_back(key);
      return true;
    });
    EXPECT_EQ(got, want) << "class " << cls;
    size_t visited = 0;
    queued.VisitInOrder(cls, [&](const Key&) { return ++visited < 2; });
    EXPECT_EQ(visited, std::min<size_t>(2, want.size()));
  }
}

// Random files (in and out of key order), refiles, removals, clears and new keys for all, with
// enough removals that the stale elements outnumber the live ones now and then.
TEST(QueuedByClass, VisitsEachClassInKeyOrderAsJobsComeAndGo) {
  std::mt19937 rng(5);
  constexpr int32_t kClasses = 4, kIds = 300;
  QueuedByClass queued;
  std::map<int32_t, std::pair<int32_t, Key>> jobs;  // id -> class, key
  for (int step = 0; step < 4000; ++step) {
    const int32_t id = static_cast<int32_t>(rng() % kIds);
    const uint32_t what = rng() % 100;
    if (what < 55) {
      const int32_t cls = static_cast<int32_t>(rng() % kClasses);
      const Key key = RandomKey(id, rng);
      queued.Add(cls, key);
      jobs[id] = {cls, key};
    } else if (what < 97) {
      queued.Remove(id);
      jobs.erase(id);
    } else if (what < 99) {
      // New keys for every job (as after the core re-filed its queue).
      std::map<int32_t, Key> fresh;
      for (auto& [job, filed] : jobs) filed.second = fresh[job] = RandomKey(job, rng);
      queued.Rekey([&](int32_t job) { return fresh.at(job); });
    } else {
      queued.Clear();
      jobs.clear();
    }
    if (step % 50 == 0) {
      ASSERT_NO_FATAL_FAILURE(ExpectSameAsMap(queued, jobs, kClasses)) << "step " << step;
    }
  }
  ExpectSameAsMap(queued, jobs, kClasses);
}

}  // namespace
}  // namespace hetsched::sched
