#include "sched/job_slots.h"

#include <cassert>

namespace hetsched::sched {

std::optional<model::JobId> JobSlots::Acquire(std::string_view name) {
  assert(!name.empty());
  auto [it, inserted] = by_name_.try_emplace(std::string(name), -1);
  if (!inserted) return std::nullopt;
  int32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<int32_t>(names_.size());
    names_.emplace_back();
  }
  it->second = id;
  names_[id] = it->first;
  return model::JobId(id);
}

void JobSlots::Reserve(size_t jobs) {
  by_name_.reserve(jobs);
  names_.reserve(jobs);
}

std::optional<model::JobId> JobSlots::Find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return model::JobId(it->second);
}

const std::string& JobSlots::NameOf(model::JobId id) const { return names_[id.value()]; }

void JobSlots::Release(model::JobId id) {
  std::string& name = names_[id.value()];
  assert(!name.empty());
  by_name_.erase(name);
  name.clear();
  free_.push_back(id.value());
}

}  // namespace hetsched::sched
