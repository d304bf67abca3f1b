// Reservations: jobs a full decision placed on devices that the jobs it preempted still hold
// while they write their checkpoints (SchedulerOptions::stop_holds_devices), and jobs that move
// to another type while they write their own. The first decision after the devices are
// released starts each there, before any other queued job may take them: without that, the
// decision would fill them in policy order and the plan (swaps between types above all) would
// come apart, costing a preemption more for every job that lands where it was not meant to.
#pragma once

#include <cstdint>
#include <vector>

#include "model/cluster.h"
#include "sched/decision.h"
#include "sched/job_record.h"

namespace hetsched::sched {

class SchedulerCore;

// Not thread-safe; owned by a decision strategy.
class Reservations {
 public:
  // A full decision re-plans the jobs it sees: it forgets what earlier ones reserved, except
  // for jobs still writing their checkpoints (no decision sees them until they are stopped).
  void Replan(const SchedulerCore& core);
  // Job `id` (record `r`) waits for devices of `type`.
  void Add(int32_t id, const JobRecord& r, model::DeviceTypeId type) {
    entries_.push_back({id, r.seq, type.value()});
  }
  // Starts, in the order they were added, the reserved jobs whose devices are free now; keeps
  // those still waiting; drops those that started elsewhere or ended. O(reservations).
  void StartFree(SchedulerCore& core, double now_s, Decision& out);

 private:
  struct Entry {
    int32_t job;
    int64_t seq;  // tells a slot reused by a later job apart
    int32_t type;
  };
  std::vector<Entry> entries_;
};

}  // namespace hetsched::sched
