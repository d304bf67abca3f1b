#include "sched/preemption_price.h"

#include <fmt/format.h>

#include "sched/scheduler_options.h"

namespace hetsched::sched {

util::Result<PreemptionPrice> PreemptionPrice::FromOptions(const SchedulerOptions& options) {
  const double cost = options.preemption_cost_s;
  if (!std::isfinite(cost) || cost < 0) {
    return util::Status::InvalidArgument(fmt::format(
        "preemption cost: {} s (expected the seconds of a checkpoint write plus restore, >= 0)",
        cost));
  }
  const double quantum = options.preempt_quantum_s;
  if (std::isnan(quantum) || std::isinf(quantum)) {
    return util::Status::InvalidArgument(
        fmt::format("preempt quantum: {} s (expected a number of seconds)", quantum));
  }
  const double incumbency = options.plan_incumbency < 0 ? kPlanIncumbency : options.plan_incumbency;
  if (!std::isfinite(incumbency)) {
    return util::Status::InvalidArgument(fmt::format(
        "plan incumbency: {} (expected a fraction of speed, >= 0)", options.plan_incumbency));
  }
  if (quantum < 0) return PreemptionPrice(cost, kQuantumPerCost * cost, incumbency);
  if (quantum < cost) {
    return util::Status::InvalidArgument(fmt::format(
        "preempt quantum: {:g} s is below what one preemption costs ({:g} s: checkpoint write "
        "plus restore); a job would spend more time stopping and resuming than running",
        quantum, cost));
  }
  return PreemptionPrice(cost, quantum, incumbency);
}

}  // namespace hetsched::sched
