// RunningOrder: the preemptible running jobs of a throughput-plan policy (srpt-het-fair) filed by
// plan class, each with a floor under its policy key at every time (Policy::KeyFloor: for
// srpt-het-fair its aging term, fixed by its arrival). A full decision needs, of the running
// jobs it may move, only how many each class has on each type and each class's least key
// (where the class's LP row goes, ThroughputPlan::SolveByClass); visiting a class's jobs by
// floor, it evaluates the keys of those whose floor lies under the least key found, not of
// every running job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <set>
#include <utility>
#include <vector>

namespace hetsched::sched {

class RunningOrder {
 public:
  explicit RunningOrder(int32_t types) : types_(types), held_(types, 0) {}

  // Forgets every job (in time proportional to the classes, not the jobs).
  void Clear();
  // Files running job `id`: of plan class `cls` (-1: planned nowhere), on `type`, holding
  // `devices`, `floor` under its key (less the policy's drift); `start_s`: its run start when it
  // may still be inside its quantum (listed in starts()), else negative. Replaces what was filed
  // under `id`.
  void Add(int32_t id, int32_t cls, int32_t type, int32_t devices, double floor, double start_s);
  // Forgets `id`; nothing when it is not filed.
  void Remove(int32_t id);

  // Devices the filed jobs hold on type t.
  int32_t held(int32_t t) const { return held_[t]; }
  // Classes with room in the tables (some may have no jobs).
  int32_t classes() const { return static_cast<int32_t>(heaps_.size()); }
  // Filed jobs of class `cls` on type t.
  int32_t count(int32_t cls, int32_t t) const {
    return count_[static_cast<size_t>(cls) * types_ + t];
  }
  // What was filed of `id`.
  int32_t class_of(int32_t id) const { return entries_[id].cls; }
  int32_t type_of(int32_t id) const { return entries_[id].type; }
  // The jobs filed with a run start, by start and id; the caller may erase those past their
  // quantum.
  std::set<std::pair<double, int32_t>>& starts() { return starts_; }

  // Calls visit(floor, id) for class `cls`'s jobs in ascending floor (ties by id) until it
  // returns false.
  template <typename Visit>
  void VisitByFloor(int32_t cls, Visit&& visit) const;
  // Calls visit(floor, id) for each of class `cls`'s jobs, in no particular order.
  template <typename Visit>
  void VisitAll(int32_t cls, Visit&& visit) const;

 private:
  // A heap element; stale once its job's entry has another serial (removed, filed again).
  struct Filed {
    double floor;
    int32_t id;
    int64_t serial;
    bool operator>(const Filed& o) const { return floor != o.floor ? floor > o.floor : id > o.id; }
  };
  struct Entry {
    int64_t serial = 0;  // filed when above cleared_at_
    int32_t cls = -1, type = -1, devices = 0;
    double floor = 0, start_s = -1;
  };
  bool Live(const Filed& f) const {
    return static_cast<size_t>(f.id) < entries_.size() && entries_[f.id].serial == f.serial &&
           f.serial > cleared_at_;
  }
  // Drops class `cls`'s stale elements when they outnumber the live ones.
  void Compact(int32_t cls);

  const int32_t types_;
  std::vector<int32_t> held_;              // by type
  std::vector<std::vector<Filed>> heaps_;  // by class: min-heaps by floor
  std::vector<int32_t> live_;              // by class: live elements of its heap
  std::vector<int32_t> count_;             // classes x types
  std::set<std::pair<double, int32_t>> starts_;
  std::vector<Entry> entries_;  // by job id
  int64_t next_serial_ = 1, cleared_at_ = 0;
};

template <typename Visit>
void RunningOrder::VisitByFloor(int32_t cls, Visit&& visit) const {
  const std::vector<Filed>& heap = heaps_[cls];
  // The heap's elements in order without popping: a small heap of the positions whose parent
  // was visited.
  const auto later = [&](size_t a, size_t b) { return heap[a] > heap[b]; };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> next(later);
  if (!heap.empty()) next.push(0);
  while (!next.empty()) {
    const size_t i = next.top();
    next.pop();
    if (Live(heap[i]) && !visit(heap[i].floor, heap[i].id)) return;
    for (size_t child : {2 * i + 1, 2 * i + 2}) {
      if (child < heap.size()) next.push(child);
    }
  }
}

template <typename Visit>
void RunningOrder::VisitAll(int32_t cls, Visit&& visit) const {
  for (const Filed& f : heaps_[cls]) {
    if (Live(f)) visit(f.floor, f.id);
  }
}

}  // namespace hetsched::sched
