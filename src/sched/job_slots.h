// JobSlots: dense JobIds for jobs that come and go, the ids Scheduler indexes its tables by.
// Ids of ended jobs are reused, so a daemon that runs for months holds tables for live jobs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/job.h"

namespace hetsched::sched {

// Not thread-safe. A released id is handed out again only after Scheduler::Finish or Drop of
// the job that held it (the caller releases after those). It keeps no names: the caller maps
// its jobs' names to ids (the daemon's job book does, one index of names for the process).
class JobSlots {
 public:
  // A new id: the one freed last when there is one, else the next never handed out.
  model::JobId Acquire();
  void Release(model::JobId id);
  // Room for `jobs` ids without growing (a daemon recovering that many live jobs).
  void Reserve(size_t jobs);

  size_t live() const { return capacity() - free_.size(); }
  // Ids handed out so far at most (the size of the scheduler's tables).
  size_t capacity() const { return held_.size(); }

 private:
  std::vector<bool> held_;  // by id
  std::vector<int32_t> free_;
};

}  // namespace hetsched::sched
