// RunningByStart: the running jobs in the order their runs started, kept from the core's running
// changes. A time-slicing policy's full decision may move only the jobs past their quantum,
// which are the earliest started: it visits those alone, not every running job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sched/scheduler_core.h"

namespace hetsched::sched {

// Needs SchedulerCore::TrackRunningChanges on, and to be the changes' only reader (Sync takes
// them). Not thread-safe.
class RunningByStart {
 public:
  // Brings the index up to core.running() from core.running_changes() (in time proportional to
  // the changes, and their log where they started out of time order), then clears the changes;
  // files every running job afresh the first time, or when the changes outnumber the jobs.
  void Sync(SchedulerCore& core);
  // Appends to `ids` every running job whose quantum is over at `now_s`
  // (SchedulerCore::QuantumOver), earliest run start first, as of the last Sync. Visits those
  // jobs and the entries of jobs that stopped since they were filed (dropping them), no other.
  void PastQuantum(const SchedulerCore& core, double now_s, std::vector<int32_t>& ids);
  // Entries held, those of jobs that stopped included (they go as PastQuantum reaches them).
  size_t entries() const { return entries_.size() - head_; }

 private:
  struct Entry {
    double start_s;
    int64_t serial;
    int32_t id;
    bool operator<(const Entry& o) const {
      return start_s != o.start_s ? start_s < o.start_s : serial < o.serial;
    }
  };
  // Files running `id` unless its live entry has its run start already.
  void File(const JobRecord& r, int32_t id);
  static bool Running(const SchedulerCore& core, int32_t id);

  // entries_[head_..] by run start (ties by serial); one is live when live_[its id] is its
  // serial, else its job stopped since (and may run again under a later entry).
  std::vector<Entry> entries_;
  size_t head_ = 0;
  std::vector<int64_t> live_;    // by JobId: its live entry's serial, -1 none
  std::vector<double> live_at_;  // by JobId: its live entry's run start
  std::vector<Entry> scratch_;
  int64_t next_serial_ = 0;
  bool filed_ = false;
};

}  // namespace hetsched::sched
