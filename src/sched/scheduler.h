// Scheduler: the online decision core. Jobs are submitted (admitted or rejected with the
// reason), and each Decide(now) returns placements and preemptions as values, running the
// pipeline: queue order (policy) -> filters -> type scorers -> gang placement -> preemption.
// Pure decision code: no wall clock, no I/O; the simulator and the daemon both drive it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "model/cluster.h"
#include "model/job.h"
#include "model/profile.h"
#include "sched/allocation_policy.h"
#include "sched/cluster_state.h"
#include "sched/decision.h"
#include "sched/filters.h"
#include "sched/job_record.h"
#include "sched/lp_solver.h"
#include "sched/placement.h"
#include "sched/policy.h"
#include "sched/scheduler_options.h"
#include "sched/scorers.h"
#include "sched/size_belief.h"
#include "sched/tenant_shares.h"
#include "util/status.h"

namespace hetsched::sched {

class AllocationStrategy;
class PreemptiveStrategy;
class DecisionStrategy;
class ElasticResizer;
class SchedulerCore;
class SpaceSharing;

struct Admission {
  bool accepted = false;
  std::string reason;  // why not, when rejected
};

// Not thread-safe. Keeps references to `cluster` and `profile` (the caller keeps them alive);
// copies each submitted job, without its true size (or shares one that has none).
class Scheduler {
 public:
  static util::Result<std::unique_ptr<Scheduler>> Create(const model::Cluster& cluster,
                                                         const model::ThroughputProfile* profile,
                                                         std::string_view policy,
                                                         const SchedulerOptions& options = {});
  ~Scheduler();

  // Admits the job into the queue, or rejects it when no device in the cluster can ever run it
  // (with a host request: when no type's nodes hold the gang's cores and memory at once).
  // The scheduler never reads `job.work` (the true size), except to turn a Gavel slo_factor
  // into a deadline: it sees `estimate` when given, else the job's estimate_s / time_limit_s,
  // else (history_estimates) the history predictor, else nothing.
  Admission Submit(const model::Job& job, double now_s,
                   std::optional<SizeEstimate> estimate = std::nullopt);
  // The same for a job the caller keeps too (a daemon's, hundreds of thousands of them): one
  // whose `work` is 0 (the caller keeps its size apart) is shared rather than copied, unless
  // the scheduler must change it (an elastic job's gang size, a deadline from slo_factor).
  Admission Submit(std::shared_ptr<const model::Job> job, double now_s,
                   std::optional<SizeEstimate> estimate = std::nullopt);
  // Room for jobs with ids below `jobs` (a daemon about to recover that many): the tables by
  // JobId are allocated once rather than reallocated and moved as they grow.
  void Reserve(size_t jobs);
  // One scheduling pass. Updates the scheduler's own state (devices allocated / released).
  Decision Decide(double now_s);
  // Preempts running, preemptible `job` now, outside a pass: the driver takes its devices back
  // for something it placed there itself (a serving replica pinned to them, daemon/
  // serving_loop.h). The decision to carry out (its one preemption); kInvalidArgument when
  // the job is not running or not preemptible.
  util::Result<Decision> PreemptNow(model::JobId job, double now_s);

  // Steps/s of the whole gang of a running job where it runs now: its speed on its type, or its
  // pair speed while it shares its devices (space sharing).
  double SpeedNow(model::JobId job) const;
  // Running jobs whose speed changed because a partner joined or left their devices (space
  // sharing), since the last call, oldest first; may name jobs no longer running. The driver
  // books their progress and applies the new speed.
  std::vector<model::JobId> TakeSpeedChanges();

  // The driver's actual progress rate (steps/s) for a running job, from `since_s` on (later
  // than now when a start-up or restore delay applies). The work done at the previous rate up
  // to `since_s` is kept.
  void SetProgress(model::JobId job, double rate, double since_s);
  // The job completed: its devices are released, its size is learned (SizeBelief) and it
  // leaves the scheduler.
  void Finish(model::JobId job, double now_s);
  // A preempted job (kStopping, under stop_holds_devices) finished writing its checkpoint:
  // its devices are released and it is queued.
  void Stopped(model::JobId job, double now_s);
  // The job stopped on its own (device fault, start-up failure): back to the queue with
  // `done_work` steps kept (what its last checkpoint saved). `exclude_type`: never place it on
  // that type again.
  void Requeue(model::JobId job, double now_s, double done_work,
               std::optional<model::DeviceTypeId> exclude_type = std::nullopt);
  // A queued job is found running on `devices` (free, of one type it may use) with `done_work`
  // steps behind it: the daemon's recovery after a restart. It runs there from now on, at its
  // speed there (SetProgress corrects that). kInvalidArgument when the devices do not fit.
  util::Status Adopt(model::JobId job, const std::vector<model::DeviceId>& devices,
                     double done_work, double now_s);
  // What the policy remembers of live `job` at `now_s`, and (after a restart, once the job is
  // submitted again, and adopted if it runs) the same handed back. Types unknown to the
  // cluster are ignored.
  JobHistory History(model::JobId job, double now_s) const;
  void RestoreHistory(model::JobId job, const JobHistory& history, double now_s);
  // The size belief learned from completed jobs (SizeBelief::Save / Restore), so that a
  // restart does not forget how big jobs turn out.
  std::string SaveBelief() const;
  util::Status RestoreBelief(std::string_view saved);
  // Tenants (SchedulerOptions::tenants): each one's standing at `now_s`, in the tenants' list
  // order (TenantShares::Standing; empty without tenants), and the decayed usage a restarted
  // driver saved from it at `at_s` (TenantShares::RestoreUsage).
  std::vector<TenantStanding> TenantStandings(double now_s) const;
  void RestoreTenantUsage(const std::map<std::string, double>& usage, double at_s);
  // The job is given up (failed, cancelled, or it can run nowhere that is left): it leaves the
  // scheduler like a finished one, but its run time is not learned as a job size.
  void Drop(model::JobId job, double now_s);

