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

struct SchedulerOptions {
  std::vector<std::string> filters = {"compat", "memory"};
  std::string scorers = "speed";  // see MakeScorers
  // The naive baseline: any free device will do; the compat filter only records which types
  // would fail (the driver fails such starts after a start-up time).
  bool ignore_compat = false;
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

  // Admits the job into the queue, or rejects it when no device in the cluster can ever run it.
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
  // than now when a start-up or restore delay applies).
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
  // The job is given up (e.g. it can run nowhere that is left): it leaves the scheduler.
  void Drop(model::JobId job, double now_s);

  // Device and node availability; the driver requeues the jobs there first (JobOn, and its
  // partner under space sharing).
  void SetDeviceDown(model::DeviceId device) { state_.SetDown(device); }
  void SetDeviceUp(model::DeviceId device) { state_.SetUp(device); }
  // Power management: a node that is off (suspending, booting, down) offers no devices.
  void SetNodeOn(model::NodeId node, bool on) { state_.SetNodeOn(node, on); }
  // An operator's drain: nothing new starts on the node; what runs there continues.
  void SetNodeDrained(model::NodeId node, bool drained) { state_.SetNodeDrained(node, drained); }
  std::optional<model::JobId> JobOn(model::DeviceId device) const;

  // True once `job` was submitted (and admitted); only then is record() valid (its `job` copy
  // only until it ends).
  bool Known(model::JobId job) const {
    return job.value() >= 0 && static_cast<size_t>(job.value()) < records_.size() &&
           records_[job.value()].submitted;
  }
  // What the scheduler believes about sizes, and the remaining steps it expects of `job`.
  const SizeBelief& belief() const { return belief_; }
  double ExpectedRemainingWork(model::JobId job, double now_s) const;
  // True when a decision now could change something: jobs wait, guests could move, or (for
  // preemptive and allocation policies) a running job could move to a free faster device.
  bool HasWork() const;
  const JobRecord& record(model::JobId job) const { return records_[job.value()]; }
  bool HasAllowedType(model::JobId job) const;
  // Why a queued job is not running, in words.
  std::string WhyWaiting(model::JobId job, double now_s) const;

  size_t queued() const { return queue_.size(); }
  // Ids of the queued jobs, in no particular order (the power manager reads their needs).
  const std::vector<int32_t>& queued_ids() const { return queue_; }
  size_t running() const { return running_.size(); }
  // Space sharing: running jobs that share another's devices (a decision may move them to
  // free devices even when nothing is queued).
  size_t guests() const { return guests_.size(); }
  const ClusterState& state() const { return state_; }
  const Policy& policy() const { return *policy_; }
  const model::Cluster& cluster() const { return cluster_; }

  // Allocation policies: the target share of `job` on `type` in force (0 when none), and what
  // happened to the LP: one line per failed solve (the last good allocation was kept) or
  // missed SLO, oldest first, at most kAllocationLogLines.
  double TargetShare(model::JobId job, model::DeviceTypeId type) const;
  const std::vector<std::string>& allocation_log() const { return lp_log_; }
  int64_t allocation_failures() const { return lp_failures_; }
  int64_t allocations_solved() const { return lp_solves_; }
  static constexpr size_t kAllocationLogLines = 100;

 private:
  Scheduler(const model::Cluster& cluster, const model::ThroughputProfile* profile,
            std::unique_ptr<Policy> policy, std::vector<std::unique_ptr<Filter>> filters,
            ScorerSet scorers, const SchedulerOptions& options);

  // Policy key, arrival, submission order (ties never depend on which slot a job got), id.
  using QueueKey = std::tuple<double, double, int64_t, int32_t>;
  QueueKey KeyOf(const JobRecord& r, double now_s) const;
  void Enqueue(int32_t id, double now_s);
  void Dequeue(int32_t id);
  void AddRunning(int32_t id);
  void RemoveRunning(int32_t id);

