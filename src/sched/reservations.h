// Reservations: jobs a full decision placed on devices that the jobs it preempted still hold
// while they write their checkpoints (SchedulerOptions::stop_holds_devices), and jobs that move
// to another type while they write their own. The first decision after the devices are
// released starts each there, before any other queued job may take them: without that, the
// decision would fill them in policy order and the plan (swaps between types above all) would
// come apart, costing a preemption more for every job that lands where it was not meant to.
// The free devices of its type the decision counted for a reserved job are held for it too
// (ClusterState::Reserve, as a pinned job's are): a gang that needs both the released devices
// and free ones would otherwise see the free ones go to the fills in between and wait on. A
// reserved job is not started by the fills elsewhere (JobRecord::reserved). Holds last until
// the job starts, ends, or the next full decision re-plans (Replan): at most one preempt
// interval, or a migrating job's checkpoint write.
#pragma once

#include <cstddef>
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
  // A full decision re-plans the jobs it sees: before it counts free devices, it forgets what
  // earlier ones reserved and gives back what they held, except for jobs still writing their
  // checkpoints (no decision sees them until they are stopped).
  void Replan(SchedulerCore& core);
  // Job `id` waits for devices of `type`; free ones of that type are held for it, up to its gang.
  void Add(SchedulerCore& core, int32_t id, model::DeviceTypeId type);
  // Starts, in the order they were added, the reserved jobs whose devices (held and released)
  // are free now; keeps those still waiting, holding what came free of their type; drops those
  // that started elsewhere or ended. O(reservations) placements.
  void StartFree(SchedulerCore& core, double now_s, Decision& out);

 private:
  struct Entry {
    int32_t job;
    int64_t seq;  // tells a slot reused by a later job apart
    int32_t type;
    std::vector<model::DeviceId> held;  // free devices kept out of the free index for it
  };
  // Holds free devices of the entry's type until it holds its whole gang (or none are left).
  static void Hold(SchedulerCore& core, Entry& e);
  // Gives back what `e` holds; its job is no longer reserved (when the slot is still its own).
  static void Release(SchedulerCore& core, Entry& e);
  // Compaction: moves `e` (of entries_) to entries_[kept], counting it.
  void Keep(Entry& e, size_t& kept);

  std::vector<Entry> entries_;
};

}  // namespace hetsched::sched
