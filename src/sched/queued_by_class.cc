#include "sched/queued_by_class.h"

#include <iterator>

namespace hetsched::sched {

void QueuedByClass::Clear() {
  for (List& list : lists_) list = List{};
  cleared_at_ = next_serial_++;
}

void QueuedByClass::Add(int32_t cls, const Key& key, bool as_new) {
  const int32_t id = std::get<3>(key);
  Remove(id);
  if (static_cast<size_t>(id) >= entries_.size()) entries_.resize(id + 1);
  const int64_t serial = next_serial_++;
  entries_[id] = Entry{serial, cls, as_new};
  if (static_cast<size_t>(cls) >= lists_.size()) lists_.resize(cls + 1);
  Part& part = as_new ? lists_[cls].as_new : lists_[cls].own_key;
  const Filed added{key, serial};
  const bool in_order = part.sorted == part.filed.size() &&
                        (part.filed.empty() || (as_new ? ByArrival(part.filed.back(), added)
                                                       : part.filed.back() < added));
  part.filed.push_back(added);
  if (in_order) part.sorted = part.filed.size();
  ++part.live;
}

void QueuedByClass::Remove(int32_t id) {
  if (static_cast<size_t>(id) >= entries_.size() || entries_[id].serial <= cleared_at_) return;
  Entry& e = entries_[id];
  List& list = lists_[e.cls];
  --(e.as_new ? list.as_new : list.own_key).live;
  e = Entry{};
}

void QueuedByClass::Order(Part& part, bool as_new) {
  std::vector<Filed>& filed = part.filed;
  const auto live = [&](const Filed& f) { return Live(f); };
  if (static_cast<size_t>(part.live) * 2 < filed.size()) {
    // The live ones keep their order: those of the sorted part stay in front, in order.
    const auto sorted_end = filed.begin() + static_cast<std::ptrdiff_t>(part.sorted);
    part.sorted = static_cast<size_t>(std::count_if(filed.begin(), sorted_end, live));
    filed.erase(std::stable_partition(filed.begin(), filed.end(), live), filed.end());
  }
  if (part.sorted == filed.size()) return;
  const auto middle = filed.begin() + static_cast<std::ptrdiff_t>(part.sorted);
  if (as_new) {
    std::sort(middle, filed.end(), ByArrival);
    std::inplace_merge(filed.begin(), middle, filed.end(), ByArrival);
  } else {
    std::sort(middle, filed.end());
    std::inplace_merge(filed.begin(), middle, filed.end());
  }
  part.sorted = filed.size();
}

}  // namespace hetsched::sched
