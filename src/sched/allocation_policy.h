// Allocation policies (maxmin-het, max-throughput, min-makespan, min-cost, ftf-het): at each
// decision the scheduler asks for the time shares X[j][t] that optimize the policy's objective
// (sched/allocation.h) and realizes them round by round with Gavel's priority rule (target share
// over received share; sched/allocation_strategy.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "sched/allocation.h"
#include "sched/policy.h"

namespace hetsched::sched {

class AllocationPolicy final : public Policy {
 public:
  // `agnostic`: the LP sees every allowed type as equally fast (Gavel's heterogeneity-agnostic
  // max_min_fairness); jobs still run at their real speed.
  AllocationPolicy(Objective objective, std::string_view name, bool agnostic = false)
      : objective_(objective), name_(name), agnostic_(agnostic) {}
  std::string_view name() const override { return name_; }
  bool preemptive() const override { return true; }
  TypeChoice type_choice() const override { return TypeChoice::kMaxThroughput; }
  // The queue index (and WhyWaiting) use arrival order; the decision itself ranks by priority.
  double Key(const JobRecord& job, double, const SizeBelief&) const override {
    return job.job->arrival_s;
  }
  Objective objective() const { return objective_; }
  bool agnostic() const { return agnostic_; }

  // min-cost: the steps/s the job needs from `now_s` on to meet its SLO (Job::deadline_s; the
  // scheduler turns a Gavel slo_factor into one at submission) with `remaining_work` steps
  // believed left; 0 when it has none.
  double SloRate(const JobRecord& job, double now_s, double remaining_work) const;
  // min-cost: why a job cannot be admitted (its SLO cannot be met even on its fastest type
  // from the moment it arrives, if it needs `remaining_work` steps as believed), naming the
  // job; nullopt when it can.
  std::optional<std::string> RejectAtSubmit(const JobRecord& job, double now_s,
                                            double remaining_work) const;

 private:
  Objective objective_;
  std::string_view name_;
  bool agnostic_ = false;
};

// The allocation policy called `name`, or nullptr when `name` is not one.
std::unique_ptr<Policy> MakeAllocationPolicy(std::string_view name);

}  // namespace hetsched::sched
