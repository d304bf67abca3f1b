// Decision: what one sched::Scheduler decision hands its driver (which jobs stop, which start
// where). Its own header so that the pieces behind the Scheduler (sched/strategy.h) build
// decisions without including sched/scheduler.h.
#pragma once

#include <vector>

#include "model/catalog.h"
#include "model/cluster.h"
#include "model/job.h"

namespace hetsched::sched {

struct Placement {
  model::JobId job;
  model::DeviceTypeId type;
  std::vector<model::DeviceId> devices;
  bool resumed = false;   // it ran before (a restore from checkpoint applies)
  bool migrated = false;  // it was preempted in this same decision to move here
  // Space sharing: the running job whose devices it joins (invalid: none); `devices` are the
  // partner's.
  model::JobId partner;
  // It ran on another vendor's devices before and its checkpoint does not load here
  // (Job::portable_checkpoint false): it restarts from the beginning.
  bool restarted = false;
  double redone_work = 0;  // when restarted: the steps it had done, lost
  // It ran before with another number of devices (elastic training changed its size).
  bool resized = false;
};

struct Decision {
  std::vector<model::JobId> preempted;  // stopped; back in the queue (possibly placed again)
  std::vector<Placement> placed;
};

}  // namespace hetsched::sched
