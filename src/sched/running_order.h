// RunningOrder: the preemptible running jobs of a throughput-plan policy (srpt-het-fair) filed by
// plan class, each with a floor under its policy key at every time (Policy::KeyFloor: for
// srpt-het-fair its aging term, fixed by its arrival). A full decision needs, of the running
// jobs it may move, only how many each class has on each type and each class's least key
// (where the class's LP row goes, ThroughputPlan::SolveByClass); visiting a class's jobs by
// floor, it evaluates the keys of those whose floor lies under the least key found, not of
// every running job. Of the jobs it keeps (inside their quantum) it needs only how many each
// class has on each type, counted here as jobs come, go and pass their quantum.
// Each filed job's key inputs (RunningKeyInputs, copied from its record when filed) sit in one
// array per class, so that a pass over a class (VisitAll) reads that array alone: neither a
// record nor an entry by job id per job (two cache misses each, half of a steady full
// decision at 80,000 running jobs).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

#include "sched/job_record.h"

namespace hetsched::sched {

class RunningOrder {
 public:
  explicit RunningOrder(int32_t types)
      : types_(types),
        held_(types, 0),
        unplanned_held_(types, 0),
        in_quantum_held_(types, 0),
        in_quantum_unplanned_held_(types, 0) {}

  // Forgets every job (in time proportional to the classes, not the jobs).
  void Clear();
  // Files running job `id`: of plan class `cls` (-1: planned nowhere), on `type`, holding
  // `devices`, `floor` under its key (less the policy's drift); `start_s`: its run start when it
  // may still be inside its quantum (counted in the in_quantum_ tables until ForgetPastQuantum
  // finds it past), else negative; `job`: its key inputs (job.id is `id`), visited with it.
  // Replaces what was filed under `id`.
  void Add(int32_t id, int32_t cls, int32_t type, int32_t devices, double floor, double start_s,
           const RunningKeyInputs& job);
  // Forgets `id`; nothing when it is not filed.
  void Remove(int32_t id);

  // Devices the filed jobs hold on type t; of them, those of jobs planned nowhere (class -1).
  int32_t held(int32_t t) const { return held_[t]; }
  int32_t unplanned_held(int32_t t) const { return unplanned_held_[t]; }
  // Classes with room in the tables (some may have no jobs).
  int32_t classes() const { return static_cast<int32_t>(heaps_.size()); }
  // Filed jobs of class `cls` on type t, and the devices they hold.
  int32_t count(int32_t cls, int32_t t) const {
    return count_[static_cast<size_t>(cls) * types_ + t];
  }
  int32_t devices(int32_t cls, int32_t t) const {
    return devices_[static_cast<size_t>(cls) * types_ + t];
  }
  // What was filed of `id`.
  int32_t class_of(int32_t id) const { return entries_[id].cls; }
  int32_t type_of(int32_t id) const { return entries_[id].type; }
  int32_t devices_of(int32_t id) const { return entries_[id].devices; }
  // Of the filed jobs still counted inside their quantum (filed with a run start that no
  // ForgetPastQuantum found past it): those of class `cls` on type t and the devices they
  // hold; by type, the devices of all of them, and of those planned nowhere. Kept as jobs are
  // filed, removed and found past their quantum, so that a full decision reads the jobs it
  // keeps by count instead of visiting each.
  int32_t in_quantum_count(int32_t cls, int32_t t) const {
    return in_quantum_count_[static_cast<size_t>(cls) * types_ + t];
  }
  int32_t in_quantum_devices(int32_t cls, int32_t t) const {
    return in_quantum_devices_[static_cast<size_t>(cls) * types_ + t];
  }
  int32_t in_quantum_held(int32_t t) const { return in_quantum_held_[t]; }
  int32_t in_quantum_unplanned_held(int32_t t) const { return in_quantum_unplanned_held_[t]; }
  // Forgets the run starts for which in_quantum(start) is false (past their quantum for good),
  // taking their jobs out of the in_quantum_ tables. in_quantum must hold of every start later
  // than one it holds of (the jobs inside their quantum are the latest started): the starts are
  // walked from the earliest, and only those past are visited.
  template <typename InQuantum>
  void ForgetPastQuantum(InQuantum&& in_quantum);

