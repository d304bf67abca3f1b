#include "sched/move_candidates.h"

#include <utility>

namespace hetsched::sched {

void MoveCandidates::Add(int32_t id, const Key& key, std::vector<int32_t> gains, int32_t room,
                         int32_t surplus) {
  Remove(id);
  if (static_cast<size_t>(id) >= entries_.size()) entries_.resize(id + 1);
  Entry& e = entries_[id];
  e.filed = true;
  e.key = key;
  e.gains = std::move(gains);
  e.room = room;
  e.surplus = surplus;
  for (int32_t t : e.gains) rooms_[t].insert(room);
  keys_.insert(key);
  if (!e.gains.empty()) gainers_.insert(key);
  if (surplus != 0) ++uneven_;
}

void MoveCandidates::Remove(int32_t id) {
  if (static_cast<size_t>(id) >= entries_.size() || !entries_[id].filed) return;
  Entry& e = entries_[id];
  for (int32_t t : e.gains) rooms_[t].erase(rooms_[t].find(e.room));
  keys_.erase(e.key);
  gainers_.erase(e.key);
  if (e.surplus != 0) --uneven_;
  e = Entry{};
}

bool MoveCandidates::AnyMayMove(const std::vector<int32_t>& free) const {
  if (free.size() != rooms_.size()) return true;
  for (size_t t = 0; t < rooms_.size(); ++t) {
    if (!rooms_[t].empty() && *rooms_[t].begin() <= free[t]) return true;
  }
  return false;
}

}  // namespace hetsched::sched