  // Job `id` leaves the queue and runs on `devices` at `rate` from now; true when it ran
  // before (a resume). Start and Join build on it.
  bool MarkRunning(int32_t id, model::DeviceTypeId type, std::vector<model::DeviceId> devices,
                   double rate, double now_s);
  // Starts job `id` on `devices` (allocates them, marks it running).
  Placement Start(int32_t id, model::DeviceTypeId type, std::vector<model::DeviceId> devices,
                  double now_s, bool migrated);
  // Stops a running job (preemption): progress and service are booked up to now; it is queued,
  // or kStopping under stop_holds_devices.
  void Stop(int32_t id, double now_s);
  // Books a running job's progress and service up to now and takes it off its devices.
  void Leave(int32_t id, double now_s);
  // Expected steps left of record `r` (SizeBelief::ExpectedRemaining in steps).
  double RemainingWork(const JobRecord& r, double now_s) const;
  // Refreshes the size belief (at most every preempt interval) and re-sorts the queue index
  // when ranks moved.
  void RefreshBelief(double now_s);

  // Allowed types with at least `gang` free devices, ordered by the policy's preference.
  std::vector<model::DeviceTypeId> TypePreference(const JobRecord& r, TypeChoice choice,
                                                  const std::vector<int32_t>& capacity) const;
  // TypePreference(...)[0] without building the list (no allocation); -1 when empty.
  int32_t BestType(const JobRecord& r, TypeChoice choice,
                   const std::vector<int32_t>& capacity) const;
  std::optional<std::vector<model::DeviceId>> PlaceOn(const JobRecord& r,
                                                      model::DeviceTypeId type) const;
  std::optional<Placement> TryStart(int32_t id, TypeChoice choice, double now_s);

  // Starts queued jobs in policy order on free devices. `fill`: skip jobs that do not fit
  // (at most kFillScan in a row) instead of the policy's blocking rule.
  void DecideQueueOrder(double now_s, bool fill, Decision& out);
  void DecidePreemptive(double now_s, Decision& out);
  // Earliest time `gang` devices of `type` are free if running jobs end as estimated, and how
  // many of that type are free then beyond the gang (EASY's shadow time and extra devices).
  std::pair<double, int32_t> ShadowTime(model::DeviceTypeId type, int32_t gang, double now_s) const;
  // Type per selected job maximizing summed score (greedy on regret); -1 where none fits.
  std::vector<int32_t> AssignByRegret(const std::vector<int32_t>& jobs,
                                      std::vector<int32_t> capacity, double now_s) const;
  int32_t TotalFree() const;
  // Checkpoints load across these types (same vendor, so the same software stack family).
  bool SameVendor(model::DeviceTypeId a, model::DeviceTypeId b) const;
  // The scorers' value of `type` for `r`, less the work a move there would redo: a job with
  // progress whose checkpoint does not load on another vendor's stack restarts there.
  double ScoreOf(const JobRecord& r, model::DeviceTypeId type) const;
  // 1, or the share of the work on `type` that is new: remaining / (done + remaining) when the
  // job has progress whose checkpoint does not load there (another vendor, not portable).
  double NewWorkShare(const JobRecord& r, model::DeviceTypeId type) const;
  // EASY's view of a job's remaining work: infinite while nothing at all is known about it.
  double BackfillRemainingWork(const JobRecord& r, double now_s) const;

  // Space sharing (see SchedulerOptions::space_sharing).
  bool CanShare(const JobRecord& r) const;
  // Key of the solo-host index for a running job: (type, gang, job type index).
  std::tuple<int32_t, int32_t, int32_t> SoloKey(int32_t id) const;
  void IndexSolo(int32_t id);
  void UnindexSolo(int32_t id);
  // Pair throughput of (a, b) on `type` relative to each running alone, from the profile;
  // nullopt when it has no entry or either makes no progress. Cached by job types.
  std::optional<std::pair<double, double>> PairFactors(int32_t a, int32_t b,
                                                       model::DeviceTypeId type);
  // `id` leaves its devices (stop, finish, requeue): a guest just goes; a host with a guest
  // hands them to it; a host alone releases them. The partner continues alone.
  void LeaveDevices(int32_t id, double now_s);
  // Books the partner-independent progress and service of running `id` up to now, before its
  // speed changes.
  void Rebase(int32_t id, double now_s);
  // A host that must give up its devices stops its guest first (preempted, back to the queue).
  void StopGuestOf(int32_t host, double now_s, Decision& out);
  // Queued job `id` joins running `host` (same devices).
  Placement Join(int32_t id, int32_t host, double own_factor, double host_factor, double now_s);
  // Moves guests to free devices where they run faster alone, then pairs queued jobs with
  // running ones (bounded scans).
  void DecidePairs(double now_s, Decision& out);

