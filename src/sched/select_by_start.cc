// PreemptiveStrategy::SelectByStart: the full walk of a time-slicing policy with fixed queued keys
// (las, las-het) over the jobs it can reach, without keying and sorting every queued and running
// job (sched/preemptive_strategy.h).
#include <algorithm>
#include <set>

#include "sched/preemptive_strategy.h"

namespace hetsched::sched {

using model::DeviceTypeId;

namespace {

// The walk's first stretch of the merged order; each next one twice as long. A steady decision
// hands out a few devices and stops within the first; a re-deal doubles its way up.
constexpr size_t kFirstStretch = 64;

}  // namespace

void PreemptiveStrategy::SelectByStart(double now_s, Pool& pool, std::vector<int32_t>& initial,
                                       std::vector<int32_t>& candidates) {
  ++by_start_decisions_;
  const ClusterState& state = core_.state();
  const int32_t types = state.type_count();
  pool = Pool{};
  pool.free.resize(types);
  pool.held.assign(types, 0);
  for (int32_t t = 0; t < types; ++t) pool.free[t] = state.FreeOfType(DeviceTypeId(t));
  // The running jobs OpenPool finds Movable: of those past their quantum, the preemptible ones
  // holding devices (without tenants nothing is reclaimed or moved inside its quantum).
  by_start_->Sync(core_);
  std::vector<int32_t>& past = past_quantum_;
  past.clear();
  by_start_->PastQuantum(core_, now_s, past);
  candidates.clear();
  running_keys_.clear();
  for (int32_t id : past) {
    if (!Movable(id, now_s)) continue;
    const JobRecord& r = core_.record(id);
    pool.held[r.type.value()] += static_cast<int32_t>(r.devices.size());
    running_keys_.push_back(core_.KeyOf(r, now_s));
    candidates.push_back(id);
  }
  // PreemptDisplaced visits them in the order of core_.running(), as the full walk does: read
  // off that list by a mark where they are many of it, else sorted by their places in it.
  const std::vector<int32_t>& running = core_.running();
  if (candidates.size() * 4 > running.size()) {
    if (movable_mark_.size() < core_.slots()) movable_mark_.resize(core_.slots(), 0);
    for (int32_t id : candidates) movable_mark_[id] = 1;
    candidates.clear();
    for (int32_t id : running) {
      if (movable_mark_[id] == 0) continue;
      movable_mark_[id] = 0;
      candidates.push_back(id);
    }
  } else {
    SortByRunningPosition(candidates);
  }
  std::sort(running_keys_.begin(), running_keys_.end());
  initial.resize(types);
  for (int32_t t = 0; t < types; ++t) {
    pool.total += pool.free[t] + pool.held[t];
    initial[t] = pool.free[t] + pool.held[t];
  }
  // The walk over the sorted keys of every queued and movable running job, stretch by stretch:
  // SelectInOrder keeps no state from one job to the next but the pool and what it selected
  // (no tenants, no plan, no head-of-line blocking here), and stops once the pool is spent.
  // The queued jobs' keys in the index are their keys now (queued_keys_fixed).
  const std::set<SchedulerCore::QueueKey>& queued = core_.sorted_queue();
  auto next_queued = queued.begin();
  auto next_running = running_keys_.cbegin();
  for (size_t stretch = kFirstStretch;
       pool.total > 0 && (next_queued != queued.end() || next_running != running_keys_.cend());
       stretch *= 2) {
    keys_.clear();
    while (keys_.size() < stretch) {
      const bool queued_left = next_queued != queued.end();
      const bool running_left = next_running != running_keys_.cend();
      if (queued_left && (!running_left || *next_queued < *next_running)) {
        keys_.push_back(*next_queued++);
      } else if (running_left) {
        keys_.push_back(*next_running++);
      } else {
        break;
      }
    }
    keys_sorted_ = true;
    SelectInOrder(now_s, pool, /*queued_only=*/false, /*planned=*/false);
  }
}

}  // namespace hetsched::sched
