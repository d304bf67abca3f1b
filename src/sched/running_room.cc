// PreemptiveStrategy::RunningRoom: the held devices the full walk finds when it reaches a job,
// from the movable running jobs' keys, listed job by job or counted by class.
#include <algorithm>
#include <utility>

#include "sched/preemptive_strategy.h"

namespace hetsched::sched {

PreemptiveStrategy::RunningRoom PreemptiveStrategy::RunningRoom::Of(
    const RunningKeys& running_keys, const SchedulerCore& core, const std::vector<int32_t>& held) {
  const int32_t types = static_cast<int32_t>(held.size());
  std::vector<SchedulerCore::QueueKey> keys;
  running_keys(keys);
  RunningRoom room(types);
  room.unlisted_after_.assign(types, 0);
  for (const auto& k : keys) {
    const JobRecord& r = core.record(std::get<3>(k));
    room.List(r.type.value(), k, static_cast<int32_t>(r.devices.size()));
  }
  room.Sort();
  // Every held device must belong to a keyed job, or the counts would be short.
  for (int32_t t = 0; t < types; ++t) room.ok_ = room.ok_ && room.after_[t][0] == held[t];
  return room;
}

PreemptiveStrategy::RunningRoom PreemptiveStrategy::RunningRoom::OfClasses(
    std::vector<Unlisted> classes, ListClass list, const std::vector<int32_t>& held) {
  const size_t types = held.size();
  RunningRoom room(static_cast<int32_t>(types));
  std::sort(classes.begin(), classes.end(),
            [](const Unlisted& a, const Unlisted& b) { return a.least < b.least; });
  room.unlisted_after_.assign((classes.size() + 1) * types, 0);
  for (size_t c = classes.size(); c > 0; --c) {
    for (size_t t = 0; t < types; ++t) {
      room.unlisted_after_[(c - 1) * types + t] =
          room.unlisted_after_[c * types + t] + classes[c - 1].devices[t];
    }
  }
  // Every held device must belong to a class counted, or the counts would be short.
  for (size_t t = 0; t < types; ++t) room.ok_ = room.ok_ && room.unlisted_after_[t] == held[t];
  room.unlisted_ = std::move(classes);
  room.list_ = std::move(list);
  return room;
}

void PreemptiveStrategy::RunningRoom::Sort() {
  for (size_t t = 0; t < keys_.size(); ++t) {
    std::vector<std::pair<SchedulerCore::QueueKey, int32_t>>& on_type = keys_[t];
    std::sort(on_type.begin(), on_type.end());
    std::vector<int64_t>& after = after_[t];
    after.assign(on_type.size() + 1, 0);
    for (size_t i = on_type.size(); i > 0; --i) after[i - 1] = after[i] + on_type[i - 1].second;
  }
  sorted_ = true;
}

int32_t PreemptiveStrategy::RunningRoom::HeldFrom(int32_t t, const SchedulerCore::QueueKey& k) {
  // A class whose least key is k or more holds all its devices from k on; the others are
  // listed, their jobs counted one by one.
  while (listed_ < unlisted_.size() && unlisted_[listed_].least < k) {
    list_(unlisted_[listed_].cls, *this);
    ++listed_;
  }
  if (!sorted_) Sort();
  const auto& on_type = keys_[t];
  const auto at = std::lower_bound(
      on_type.begin(), on_type.end(), k,
      [](const auto& e, const SchedulerCore::QueueKey& key) { return e.first < key; });
  const int64_t unlisted = unlisted_after_[listed_ * keys_.size() + static_cast<size_t>(t)];
  return static_cast<int32_t>(after_[t][static_cast<size_t>(at - on_type.begin())] + unlisted);
}

}  // namespace hetsched::sched
