// QueuedByClass: the queued jobs of a throughput-plan policy (srpt-het-fair) filed by plan class,
// each class's in the order of the core's queue keys (SchedulerCore::queue_key, the keys at time
// 0). A queued job's key falls with time by the same amount for every queued job while the size
// belief stays (Policy::Key's contract), so a class's order holds at any time: a full decision
// reads each class's count and least keys from the front of its list instead of keying every
// queued job. The jobs the core keys as new (SchedulerCore::keyed_as_new: one rank, arrival
// order) are filed apart by arrival, so that a belief refresh re-keys only the others.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include "sched/scheduler_core.h"

namespace hetsched::sched {

class QueuedByClass {
 public:
  using Key = SchedulerCore::QueueKey;

  // Forgets every job (in time proportional to the classes, not the jobs).
  void Clear();
  // Files queued job `id` (std::get<3>(key)) of class `cls` (>= 0) under `key`, among the jobs
  // keyed as new when `as_new`. Replaces what was filed under it. Cheapest in key order (as
  // after Clear, from the core's sorted queue).
  void Add(int32_t cls, const Key& key, bool as_new);
  // Forgets `id`; nothing when it is not filed.
  void Remove(int32_t id);

  // Classes with room in the tables (some may have no jobs).
  int32_t classes() const { return static_cast<int32_t>(lists_.size()); }
  // Filed jobs of class `cls`.
  int32_t count(int32_t cls) const { return lists_[cls].own_key.live + lists_[cls].as_new.live; }
  // Calls visit(key) for class `cls`'s jobs in ascending key until it returns false; the key of
  // a job filed as new is new_key(key it was filed under) (SchedulerCore::NewJobKey).
  template <typename NewKey, typename Visit>
  void VisitInOrder(int32_t cls, NewKey&& new_key, Visit&& visit);
  // Files every job not filed as new under its new key, key_of(id), as after the core re-filed
  // its queue: each class's list is re-sorted only where the new keys changed its order
  // (O(those jobs) otherwise). Those filed as new keep their (arrival) order.
  template <typename KeyOf>
  void Rekey(KeyOf&& key_of);

 private:
  // A list element; stale once its job's entry has another serial (removed, filed again).
  struct Filed {
    Key key;
    int64_t serial;
    bool operator<(const Filed& o) const { return key < o.key; }
  };
  // The jobs filed as new, by arrival, submission and id: their key order whatever the rank
  // they share (Policy::keys_by_rank).
  static bool ByArrival(const Filed& a, const Filed& b) {
    return std::tie(std::get<1>(a.key), std::get<2>(a.key), std::get<3>(a.key)) <
           std::tie(std::get<1>(b.key), std::get<2>(b.key), std::get<3>(b.key));
  }
  struct Part {
    std::vector<Filed> filed;
    size_t sorted = 0;  // filed[0, sorted) is in order; those after were added since
    int32_t live = 0;
  };
  struct List {
    Part own_key;  // in key order
    Part as_new;   // in arrival order (ByArrival)
  };
  struct Entry {
    int64_t serial = 0;  // filed when above cleared_at_
    int32_t cls = -1;
    bool as_new = false;
  };
  bool Live(const Filed& f) const {
    const size_t id = static_cast<size_t>(std::get<3>(f.key));
    return id < entries_.size() && entries_[id].serial == f.serial && f.serial > cleared_at_;
  }
  // Merges the elements added since into the order (key order, or ByArrival when `as_new`),
  // dropping the stale ones when they outnumber the live ones.
  void Order(Part& part, bool as_new);

  std::vector<List> lists_;     // by class
  std::vector<Entry> entries_;  // by job id
  int64_t next_serial_ = 1, cleared_at_ = 0;
};

template <typename NewKey, typename Visit>
void QueuedByClass::VisitInOrder(int32_t cls, NewKey&& new_key, Visit&& visit) {
  List& list = lists_[cls];
  Order(list.own_key, false);
  Order(list.as_new, true);
  // Both parts are in key order: merged, the least key first.
  auto own = list.own_key.filed.cbegin(), fresh = list.as_new.filed.cbegin();
  const auto own_end = list.own_key.filed.cend(), fresh_end = list.as_new.filed.cend();
  const auto skip_stale = [&](auto& it, auto end) {
    while (it != end && !Live(*it)) ++it;
  };
  skip_stale(own, own_end);
  skip_stale(fresh, fresh_end);
  Key fresh_key;
  if (fresh != fresh_end) fresh_key = new_key(fresh->key);
  while (own != own_end || fresh != fresh_end) {
    if (fresh == fresh_end || (own != own_end && own->key < fresh_key)) {
      if (!visit(own->key)) return;
      skip_stale(++own, own_end);
    } else {
      if (!visit(fresh_key)) return;
      skip_stale(++fresh, fresh_end);
      if (fresh != fresh_end) fresh_key = new_key(fresh->key);
    }
  }
}

template <typename KeyOf>
void QueuedByClass::Rekey(KeyOf&& key_of) {
  for (List& list : lists_) {
    Part& part = list.own_key;
    Order(part, false);
    std::vector<Filed>& filed = part.filed;
    filed.erase(
        std::remove_if(filed.begin(), filed.end(), [&](const Filed& f) { return !Live(f); }),
        filed.end());
    for (Filed& f : filed) f.key = key_of(std::get<3>(f.key));
    if (!std::is_sorted(filed.begin(), filed.end())) std::sort(filed.begin(), filed.end());
    part.sorted = filed.size();
  }
}

}  // namespace hetsched::sched