  // Calls visit(floor, job) (job: its RunningKeyInputs) for class `cls`'s jobs in ascending
  // floor (ties by id) until it returns false.
  template <typename Visit>
  void VisitByFloor(int32_t cls, Visit&& visit) const;
  // Calls visit(floor, job) for each of class `cls`'s jobs, in no particular order.
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
    int32_t at = -1;  // its place in members_[cls] (cls >= 0)
    double floor = 0, start_s = -1;
  };
  // A filed job of a class: its floor and key inputs.
  struct Member {
    double floor;
    RunningKeyInputs job;
  };
  // A run start: an element of starts_, stale as a heap element is.
  struct Started {
    double start_s;
    int32_t id;
    int64_t serial;
    bool operator<(const Started& o) const {
      return start_s != o.start_s ? start_s < o.start_s : id < o.id;
    }
  };
  bool Live(int32_t id, int64_t serial) const {
    return static_cast<size_t>(id) < entries_.size() && entries_[id].serial == serial &&
           serial > cleared_at_;
  }
  bool Live(const Filed& f) const { return Live(f.id, f.serial); }
  // Drops class `cls`'s stale elements when they outnumber the live ones.
  void Compact(int32_t cls);
  // Adds (sign 1) or takes out (-1) filed job `e` in the in_quantum_ tables.
  void CountInQuantum(const Entry& e, int32_t sign);

  const int32_t types_;
  std::vector<int32_t> held_, unplanned_held_;  // by type
  std::vector<std::vector<Filed>> heaps_;       // by class: min-heaps by floor
  std::vector<std::vector<Member>> members_;    // by class: its live jobs, unordered
  std::vector<int32_t> live_;                   // by class: live elements of its heap
  std::vector<int32_t> count_, devices_;        // classes x types
  // The jobs counted inside their quantum: classes x types, and by type.
  std::vector<int32_t> in_quantum_count_, in_quantum_devices_;
  std::vector<int32_t> in_quantum_held_, in_quantum_unplanned_held_;
  // Run starts in a plain array, walked from its end at each full decision (tens of thousands
  // of them at scale: contiguous, not a tree's scattered nodes), in (start, id) order while
  // starts_sorted_; stale ones stay until they outnumber the live ones or fall past the
  // quantum.
  std::vector<Started> starts_;
  bool starts_sorted_ = true;
  int32_t live_starts_ = 0;
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
    if (Live(heap[i])) {
      const Member& m = members_[cls][entries_[heap[i].id].at];
      if (!visit(m.floor, m.job)) return;
    }
    for (size_t child : {2 * i + 1, 2 * i + 2}) {
      if (child < heap.size()) next.push(child);
    }
  }
}

template <typename InQuantum>
void RunningOrder::ForgetPastQuantum(InQuantum&& in_quantum) {
  if (!starts_sorted_) {
    std::sort(starts_.begin(), starts_.end());
    starts_sorted_ = true;
  }
  size_t past = 0;
  for (; past < starts_.size() && !in_quantum(starts_[past].start_s); ++past) {
    if (!Live(starts_[past].id, starts_[past].serial)) continue;
    Entry& e = entries_[starts_[past].id];
    CountInQuantum(e, -1);
    e.start_s = -1;  // Remove then has no start to forget
    --live_starts_;
  }
  starts_.erase(starts_.begin(), starts_.begin() + static_cast<std::ptrdiff_t>(past));
}

template <typename Visit>
void RunningOrder::VisitAll(int32_t cls, Visit&& visit) const {
  for (const Member& m : members_[cls]) visit(m.floor, m.job);
}

}  // namespace hetsched::sched
