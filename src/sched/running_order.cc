#include "sched/running_order.h"

#include <algorithm>
#include <functional>

namespace hetsched::sched {

void RunningOrder::Clear() {
  std::fill(held_.begin(), held_.end(), 0);
  std::fill(unplanned_held_.begin(), unplanned_held_.end(), 0);
  for (std::vector<Filed>& heap : heaps_) heap.clear();
  for (std::vector<Member>& members : members_) members.clear();
  std::fill(live_.begin(), live_.end(), 0);
  std::fill(count_.begin(), count_.end(), 0);
  std::fill(devices_.begin(), devices_.end(), 0);
  std::fill(in_quantum_count_.begin(), in_quantum_count_.end(), 0);
  std::fill(in_quantum_devices_.begin(), in_quantum_devices_.end(), 0);
  std::fill(in_quantum_held_.begin(), in_quantum_held_.end(), 0);
  std::fill(in_quantum_unplanned_held_.begin(), in_quantum_unplanned_held_.end(), 0);
  starts_.clear();
  starts_sorted_ = true;
  live_starts_ = 0;
  cleared_at_ = next_serial_++;
}

void RunningOrder::Add(int32_t id, int32_t cls, int32_t type, int32_t devices, double floor,
                       double start_s, const RunningKeyInputs& job) {
  Remove(id);
  if (static_cast<size_t>(id) >= entries_.size()) entries_.resize(id + 1);
  const int64_t serial = next_serial_++;
  entries_[id] = Entry{serial, cls, type, devices, -1, floor, start_s};
  held_[type] += devices;
  if (cls < 0) unplanned_held_[type] += devices;
  if (cls >= 0) {
    if (static_cast<size_t>(cls) >= heaps_.size()) {
      heaps_.resize(cls + 1);
      members_.resize(cls + 1);
      live_.resize(cls + 1, 0);
      count_.resize(heaps_.size() * types_, 0);
      devices_.resize(heaps_.size() * types_, 0);
      in_quantum_count_.resize(heaps_.size() * types_, 0);
      in_quantum_devices_.resize(heaps_.size() * types_, 0);
    }
    entries_[id].at = static_cast<int32_t>(members_[cls].size());
    members_[cls].push_back(Member{floor, job});
    members_[cls].back().job.id = id;
    heaps_[cls].push_back(Filed{floor, id, serial});
    std::push_heap(heaps_[cls].begin(), heaps_[cls].end(), std::greater<>());
    ++live_[cls];
    ++count_[static_cast<size_t>(cls) * types_ + type];
    devices_[static_cast<size_t>(cls) * types_ + type] += devices;
  }
  if (start_s >= 0) {
    const Started started{start_s, id, serial};
    if (!starts_.empty() && started < starts_.back()) starts_sorted_ = false;
    starts_.push_back(started);
    ++live_starts_;
    CountInQuantum(entries_[id], 1);
  }
}

void RunningOrder::CountInQuantum(const Entry& e, int32_t sign) {
  in_quantum_held_[e.type] += sign * e.devices;
  if (e.cls < 0) {
    in_quantum_unplanned_held_[e.type] += sign * e.devices;
    return;
  }
  in_quantum_count_[static_cast<size_t>(e.cls) * types_ + e.type] += sign;
  in_quantum_devices_[static_cast<size_t>(e.cls) * types_ + e.type] += sign * e.devices;
}

void RunningOrder::Remove(int32_t id) {
  if (static_cast<size_t>(id) >= entries_.size() || entries_[id].serial <= cleared_at_) return;
  Entry& e = entries_[id];
  held_[e.type] -= e.devices;
  if (e.cls < 0) unplanned_held_[e.type] -= e.devices;
  const bool started = e.start_s >= 0;
  const int32_t cls = e.cls;
  if (cls >= 0) {
    --count_[static_cast<size_t>(cls) * types_ + e.type];
    devices_[static_cast<size_t>(cls) * types_ + e.type] -= e.devices;
    // The class's last member takes its place.
    std::vector<Member>& members = members_[cls];
    members[e.at] = members.back();
    entries_[members[e.at].job.id].at = e.at;
    members.pop_back();
  }
  if (started) CountInQuantum(e, -1);
  e = Entry{};
  if (started) {
    --live_starts_;
    // Stale run starts are dropped once they outnumber the live ones.
    if (starts_.size() >= 64 && static_cast<size_t>(live_starts_) * 2 < starts_.size()) {
      starts_.erase(std::remove_if(starts_.begin(), starts_.end(),
                                   [&](const Started& s) { return !Live(s.id, s.serial); }),
                    starts_.end());
    }
  }
  if (cls >= 0) {
    --live_[cls];
    Compact(cls);
  }
}

void RunningOrder::Compact(int32_t cls) {
  std::vector<Filed>& heap = heaps_[cls];
  if (heap.size() < 64 || static_cast<size_t>(live_[cls]) * 2 >= heap.size()) return;
  heap.erase(std::remove_if(heap.begin(), heap.end(), [&](const Filed& f) { return !Live(f); }),
             heap.end());
  std::make_heap(heap.begin(), heap.end(), std::greater<>());
}

}  // namespace hetsched::sched
