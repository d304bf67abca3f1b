// What the power controller needs to know of the queue (power::DemandView), read from the
// scheduler: the simulator's engine and the daemon build it at each power decision.
#pragma once

#include <cstddef>

#include "power/power_controller.h"
#include "sched/scheduler.h"

namespace hetsched::drive {

// Usable devices per node (not failed, not reserved for pinned jobs), free devices per type on
// powered nodes, and the first `max_demands` queued jobs in submission order: a bounded scan
// keeps a huge queue cheap (the jobs further back wake nodes once the front is served).
power::DemandView DemandOf(const sched::Scheduler& scheduler, size_t max_demands = 1000);

}  // namespace hetsched::drive
