#include "sched/queued_by_class.h"

#include <iterator>

namespace hetsched::sched {

void QueuedByClass::Clear() {
  for (List& list : lists_) list = List{};
  cleared_at_ = next_serial_++;
}

void QueuedByClass::Add(int32_t cls, const Key& key) {
  const int32_t id = std::get<3>(key);
  Remove(id);
  if (static_cast<size_t>(id) >= entries_.size()) entries_.resize(id + 1);
  const int64_t serial = next_serial_++;
  entries_[id] = Entry{serial, cls};
  if (static_cast<size_t>(cls) >= lists_.size()) lists_.resize(cls + 1);
  List& list = lists_[cls];
  const bool in_order =
      list.sorted == list.filed.size() && (list.filed.empty() || list.filed.back().key < key);
  list.filed.push_back(Filed{key, serial});
  if (in_order) list.sorted = list.filed.size();
  ++list.live;
}

void QueuedByClass::Remove(int32_t id) {
  if (static_cast<size_t>(id) >= entries_.size() || entries_[id].serial <= cleared_at_) return;
  Entry& e = entries_[id];
  --lists_[e.cls].live;
  e = Entry{};
}

void QueuedByClass::Order(List& list) {
  std::vector<Filed>& filed = list.filed;
  const auto live = [&](const Filed& f) { return Live(f); };
  if (static_cast<size_t>(list.live) * 2 < filed.size()) {
    // The live ones keep their order: those of the sorted part stay in front, in order.
    const auto sorted_end = filed.begin() + static_cast<std::ptrdiff_t>(list.sorted);
    list.sorted = static_cast<size_t>(std::count_if(filed.begin(), sorted_end, live));
    filed.erase(std::stable_partition(filed.begin(), filed.end(), live), filed.end());
  }
  if (list.sorted == filed.size()) return;
  const auto middle = filed.begin() + static_cast<std::ptrdiff_t>(list.sorted);
  std::sort(middle, filed.end());
  std::inplace_merge(filed.begin(), middle, filed.end());
  list.sorted = filed.size();
}

}  // namespace hetsched::sched
