// DecisionStrategy: how one family of policies decides who runs where, behind sched::Scheduler.
// Families: queue order with EASY backfill, preemptive with type assignment, LP allocation.
//
// The seam: a Scheduler owns one SchedulerCore (sched/scheduler_core.h: job records, the queue
// index, running jobs, devices, and Start / Preempt) and one strategy, chosen by the policy at
// creation. A strategy receives the core by reference and changes job state only through it;
// it never sees the Scheduler, the driver or space sharing (sched/space_sharing.h), which the
// Scheduler runs after the strategy at each decision. Internal to sched/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "sched/decision.h"
#include "sched/job_record.h"

namespace hetsched::sched {

class DecisionStrategy {
 public:
  virtual ~DecisionStrategy() = default;
  // One decision while jobs are queued: starts (and, by family, preempts) jobs, appending
  // to `out`.
  virtual void Decide(double now_s, Decision& out) = 0;
  // Nobody is queued, but a decision could change something (Scheduler::HasWork): families
  // that move running jobs may move them up to faster devices that came free.
  virtual void Upgrade(double /*now_s*/, Decision& /*out*/) {}
  // Starts queued jobs on free devices only, preempting nobody (elastic training restarts
  // the jobs it resized this way, sched/elastic.h).
  virtual void Fill(double now_s, Decision& out) { Decide(now_s, out); }

  // Why a job cannot be admitted at all under this family (nullopt: it can); `r` is complete
  // but not yet in the core.
  virtual std::optional<std::string> RejectAtSubmit(const JobRecord& /*r*/,
                                                    double /*now_s*/) const {
    return std::nullopt;
  }
  // The slot of an ended job was given to a new job: the same id now names another job.
  virtual void OnSlotReused(int32_t /*id*/) {}
  // Job `id` ended (finished or dropped); its slot may be reused.
  virtual void OnJobLeft(int32_t /*id*/) {}
  // What the family remembers of live job `id` (Scheduler::History), and the same restored.
  virtual void ExportHistory(int32_t /*id*/, double /*now_s*/, JobHistory& /*out*/) const {}
  virtual void ImportHistory(int32_t /*id*/, const JobHistory& /*history*/) {}
  // When the next decision that may move running jobs falls due (`queued`: a full decision,
  // jobs wait; else an upgrade), for a driver that decides only at events (sim/engine.h).
  // +inf for families that move running jobs at no time.
  virtual double NextReallocationAt(bool /*queued*/) const {
    return std::numeric_limits<double>::infinity();
  }
};

// When a family that moves running jobs may do so (SchedulerOptions::preempt_interval_s): a
// full decision at most every interval, and with nobody queued an upgrade at most every
// interval after the last of either.
class ReallocationClock {
 public:
  explicit ReallocationClock(double interval_s) : interval_s_(interval_s) {}
  // True, and remembered as the last full decision, when one is due at `now_s`.
  bool FullDue(double now_s) {
    if (now_s - last_full_s_ < interval_s_) return false;
    last_full_s_ = now_s;
    return true;
  }
  // Like FullDue for upgrades. Their own clock: a decision with nobody waiting must not delay
  // the full decision the next arrival may need.
  bool UpgradeDue(double now_s) {
    if (now_s - std::max(last_full_s_, last_upgrade_s_) < interval_s_) return false;
    last_upgrade_s_ = now_s;
    return true;
  }
  // The first time FullDue and UpgradeDue can be true.
  double NextFullAt() const { return last_full_s_ + interval_s_; }
  double NextUpgradeAt() const { return std::max(last_full_s_, last_upgrade_s_) + interval_s_; }

 private:
  double interval_s_;
  double last_full_s_ = -1e300;
  double last_upgrade_s_ = -1e300;
};

}  // namespace hetsched::sched