  // Device and node availability; the driver requeues the jobs there first (JobOn, and its
  // partner under space sharing).
  // Nodes that join or leave a running cluster. AddNode: the driver appended `node` to the
  // cluster it gave Create (model::AddNode); its devices are free from now. RemoveNode: it
  // leaves for good (drained, devices down; its ids are never reused); kInvalidArgument while
  // a job holds devices there (the driver requeues them first).
  void AddNode(model::NodeId node);
  util::Status RemoveNode(model::NodeId node);
  void SetDeviceDown(model::DeviceId device);
  void SetDeviceUp(model::DeviceId device);
  // Power management: a node that is off (suspending, booting, down) offers no devices.
  void SetNodeOn(model::NodeId node, bool on);
  // An operator's drain: nothing new starts on the node; what runs there continues.
  void SetNodeDrained(model::NodeId node, bool drained);
  std::optional<model::JobId> JobOn(model::DeviceId device) const;

  // True once `job` was submitted (and admitted); only then is record() valid (its `job` copy
  // only until it ends).
  bool Known(model::JobId job) const;
  // What the scheduler believes about sizes, and the remaining steps it expects of `job`.
  const SizeBelief& belief() const;
  double ExpectedRemainingWork(model::JobId job, double now_s) const;
  // True when a decision now could change something: jobs wait, guests could move, or (for
  // preemptive and allocation policies) a running job could move to a free faster device.
  bool HasWork() const;
  // When the next decision falls due that may stop or move running jobs, where one could
  // change something: jobs run, and jobs wait (a full decision) or HasWork (an upgrade).
  // +inf when none: nothing runs, nothing to do, or a family that never moves running jobs
  // (queue order), or Gavel's rebuilds with the set of jobs unchanged. A driver that decides only
  // at events decides then too, as the daemon's ticks do (sim/engine.h).
  double NextDecisionDue() const;
  const JobRecord& record(model::JobId job) const;
  bool HasAllowedType(model::JobId job) const;
  // Why a queued job is not running, in words; names the types whose free devices sit on
  // nodes short of the host cores or memory the job asks for.
  std::string WhyWaiting(model::JobId job, double now_s) const;

  size_t queued() const;
  // Ids of the queued jobs, in no particular order (the power manager reads their needs).
  const std::vector<int32_t>& queued_ids() const;
  size_t running() const;
  // Space sharing: running jobs that share another's devices (a decision may move them to
  // free devices even when nothing is queued).
  size_t guests() const;
  const ClusterState& state() const;
  const Policy& policy() const;
  const model::Cluster& cluster() const;

  // Allocation policies: the target share of `job` on `type` in force (0 when none), and what
  // happened to the LP: one line per failed solve (the last good allocation was kept) or
  // missed SLO, oldest first, at most AllocationStrategy::kLogLines (100).
  double TargetShare(model::JobId job, model::DeviceTypeId type) const;
  const std::vector<std::string>& allocation_log() const;
  // Failed LP solves: the allocation policies', or the throughput plan's (TypeChoice::kPlanned:
  // that decision assigned types by regret instead).
  int64_t allocation_failures() const;
  int64_t allocations_solved() const;

 private:
  Scheduler(std::unique_ptr<SchedulerCore> core, std::vector<std::unique_ptr<Filter>> filters);
  // Finish and Drop: `completed` jobs teach the size belief.
  void Leave(model::JobId job, double now_s, bool completed);
  // Both Submits: `shared` is `job` when the caller shares it, else null.
  Admission Admit(const model::Job& job, std::shared_ptr<const model::Job> shared, double now_s,
                  std::optional<SizeEstimate> estimate);
  // model::HostedWorkersByType over the nodes not removed, cached by the job's host request
  // (cleared when nodes join or leave): admission checks it for every job that asks.
  const std::vector<int32_t>& HostedWorkers(const model::Job& job);
  static constexpr size_t kHostedCacheEntries = 1024;

  // The pieces (see sched/strategy.h for how they fit): the job bookkeeping the others share;
  // the policy family's decisions; space sharing, when on.
  std::unique_ptr<SchedulerCore> core_;
  std::vector<std::unique_ptr<Filter>> filters_;
  std::unique_ptr<DecisionStrategy> strategy_;
  const AllocationStrategy* allocation_ = nullptr;  // strategy_ when it is the LP family
  const PreemptiveStrategy* preemptive_ = nullptr;  // strategy_ when it is the preemptive one
  std::unique_ptr<SpaceSharing> sharing_;           // null unless options.space_sharing
  std::unique_ptr<ElasticResizer> elastic_;         // null unless options.elastic (not LP)
  int64_t next_seq_ = 0;                            // JobRecord::seq of the next submission
  std::map<std::pair<int32_t, uint64_t>, std::vector<int32_t>> hosted_cache_;
};

}  // namespace hetsched::sched
