// PreemptionPrice: what stopping or moving a running job costs, and when doing so pays. Every
// policy that stops running jobs for others (preemptive, LP allocation) asks it, on what the
// scheduler knows: the expected remaining work comes from the size belief, never the truth.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/status.h"

namespace hetsched::sched {

struct SchedulerOptions;

class PreemptionPrice {
 public:
  // The default time-slicing quantum in preemption costs (SchedulerOptions::preempt_quantum_s):
  // what preemptions take stays below 1 / kQuantumPerCost of the time jobs run. 40 (an hour
  // with the shipped 90 s) kept `default` within 4 % of its lowest average JCT on Gavel's
  // Figure 8 traces among quanta of 4 to 80 costs, under 2 preemptions per job where smaller
  // quanta went above (docs/results.md, "Preemption has a price").
  static constexpr double kQuantumPerCost = 40;
  // Hysteresis of moves: a move must save this many times what it costs, so that small or
  // uncertain gains (a size belief that changes) never move a job back and forth.
  static constexpr double kMoveRepays = 2;
  // Hysteresis of the throughput plan (sched/throughput_plan.h): a running job's speed on its
  // own type counts this much more, so that the plan moves it only for a clear gain, not
  // between equally good answers of an LP re-solved at every decision. 0.2 kept `default`
  // under 2 preemptions per job on Gavel's Figure 8 traces with the shipped costs (0.1 did not
  // multi-GPU), average JCT within 3 % of that without it (docs/results.md, "Preemption has a
  // price").
  static constexpr double kPlanIncumbency = 0.2;

  // kInvalidArgument for a negative or non-finite cost, a quantum set below the cost, or a
  // non-finite plan incumbency.
  static util::Result<PreemptionPrice> FromOptions(const SchedulerOptions& options);

  PreemptionPrice() = default;
  PreemptionPrice(double cost_s, double quantum_s, double incumbency = kPlanIncumbency)
      : cost_s_(cost_s), quantum_s_(quantum_s), incumbency_(incumbency) {}

  double cost_s() const { return cost_s_; }
  // The plan's hysteresis (kPlanIncumbency unless set) where preemptions cost something;
  // without a cost a move is free and the plan is followed exactly.
  double plan_incumbency() const { return cost_s_ > 0 ? incumbency_ : 0; }
  double quantum_s() const { return quantum_s_; }
  // A job whose current run started at `run_start_s` has not yet had its quantum.
  bool InQuantum(double run_start_s, double now_s) const {
    return now_s - run_start_s < quantum_s_;
  }
  // Moving a job expected to need `remaining_steps` more from `speed_now` to `speed_there`
  // steps/s pays when the time it saves is worth kMoveRepays stops and resumes.
  bool MovePays(double remaining_steps, double speed_now, double speed_there) const {
    if (cost_s_ <= 0) return speed_there > speed_now;
    if (speed_there <= speed_now || speed_now <= 0) return false;
    const double saved_s = remaining_steps / speed_now - remaining_steps / speed_there;
    return saved_s >= kMoveRepays * cost_s_;
  }
  // The same rule in normalized speed (speed / the job's best speed), as a score margin: the
  // smallest gain over `normalized_now` that makes a move pay for a job expected to need
  // `remaining_s` more seconds on its best type; +inf when no move can pay.
  double MoveMargin(double remaining_s, double normalized_now) const {
    if (cost_s_ <= 0 || normalized_now <= 0) return 0;
    const double slack = 1 / normalized_now - kMoveRepays * cost_s_ / std::max(remaining_s, 0.0);
    if (!(slack > 0)) return std::numeric_limits<double>::infinity();
    return 1 / slack - normalized_now;
  }

 private:
  double cost_s_ = 0;
  double quantum_s_ = 0;
  double incumbency_ = kPlanIncumbency;
};

}  // namespace hetsched::sched
