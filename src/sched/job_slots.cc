#include "sched/job_slots.h"

#include <cassert>

namespace hetsched::sched {

model::JobId JobSlots::Acquire() {
  int32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<int32_t>(held_.size());
    held_.push_back(false);
  }
  held_[id] = true;
  return model::JobId(id);
}

void JobSlots::Reserve(size_t jobs) { held_.reserve(jobs); }

void JobSlots::Release(model::JobId id) {
  assert(held_[id.value()] && "an id released twice");
  held_[id.value()] = false;
  free_.push_back(id.value());
}

}  // namespace hetsched::sched