  const model::Cluster& cluster_;
  const model::ThroughputProfile* profile_;
  std::unique_ptr<Policy> policy_;
  std::vector<std::unique_ptr<Filter>> filters_;
  ScorerSet scorers_;
  SchedulerOptions options_;
  ClusterState state_;

  std::vector<JobRecord> records_;  // by JobId; phase kDone once finished or dropped
  std::vector<std::vector<model::DeviceId>> pinned_;  // by JobId: resolved pinned devices
  std::vector<int32_t> queue_, running_;              // ids, unordered
  std::vector<int32_t> pos_;                          // id -> position in queue_ or running_
  std::set<QueueKey> sorted_queue_;                   // queued jobs by KeyOf(job, 0)
  std::vector<QueueKey> queue_key_;                   // by JobId: its key in sorted_queue_
  SizeBelief belief_;
  std::vector<int32_t> vendor_of_type_;  // by catalog type id
  int64_t next_seq_ = 0;                 // JobRecord::seq of the next submission
  // Time of the decision under way (ScoreOf needs a running job's progress).
  double decision_s_ = 0;
  double last_refresh_s_ = -1e300;
  double last_upgrade_s_ = -1e300;     // last full decision made with nobody queued
  double last_full_s_ = -1e300;        // last full preemptive decision
  std::vector<int32_t> owner_;         // device -> job id, -1 if none
  std::vector<PlacementHints> hints_;  // by JobId: data locality
  std::vector<int32_t> scratch_;       // by JobId: type assigned in a decision, -2 when none
  std::vector<char> moved_flag_;
  // DecidePreemptive's working lists, kept to reuse their memory.
  std::vector<QueueKey> keys_;
  std::vector<int32_t> selected_,
      tentative_;  // by JobId: preempted to move in this decision (else 0)

  // Allocation policies: solve (when the set of jobs or devices changed) and realize the
  // shares with Gavel's priority rule; see scheduler.cc.
  void DecideAllocation(double now_s, Decision& out);
  void LogAllocation(std::string line);
  const AllocationPolicy* allocator_ = nullptr;  // policy_ when it is one, else null
  std::shared_ptr<LpSolver> lp_solver_;
  std::vector<double> lp_share_;     // by JobId x type: target share in force
  std::vector<double> lp_received_;  // by JobId x type: seconds run there (since arrival)
  std::vector<double> lp_present_;   // by JobId: seconds active (queued or running)
  std::vector<int32_t> lp_jobs_;     // ids the shares in lp_share_ were solved for
  std::vector<double> lp_capacity_;  // capacity they were solved for
  double lp_last_s_ = -1;            // time of the last DecideAllocation
  // A finished job's slot was given to a new job: the same ids may name other jobs, so the
  // next allocation decision solves again.
  bool lp_slot_reused_ = false;
  std::vector<std::string> lp_log_;
  int64_t lp_failures_ = 0, lp_solves_ = 0;

  // Space sharing: running jobs alone on their devices that may host a guest, by SoloKey;
  // job types interned (by JobId, -1: none); the pair factor cache by (job type a, job type b,
  // gang, device type); running guests; speed changes not yet taken by the driver.
  std::map<std::tuple<int32_t, int32_t, int32_t>, std::set<int32_t>> solo_;
  std::map<std::string, int32_t> job_type_index_;
  std::vector<int32_t> job_type_of_;
  std::map<std::tuple<int32_t, int32_t, int32_t, int32_t>, std::optional<std::pair<double, double>>>
      pair_cache_;
  std::set<int32_t> guests_;
  std::vector<model::JobId> speed_changes_;
};

}  // namespace hetsched::sched
