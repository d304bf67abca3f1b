// QueueOrderStrategy: the non-preemptive policies (fifo, easy-backfill): queued jobs start in
// policy order on free devices, under the policy's blocking rule (strict head-of-line, or EASY
// backfill). The other families use its fill pass between their reallocations.
#pragma once

#include <cstdint>
#include <utility>

#include "model/cluster.h"
#include "sched/scheduler_core.h"
#include "sched/strategy.h"

namespace hetsched::sched {

// Keeps a reference to `core`; no state of its own.
class QueueOrderStrategy final : public DecisionStrategy {
 public:
  explicit QueueOrderStrategy(SchedulerCore& core) : core_(core) {}

  void Decide(double now_s, Decision& out) override { StartInOrder(now_s, false, out); }

  // Starts queued jobs in policy order on free devices. `fill`: skip jobs that do not fit
  // (at most kFillScan in a row) instead of the policy's blocking rule.
  void StartInOrder(double now_s, bool fill, Decision& out);

 private:
  // Earliest time `gang` devices of `type` are free if running jobs end as estimated, and how
  // many of that type are free then beyond the gang (EASY's shadow time and extra devices).
  std::pair<double, int32_t> ShadowTime(model::DeviceTypeId type, int32_t gang, double now_s) const;
  // EASY's view of a job's remaining work: infinite while nothing at all is known about it.
  double BackfillRemainingWork(const JobRecord& r, double now_s) const;

  SchedulerCore& core_;
};

}  // namespace hetsched::sched
