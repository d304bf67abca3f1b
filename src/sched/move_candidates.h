// MoveCandidates: the running jobs that a greedy-fastest policy's full decision
// (TypeChoice::kFastest, PreemptiveStrategy) might move to another device type, kept up to date
// as jobs start and stop. With it a full decision visits, of the running jobs, only those that
// gain somewhere, in the policy's order, and stops once no free type has room for any of them;
// when every queued job comes after all running ones in the policy's order, that is the full
// decision's walk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

namespace hetsched::sched {

class MoveCandidates {
 public:
  // SchedulerCore::QueueKey: policy key, arrival, submission order, id.
  using Key = std::tuple<double, double, int64_t, int32_t>;

  explicit MoveCandidates(int32_t types) : rooms_(types) {}

  // Running job `id`, at `key` in the policy's order: it would gain from moving to any type of
  // `gains` that has `room` free devices (0: a pinned job, whatever is free). `surplus`:
  // devices it holds beyond its gang. Replaces what was filed under `id`.
  void Add(int32_t id, const Key& key, std::vector<int32_t> gains, int32_t room, int32_t surplus);
  // Forgets `id`; nothing when it is not filed.
  void Remove(int32_t id);
  // Room for ids below `slots`, made when the scheduler admits a job rather than at its first
  // start: a decision that touches the next page of entries for the first time takes a page
  // fault (about 20 us on a VM, once per 57 ids).
  void Grow(size_t slots) {
    if (entries_.size() < slots) entries_.resize(slots);
  }

  // True when some filed job gains on a type with at least its room in `free` (by type), or
  // `free` covers other types than the index was made for.
  bool AnyMayMove(const std::vector<int32_t>& free) const;
  // The keys of the filed jobs that gain on some type, in the policy's order.
  const std::set<Key>& gainers() const { return gainers_; }
  // The filed job last in the policy's order; null when none is filed.
  const Key* LastKey() const { return keys_.empty() ? nullptr : &*keys_.rbegin(); }
  // Every filed job holds exactly its gang.
  bool Exact() const { return uneven_ == 0; }
  size_t size() const { return keys_.size(); }

 private:
  struct Entry {
    bool filed = false;
    Key key;
    std::vector<int32_t> gains;
    int32_t room = 0;
    int32_t surplus = 0;
  };
  std::vector<std::multiset<int32_t>> rooms_;  // by type: the rooms of the jobs gaining there
  std::set<Key> keys_;
  std::set<Key> gainers_;
  std::vector<Entry> entries_;  // by job id
  int64_t uneven_ = 0;          // filed jobs whose surplus is not 0
};

}  // namespace hetsched::sched
