// AllocationStrategy: the LP allocation policies (sched/allocation_policy.h). At most every
// preempt interval it solves for target time shares, when the set of jobs or devices changed,
// and realizes them with Gavel's priority rule, running jobs keeping their devices for a quantum
// (sched/preemption_price.h); in between, queued jobs fill free devices, after the jobs
// reserved devices that were being checkpointed (sched/reservations.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sched/allocation_policy.h"
#include "sched/lp_solver.h"
#include "sched/queue_order_strategy.h"
#include "sched/reservations.h"
#include "sched/scheduler_core.h"
#include "sched/strategy.h"

namespace hetsched::sched {

// Keeps references to `core` and `policy` (the core's policy).
class AllocationStrategy final : public DecisionStrategy {
 public:
  AllocationStrategy(SchedulerCore& core, const AllocationPolicy& policy);

  void Decide(double now_s, Decision& out) override;
  void Upgrade(double now_s, Decision& out) override;
  double NextReallocationAt(bool queued) const override {
    return queued ? clock_.NextFullAt() : clock_.NextUpgradeAt();
  }
  std::optional<std::string> RejectAtSubmit(const JobRecord& r, double now_s) const override;
  void OnSlotReused(int32_t id) override;
  void OnJobLeft(int32_t id) override;
  void ExportHistory(int32_t id, double now_s, JobHistory& out) const override;
  void ImportHistory(int32_t id, const JobHistory& history) override;

  // See Scheduler::TargetShare, allocation_log, allocation_failures, allocations_solved.
  double TargetShare(model::JobId job, model::DeviceTypeId type) const;
  const std::vector<std::string>& log() const { return log_; }
  int64_t failures() const { return failures_; }
  int64_t solves() const { return solves_; }
  // The log keeps the latest this many lines.
  static constexpr size_t kLogLines = 100;

 private:
  // The jobs an allocation is for and the devices it shares among them.
  struct Pool {
    std::vector<int32_t> active;   // preemptible running jobs and queued ones, by submission
    std::vector<int32_t> guests;   // space-sharing guests: outside the allocation
    std::vector<double> capacity;  // by type: up devices less those non-preemptible jobs hold
  };

  // Solves (when the set of jobs or devices changed) and realizes the shares.
  void Allocate(double now_s, Decision& out);
  Pool GatherPool() const;
  // Books the time since the last allocation: the service each running job received on its
  // type and the time each job of the pool was present.
  void BookTime(double now_s, const Pool& pool);
  // Solves for the pool's target shares and puts them in force (on failure, logs and keeps
  // the last good ones).
  void Resolve(double now_s, const Pool& pool);
  // The LP's view of the pool's jobs that can progress somewhere; `in_lp`: their ids.
  AllocationProblem ProblemOf(double now_s, const Pool& pool, std::vector<int32_t>& in_lp) const;
  // The type each active job runs on from this decision (by JobId; -1: none): those inside
  // their quantum stay, then whole gangs by priority, then work conservation.
  std::vector<int32_t> ChooseTypes(double now_s, const std::vector<int32_t>& active) const;
  // Grants (job, type) pairs in order of target share over received share while `room` lasts.
  void GrantByPriority(const std::vector<int32_t>& active, std::vector<int32_t>& choice,
                       std::vector<int32_t>& room) const;
  // Devices the priorities leave idle go to the jobs still without a type, on their fastest.
  void ConserveWork(const std::vector<int32_t>& active, std::vector<int32_t>& choice,
                    std::vector<int32_t>& room) const;
  void Realize(double now_s, const std::vector<int32_t>& active, const std::vector<int32_t>& choice,
               Decision& out);
  void Log(std::string line);

  SchedulerCore& core_;
  const AllocationPolicy& policy_;
  std::shared_ptr<LpSolver> solver_;
  QueueOrderStrategy fill_;
  ReallocationClock clock_;
  Reservations reservations_;     // jobs the last allocation placed on devices being checkpointed
  std::vector<double> share_;     // by JobId x type: target share in force
  std::vector<double> received_;  // by JobId x type: seconds run there (since arrival)
  std::vector<double> present_;   // by JobId: seconds active (queued or running)
  std::vector<int32_t> jobs_;     // ids the shares in share_ were solved for
  std::vector<double> capacity_;  // capacity they were solved for
  double last_s_ = -1;            // time of the last Allocate
  // A finished job's slot was given to a new job: the same ids may name other jobs, so the
  // next allocation solves again.
  bool slot_reused_ = false;
  std::vector<std::string> log_;
  int64_t failures_ = 0, solves_ = 0;
};

}  // namespace hetsched::sched
