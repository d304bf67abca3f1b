#include "sched/running_by_start.h"

#include <algorithm>

namespace hetsched::sched {

bool RunningByStart::Running(const SchedulerCore& core, int32_t id) {
  const size_t at = static_cast<size_t>(core.running_position(id));
  return core.record(id).phase == JobPhase::kRunning && at < core.running().size() &&
         core.running()[at] == id;
}

void RunningByStart::File(const JobRecord& r, int32_t id) {
  if (live_[id] >= 0 && live_at_[id] == r.run_start_s) return;
  live_[id] = next_serial_;
  live_at_[id] = r.run_start_s;
  entries_.push_back(Entry{r.run_start_s, next_serial_++, id});
}

void RunningByStart::Sync(SchedulerCore& core) {
  const std::vector<int32_t>& changes = core.running_changes();
  if (live_.size() < core.slots()) {
    live_.resize(core.slots(), -1);
    live_at_.resize(core.slots(), 0);
  }
  if (!filed_ || changes.size() > core.running().size()) {
    entries_.clear();
    head_ = 0;
    std::fill(live_.begin(), live_.end(), -1);
    for (int32_t id : core.running()) File(core.record(id), id);
    std::sort(entries_.begin(), entries_.end());
    filed_ = true;
  } else {
    const auto old_end = static_cast<std::ptrdiff_t>(entries_.size());
    // Each change read as the job is now: repeats file nothing twice.
    for (int32_t id : changes) {
      if (Running(core, id)) {
        File(core.record(id), id);
      } else {
        live_[id] = -1;
      }
    }
    // Jobs start at the decision's time, so the new entries come after the old ones unless
    // the driver's clock went back.
    const auto head = entries_.begin() + static_cast<std::ptrdiff_t>(head_);
    const auto mid = entries_.begin() + old_end;
    std::sort(mid, entries_.end());
    if (mid != head && mid != entries_.end() && *mid < *(mid - 1)) {
      std::inplace_merge(head, mid, entries_.end());
    }
  }
  core.ClearRunningChanges();
}

void RunningByStart::PastQuantum(const SchedulerCore& core, double now_s,
                                 std::vector<int32_t>& ids) {
  // InQuantum(start, now) is now - start < quantum: once it holds of a start, it holds of
  // every later one (a rounded difference does not grow as start grows).
  scratch_.clear();
  size_t at = head_;
  for (; at < entries_.size(); ++at) {
    const Entry& e = entries_[at];
    if (core.price().InQuantum(e.start_s, now_s)) break;
    if (live_[e.id] != e.serial) continue;
    scratch_.push_back(e);
    ids.push_back(e.id);
  }
  // The live entries visited close up to those not reached; the stale ones go.
  head_ = at - scratch_.size();
  std::copy(scratch_.begin(), scratch_.end(),
            entries_.begin() + static_cast<std::ptrdiff_t>(head_));
  if (head_ > 4096 && 2 * head_ > entries_.size()) {
    entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
}

}  // namespace hetsched::sched
