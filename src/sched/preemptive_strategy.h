// PreemptiveStrategy: the preemptive policies (fifo-het, priority, las, las-het, srpt-het,
// srpt-het-fair). At most every preempt interval it reconsiders every running job: the policy
// order picks who runs, the policy's type choice (fastest, or max throughput by regret) picks
// where, and running jobs that lose their place or move are preempted, as far as the price of
// a preemption allows (sched/preemption_price.h: a time-slicing policy's running jobs keep
// their devices for a quantum; moves must pay). In between, queued jobs fill free devices in
// policy order, after the jobs reserved devices that were being checkpointed.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/queue_order_strategy.h"
#include "sched/reservations.h"
#include "sched/scheduler_core.h"
#include "sched/strategy.h"

namespace hetsched::sched {

// Keeps a reference to `core`.
class PreemptiveStrategy final : public DecisionStrategy {
 public:
  explicit PreemptiveStrategy(SchedulerCore& core);

  void Decide(double now_s, Decision& out) override;
  void Upgrade(double now_s, Decision& out) override;
  void Fill(double now_s, Decision& out) override;

 private:
  // The full decision: who runs where; preempts and starts accordingly.
  void Reallocate(double now_s, Decision& out);
  // Type per selected job maximizing summed score (greedy on regret); -1 where none fits.
  std::vector<int32_t> AssignByRegret(const std::vector<int32_t>& jobs,
                                      std::vector<int32_t> capacity, double now_s) const;

  SchedulerCore& core_;
  QueueOrderStrategy fill_;
  ReallocationClock clock_;
  // Reallocate's working lists, kept to reuse their memory (megabytes at scale: fresh ones
  // cost page faults). By JobId: scratch_ the type assigned in a decision (-2: none),
  // moved_flag_ preempted to move in this decision.
  std::vector<SchedulerCore::QueueKey> keys_;
  std::vector<int32_t> selected_, tentative_;
  std::vector<int32_t> scratch_;
  std::vector<char> moved_flag_;
  // Jobs the last reallocation placed on devices still being checkpointed.
  Reservations reservations_;
};

}  // namespace hetsched::sched
