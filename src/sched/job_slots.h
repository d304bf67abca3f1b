// JobSlots: the user's job names mapped to dense JobIds, the ids Scheduler indexes its tables
// by. Ids of ended jobs are reused, so a daemon that runs for months holds tables for live jobs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/job.h"

namespace hetsched::sched {

// Not thread-safe. A released id is handed out again only after Scheduler::Finish or Drop of
// the job that held it (the caller releases after those).
class JobSlots {
 public:
  // The id for `name`: a new one (a freed id when there is one), or nullopt when `name` holds
  // one already.
  std::optional<model::JobId> Acquire(std::string_view name);
  std::optional<model::JobId> Find(std::string_view name) const;
  // The name holding `id`; empty when the id is free.
  const std::string& NameOf(model::JobId id) const;
  void Release(model::JobId id);
  // Room for `jobs` names without rehashing (a daemon recovering that many live jobs).
  void Reserve(size_t jobs);

  size_t live() const { return by_name_.size(); }
  // Ids handed out so far at most (the size of the scheduler's tables).
  size_t capacity() const { return names_.size(); }

 private:
  std::unordered_map<std::string, int32_t> by_name_;
  std::vector<std::string> names_;  // by id; empty when free
  std::vector<int32_t> free_;
};

}  // namespace hetsched::sched
