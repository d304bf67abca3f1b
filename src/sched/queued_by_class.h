// QueuedByClass: the queued jobs of a throughput-plan policy (srpt-het-fair) filed by plan class,
// each class's in the order of the core's queue keys (SchedulerCore::queue_key, the keys at time
// 0). A queued job's key falls with time by the same amount for every queued job while the size
// belief stays (Policy::Key's contract), so a class's order holds at any time: a full decision
// reads each class's count and least keys from the front of its list instead of keying every
// queued job.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sched/scheduler_core.h"

namespace hetsched::sched {

class QueuedByClass {
 public:
  using Key = SchedulerCore::QueueKey;

  // Forgets every job (in time proportional to the classes, not the jobs).
  void Clear();
  // Files queued job `id` (std::get<3>(key)) of class `cls` (>= 0) under `key`. Replaces what
  // was filed under it. Cheapest in key order (as after Clear, from the core's sorted queue).
  void Add(int32_t cls, const Key& key);
  // Forgets `id`; nothing when it is not filed.
  void Remove(int32_t id);

  // Classes with room in the tables (some may have no jobs).
  int32_t classes() const { return static_cast<int32_t>(lists_.size()); }
  // Filed jobs of class `cls`.
  int32_t count(int32_t cls) const { return lists_[cls].live; }
  // Calls visit(key) for class `cls`'s jobs in ascending key until it returns false.
  template <typename Visit>
  void VisitInOrder(int32_t cls, Visit&& visit);
  // Files every job under its new key, key_of(id), as after the core re-filed its queue: each
  // class's list is re-sorted only where the new keys changed its order (O(jobs) otherwise).
  template <typename KeyOf>
  void Rekey(KeyOf&& key_of);

 private:
  // A list element; stale once its job's entry has another serial (removed, filed again).
  struct Filed {
    Key key;
    int64_t serial;
    bool operator<(const Filed& o) const { return key < o.key; }
  };
  struct List {
    std::vector<Filed> filed;
    size_t sorted = 0;  // filed[0, sorted) is in key order; those after were added since
    int32_t live = 0;
  };
  struct Entry {
    int64_t serial = 0;  // filed when above cleared_at_
    int32_t cls = -1;
  };
  bool Live(const Filed& f) const {
    const size_t id = static_cast<size_t>(std::get<3>(f.key));
    return id < entries_.size() && entries_[id].serial == f.serial && f.serial > cleared_at_;
  }
  // Merges the elements added since into the order, dropping the stale ones when they
  // outnumber the live ones.
  void Order(List& list);

  std::vector<List> lists_;     // by class
  std::vector<Entry> entries_;  // by job id
  int64_t next_serial_ = 1, cleared_at_ = 0;
};

template <typename Visit>
void QueuedByClass::VisitInOrder(int32_t cls, Visit&& visit) {
  List& list = lists_[cls];
  Order(list);
  for (const Filed& f : list.filed) {
    if (Live(f) && !visit(f.key)) return;
  }
}

template <typename KeyOf>
void QueuedByClass::Rekey(KeyOf&& key_of) {
  for (List& list : lists_) {
    Order(list);
    std::vector<Filed>& filed = list.filed;
    filed.erase(
        std::remove_if(filed.begin(), filed.end(), [&](const Filed& f) { return !Live(f); }),
        filed.end());
    for (Filed& f : filed) f.key = key_of(std::get<3>(f.key));
    if (!std::is_sorted(filed.begin(), filed.end())) std::sort(filed.begin(), filed.end());
    list.sorted = filed.size();
  }
}

}  // namespace hetsched::sched
