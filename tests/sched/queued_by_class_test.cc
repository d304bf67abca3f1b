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

// The jobs filed as new share a rank, as under srpt-het-fair: their key is the rank plus a
// share of their arrival (not falling with arrival), whatever they were filed under.
struct NewJobs {
  double rank = 0;
  Key KeyOf(const Key& filed) const {
    return Key{rank + 0.5 * std::get<1>(filed), std::get<1>(filed), std::get<2>(filed),
               std::get<3>(filed)};
  }
};

struct Filed {
  int32_t cls;
  Key key;  // for a job filed as new, the one it was filed under
  bool as_new;
};

// Each class's visit against the map: the filed jobs in key order (those filed as new under
// their key by `new_jobs` now), and a visit stopped early.
void ExpectSameAsMap(QueuedByClass& queued, const std::map<int32_t, Filed>& jobs,
                     const NewJobs& new_jobs, int32_t classes) {
  const auto new_key = [&](const Key& filed) { return new_jobs.KeyOf(filed); };
  for (int32_t cls = 0; cls < classes; ++cls) {
    std::vector<Key> want;
    for (const auto& [id, filed] : jobs) {
      if (filed.cls == cls) want.push_back(filed.as_new ? new_jobs.KeyOf(filed.key) : filed.key);
    }
    std::sort(want.begin(), want.end());
    const int32_t count = cls < queued.classes() ? queued.count(cls) : 0;
    ASSERT_EQ(count, static_cast<int32_t>(want.size())) << "class " << cls;
    if (count == 0) continue;
    std::vector<Key> got;
    queued.VisitInOrder(cls, new_key, [&](const Key& key) {
      got.push_back(key);
      return true;
    });
    EXPECT_EQ(got, want) << "class " << cls;
    size_t visited = 0;
    queued.VisitInOrder(cls, new_key, [&](const Key&) { return ++visited < 2; });
    EXPECT_EQ(visited, std::min<size_t>(2, want.size()));
  }
}

// Random files (in and out of key order, a third of them as new jobs), refiles, removals,
// clears and new keys for all (a new rank for the new jobs, which keep their filed keys), with
// enough removals that the stale elements outnumber the live ones now and then.
TEST(QueuedByClass, VisitsEachClassInKeyOrderAsJobsComeAndGo) {
  std::mt19937 rng(5);
  constexpr int32_t kClasses = 4, kIds = 300;
  QueuedByClass queued;
  NewJobs new_jobs;
  std::map<int32_t, Filed> jobs;  // by id
  for (int step = 0; step < 4000; ++step) {
    const int32_t id = static_cast<int32_t>(rng() % kIds);
    const uint32_t what = rng() % 100;
    if (what < 55) {
      const int32_t cls = static_cast<int32_t>(rng() % kClasses);
      const bool as_new = rng() % 3 == 0;
      // A new job is filed under the key of the rank then, as the core files it.
      const Key key = as_new ? new_jobs.KeyOf(RandomKey(id, rng)) : RandomKey(id, rng);
      queued.Add(cls, key, as_new);
      jobs[id] = {cls, key, as_new};
    } else if (what < 97) {
      queued.Remove(id);
      jobs.erase(id);
    } else if (what < 99) {
      // New keys for every job (as after the core re-filed its queue).
      new_jobs.rank = static_cast<double>(rng() % 50);
      std::map<int32_t, Key> fresh;
      for (auto& [job, filed] : jobs) {
        if (!filed.as_new) filed.key = fresh[job] = RandomKey(job, rng);
      }
      queued.Rekey([&](int32_t job) { return fresh.at(job); });
    } else {
      queued.Clear();
      jobs.clear();
    }
    if (step % 50 == 0) {
      ASSERT_NO_FATAL_FAILURE(ExpectSameAsMap(queued, jobs, new_jobs, kClasses)) << "step " << step;
    }
  }
  ExpectSameAsMap(queued, jobs, new_jobs, kClasses);
}

}  // namespace
}  // namespace hetsched::sched
