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
#include "sched/filters.h"
#include "sched/job_record.h"
#include "sched/lp_solver.h"
#include "sched/placement.h"
#include "sched/policy.h"
#include "sched/scorers.h"
#include "sched/size_belief.h"
#include "util/status.h"

namespace hetsched::sched {

class AllocationStrategy;
class DecisionStrategy;
class ElasticResizer;
class SchedulerCore;
class SpaceSharing;

struct SchedulerOptions {
  std::vector<std::string> filters = {"compat", "memory"};
  std::string scorers = "speed";  // see MakeScorers
  // The naive baseline: any free device will do; the compat filter only records which types
  // would fail (the driver fails such starts after a start-up time).
  bool ignore_compat = false;
  // Gang placement (sched/placement.h): topology- and data-aware (islands, nodes, racks, the
  // job's data first), or agnostic (the free devices of the type in id order: what a scheduler
  // that knows no topology does; the demo's ablation ladder uses it).
  PlacementMode placement = PlacementMode::kTopology;
  // Score bonus that keeps a running job on its current type under kMaxThroughput unless
  // moving gains more than this (a fraction of its best speed): avoids needless migrations.
  double stickiness = 0.05;
  // Preemptive policies reconsider every running job at most this often (virtual seconds);
  // decisions in between only start queued jobs on free devices, in policy order (cheap:
  // O(placed + skipped) instead of O(queued + running)). 0: every decision reconsiders.
  // 300 s by default: a preemption costs a checkpoint and restore (tens of seconds to
  // minutes), so reshuffling more often rarely pays, and at 100,000 jobs a full reallocation
  // takes ~0.2 s while a fill decision takes microseconds (docs/benchmarks.md).
  double preempt_interval_s = 300;
  PolicyTuning tuning;
  // Allocation policies (sched/allocation_policy.h): LP options and the solver (null: CLP).
  AllocationOptions allocation;
  std::shared_ptr<LpSolver> lp_solver;
  // Space sharing (Gavel's packing): after each decision, a queued job may join a running job
  // alone on devices of a type it may use, with the same gang size, when the profile's pair
  // entry for the two jobs there says the pair beats running apart: the sum of each job's pair
  // throughput relative to alone exceeds 1 + space_sharing_min_gain. Never more than two jobs
  // on a device. Needs a profile with pair (co-located) entries.
  bool space_sharing = false;
  double space_sharing_min_gain = 0.1;
  // A job without an estimate of its own gets the mean size of completed jobs of the same type
  // and gang size (SizeBelief::HistoryMean), once one has completed.
  bool history_estimates = false;
  // Use what jobs declare (Job::estimate_s, time_limit_s). False: the driver alone says what
  // is known (a study of what estimates are worth).
  bool declared_estimates = true;
  // A preempted job keeps its devices (JobPhase::kStopping) until the driver reports it
  // stopped (Stopped): its checkpoint is being written. False: devices free at once.
  bool stop_holds_devices = false;
  // Elastic training (sched/elastic.h): jobs with `elastic: {min, max}` run at a gang size the
  // scheduler picks in that range, start at the fastest that fits, grow into devices nobody
  // waits for and shrink so that a waiting job can start, each resize a restart from
  // checkpoint. Not under the LP allocation policies (they plan fixed gangs). False: every job
  // runs at its gang_size.
  bool elastic = false;
  // What the scheduler expects one stop and resume of a job to cost: seconds without progress
  // on its devices (checkpoint write plus restore). The simulator sets it from --checkpoint-save
  // and --restore. Policies stop or move a running job only when that pays (PreemptionPrice,
  // sched/preemption_price.h); an elastic job grows only when the time it saves is worth
  // several of these.
  double preemption_cost_s = 90;
  // Time-slicing policies (least attained service, Gittins ranks, the LP shares) let a started
  // job run at least this long before they stop it for another job, so that preemptions cost
  // at most cost / quantum of the time jobs run. Negative: PreemptionPrice::kQuantumPerCost x
  // preemption_cost_s (0 when preemption is free, as in Gavel's simulator). Set by hand it
  // must be at least preemption_cost_s.
  double preempt_quantum_s = -1;
};

// What the policy remembers of a live job beyond its progress: attained service (LAS, the
// Gittins ranks) and, under the LP allocation policies, the seconds it ran on each device type
// (Gavel's priorities). A daemon stores it so that a restart resumes where the policy was.
struct JobHistory {
  double attained_s = 0;       // device-seconds
  double attained_norm_s = 0;  // the same weighted by speed relative to the job's best type
  std::vector<std::pair<std::string, double>> received_s;  // by device type name (LP only)
};

struct Admission {
  bool accepted = false;
  std::string reason;  // why not, when rejected
};

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

// Not thread-safe. Keeps references to `cluster` and `profile` (the caller keeps them alive);
// copies each submitted job, without its true size.
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
  // One scheduling pass. Updates the scheduler's own state (devices allocated / released).
  Decision Decide(double now_s);

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
  // missed SLO, oldest first, at most kAllocationLogLines.
  double TargetShare(model::JobId job, model::DeviceTypeId type) const;
  const std::vector<std::string>& allocation_log() const;
  int64_t allocation_failures() const;
  int64_t allocations_solved() const;
  static constexpr size_t kAllocationLogLines = 100;

 private:
  Scheduler(std::unique_ptr<SchedulerCore> core, std::vector<std::unique_ptr<Filter>> filters);
  // Finish and Drop: `completed` jobs teach the size belief.
  void Leave(model::JobId job, double now_s, bool completed);
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
  std::unique_ptr<SpaceSharing> sharing_;           // null unless options.space_sharing
  std::unique_ptr<ElasticResizer> elastic_;         // null unless options.elastic (not LP)
  int64_t next_seq_ = 0;                            // JobRecord::seq of the next submission
  std::map<std::pair<int32_t, uint64_t>, std::vector<int32_t>> hosted_cache_;
};

}  // namespace hetsched::sched
