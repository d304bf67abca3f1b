// SchedulerCore: the job bookkeeping behind sched::Scheduler, shared by its decision strategies
// (sched/strategy.h) and space sharing (sched/space_sharing.h): job records, the queue index,
// running jobs, device owners, and the primitives that start and stop jobs. Internal to sched/.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "model/cluster.h"
#include "model/profile.h"
#include "sched/cluster_state.h"
#include "sched/decision.h"
#include "sched/job_record.h"
#include "sched/move_candidates.h"
#include "sched/placement.h"
#include "sched/policy.h"
#include "sched/preemption_price.h"
#include "sched/scheduler_options.h"
#include "sched/scorers.h"
#include "sched/size_belief.h"
#include "sched/tenant_shares.h"

namespace hetsched::sched {

// What the core tells space sharing (sched/space_sharing.h implements it) as jobs start, stop
// running, leave their devices or are preempted: its pair bookkeeping stays out of the core.
// An interface, so that the core does not depend on space sharing, which builds on the core.
class SharingHooks {
 public:
  virtual ~SharingHooks() = default;
  virtual void OnStarted(int32_t id) = 0;
  virtual void OnLeftRunning(int32_t id) = 0;
  // False when `id` ran alone (the core releases its devices).
  virtual bool LeavePair(int32_t id, double now_s) = 0;
  virtual void BeforePreempt(int32_t id, double now_s, Decision& out) = 0;
};

// Not thread-safe; owned by one Scheduler. Job ids index every per-job table. Keeps references
// to `cluster` and `profile`, as Scheduler does.
class SchedulerCore {
 public:
  // Policy key, arrival, submission order (ties never depend on which slot a job got), id.
  using QueueKey = std::tuple<double, double, int64_t, int32_t>;

  SchedulerCore(const model::Cluster& cluster, const model::ThroughputProfile* profile,
                std::unique_ptr<Policy> policy, ScorerSet scorers, const SchedulerOptions& options,
                PreemptionPrice price);
  SchedulerCore(const SchedulerCore&) = delete;
  SchedulerCore& operator=(const SchedulerCore&) = delete;

  // Space sharing, when on (not owned): told when jobs start, leave devices or are preempted.
  void set_sharing(SharingHooks* sharing) { sharing_ = sharing; }

  const model::Cluster& cluster() const { return cluster_; }
  const model::ThroughputProfile* profile() const { return profile_; }
  const Policy& policy() const { return *policy_; }
  const SchedulerOptions& options() const { return options_; }
  const PreemptionPrice& price() const { return price_; }
  // Running `r` may be stopped for another job's sake by a time-slicing policy: its quantum is
  // over (PreemptionPrice::InQuantum).
  bool QuantumOver(const JobRecord& r, double now_s) const {
    return !price_.InQuantum(r.run_start_s, now_s);
  }
  // The same of the running job `job` was copied from.
  bool QuantumOver(const RunningKeyInputs& job, double now_s) const {
    return !price_.InQuantum(job.run_start_s, now_s);
  }
  // Moving running `r` from its type to `to` pays (PreemptionPrice::MovePays) on its expected
  // remaining work; moves that restart it on another vendor count the redone work too.
  bool MovePays(const JobRecord& r, model::DeviceTypeId to, double now_s) const;
  ClusterState& state() { return state_; }
  const ClusterState& state() const { return state_; }
  SizeBelief& belief() { return belief_; }
  const SizeBelief& belief() const { return belief_; }
  JobRecord& record(int32_t id) { return records_[id]; }
  const JobRecord& record(int32_t id) const { return records_[id]; }
  const std::vector<JobRecord>& records() const { return records_; }  // by JobId
  // Size of the per-job tables: every id submitted so far is below it.
  size_t slots() const { return records_.size(); }
  const std::vector<int32_t>& queue() const { return queue_; }      // queued ids, unordered
  const std::vector<int32_t>& running() const { return running_; }  // running ids, unordered
  // Whether `id` is in queue().
  bool InQueue(int32_t id) const {
    const size_t p = static_cast<size_t>(pos_[id]);
    return records_[id].phase == JobPhase::kQueued && p < queue_.size() && queue_[p] == id;
  }
  // Where running `id` is in running().
  int32_t running_position(int32_t id) const { return pos_[id]; }
  // Queued jobs by KeyOf(job, 0), i.e. in policy order. Starting a job erases only its own
  // entry, so a walk may start jobs as it goes. After a belief refresh the first read sorts it
  // (in time O(queued jobs x log)).
  const std::set<QueueKey>& sorted_queue() const;
  // Queued `id`'s key in sorted_queue(): KeyOf(record(id), 0).
  QueueKey queue_key(int32_t id) const {
    return keyed_as_new(id) ? NewJobKey(queue_key_[id]) : queue_key_[id];
  }
  // Queued `id` was keyed as a job that never ran (SizeBelief::RanksAsNew under a policy that
  // keys_by_rank): its key is NewJobKey of any key it had, and a belief refresh leaves it be.
  bool keyed_as_new(int32_t id) const { return own_key_pos_[id] < 0; }
  // The key now of the queued job keyed as new whose key (of any belief) was `filed`.
  QueueKey NewJobKey(const QueueKey& filed) const {
    return {policy_->KeyFromRank(new_job_rank_, std::get<1>(filed), 0), std::get<1>(filed),
            std::get<2>(filed), std::get<3>(filed)};
  }
  // Counts BeginDecision's re-filings of the queue (every queued job's key moved: queue_key is
  // the new one at once, sorted_queue when next read).
  int64_t queue_refiles() const { return queue_refiles_; }
  int32_t owner(model::DeviceId device) const { return owner_[device.value()]; }  // -1: none
  // A node appended to the cluster: the state and the owner table cover its devices.
  void AddNode(model::NodeId node);
  // Space sharing's hand-over: `id` now owns `devices` (already allocated).
  void SetOwner(const std::vector<model::DeviceId>& devices, int32_t id);
  // False for a space-sharing guest: it runs on its host's devices, frees none when it ends,
  // and only SpaceSharing moves it (reallocations leave it out).
  static bool HoldsDevices(const JobRecord& r) { return !r.guest; }

  // Admission: Grow before building the record (the tables cover `id`), Admit once accepted
  // (reserves its pinned devices and queues it), Retire when it ends (its slot may be reused).
  void Grow(int32_t id);
  // Room for ids below `jobs` in every table indexed by JobId, so that admitting that many
  // (a daemon's restart) reallocates none of them as Grow goes.
  void Reserve(size_t jobs);
  void Admit(int32_t id, JobRecord record, std::vector<model::DeviceId> pinned, double now_s);
  void Retire(int32_t id);
  // Counts admissions and retirements: changes when the set of jobs does.
  int64_t job_set_version() const { return job_set_version_; }

  QueueKey KeyOf(const JobRecord& r, double now_s) const;
  // KeyOf the record of the running job `job` was copied from (still running with the same
  // progress): from the copy where the policy keys_by_rank, else from the record.
  QueueKey KeyOf(const RunningKeyInputs& job, double now_s) const {
    if (!keys_by_rank_) return KeyOf(records_[job.id], now_s);
    return {policy_->KeyFromRank(belief_.Rank(job, now_s), job.arrival_s, now_s), job.arrival_s,
            job.seq, job.id};
  }
  void Enqueue(int32_t id, double now_s);
  void Dequeue(int32_t id);
  // Starts a decision at `now_s`: the time NewWorkShare reads; refreshes the size belief at
  // most every preempt interval and re-sorts the queue index when ranks moved.
  void BeginDecision(double now_s);

  // Job `id` leaves the queue and runs on `devices` (copied into its record, whose storage a
  // job that ran before reuses) at `rate` from now; true when it ran before (a resume). Start
  // and SpaceSharing's Join build on it.
  bool MarkRunning(int32_t id, model::DeviceTypeId type,
                   const std::vector<model::DeviceId>& devices, double rate, double now_s);
  // Starts job `id` on `devices` (allocates them, marks it running).
  Placement Start(int32_t id, model::DeviceTypeId type, std::vector<model::DeviceId> devices,
                  double now_s, bool migrated);
  // Preempts running `id` (its guest first, under space sharing): counted and reported in `out`.
  void Preempt(int32_t id, double now_s, Decision& out);
  // Books a running job's progress and service up to now and takes it off its devices; true
  // when it held them alone and released them (false: a guest left, or a host handed them on).
  bool Leave(int32_t id, double now_s);
  // Allocates `devices` to `id` / frees them, in the cluster state and the owner table, with
  // the host cores and memory its workers take on their nodes (HostRequestOf its job).
  void Hold(int32_t id, const std::vector<model::DeviceId>& devices);
  void Release(int32_t id, const std::vector<model::DeviceId>& devices);
  // The host part alone: a space-sharing guest runs on devices its host holds, but its workers
  // take their own cores and memory.
  void TakeHost(int32_t id, const std::vector<model::DeviceId>& devices);
  void ReturnHost(int32_t id, const std::vector<model::DeviceId>& devices);

  // Expected steps left of record `r` (SizeBelief::ExpectedRemaining in steps).
  double RemainingWork(const JobRecord& r, double now_s) const;
  int32_t TotalFree() const;
  // Allowed types with at least `gang` of `capacity`, ordered by the policy's preference.
  std::vector<model::DeviceTypeId> TypePreference(const JobRecord& r, TypeChoice choice,
                                                  const std::vector<int32_t>& capacity) const;
  // TypePreference(...)[0] without building the list (no allocation); -1 when empty.
  int32_t BestType(const JobRecord& r, TypeChoice choice,
                   const std::vector<int32_t>& capacity) const;
  // Free, up devices of `type` for the whole gang (its pinned ones, if any), each on a node whose
  // host holds one more of its workers, or nullopt.
  std::optional<std::vector<model::DeviceId>> PlaceOn(const JobRecord& r,
                                                      model::DeviceTypeId type) const;
  // The same as if each worker asked `host` of its node instead of what the job asks.
  std::optional<std::vector<model::DeviceId>> PlaceOn(const JobRecord& r, model::DeviceTypeId type,
                                                      const HostRequest& host) const;
  // The scorers' value of `type` for `r`, less the work a move there would redo: a job with
  // progress whose checkpoint does not load on another vendor's stack restarts there.
  double ScoreOf(const JobRecord& r, model::DeviceTypeId type) const;
  // 1, or the share of the work on `type` that is new: remaining / (done + remaining) when the
  // job has progress whose checkpoint does not load there (another vendor, not portable).
  double NewWorkShare(const JobRecord& r, model::DeviceTypeId type) const;
  // `r`'s checkpoint loads on `type` (portable, same vendor, or it never ran): NewWorkShare
  // there is 1 whatever its progress.
  bool CheckpointLoadsOn(const JobRecord& r, model::DeviceTypeId type) const {
    return r.job->portable_checkpoint || !r.type.valid() || SameVendor(r.type, type);
  }
  bool pinned(int32_t id) const { return !pinned_[id].empty(); }
  // Fair share between tenants (SchedulerOptions::tenants); null without tenants.
  TenantShares* tenants() { return tenants_.get(); }
  // The running jobs a full decision might move, for a preemptive greedy-fastest policy whose
  // order does not change with time and whose scores depend on the job alone, rigid jobs and
  // no space sharing (elsewhere null): filed as they start, forgotten as they stop.
  const MoveCandidates* move_candidates() const { return moves_.get(); }
  // For a strategy that keeps its own index of running jobs (sched/running_order.h): once
  // turned on, the ids of jobs that started or stopped running, or whose progress rate was
  // set, are kept (repeats included) until taken.
  void TrackRunningChanges() { track_running_changes_ = true; }
  void NoteRunningChanged(int32_t id) {
    if (track_running_changes_) running_changes_.push_back(id);
  }
  const std::vector<int32_t>& running_changes() const { return running_changes_; }
  void ClearRunningChanges() { running_changes_.clear(); }
  // The same for the queue: once turned on, the ids of jobs queued or taken off the queue are
  // kept (repeats included) until taken.
  void TrackQueueChanges() { track_queue_changes_ = true; }
  // Queued `id` changed its class without leaving the queue (an elastic resize: its gang,
  // speeds and allowed types): kept as a change like a job queued or taken off the queue.
  void NoteQueueChanged(int32_t id) {
    if (track_queue_changes_) queue_changes_.push_back(id);
  }
  const std::vector<int32_t>& queue_changes() const { return queue_changes_; }
  void ClearQueueChanges() { queue_changes_.clear(); }

 private:
  // Stops a running job: it is queued, or kStopping under stop_holds_devices.
  void Stop(int32_t id, double now_s);
  // After a belief refresh (BeginDecision): every queued job's key anew (one rank for those
  // keyed as new, a key each for the others), the index stale.
  void RefileQueue();
  // Re-files the stale index under the queued jobs' keys.
  void SortQueue() const;
  void AddRunning(int32_t id);
  void RemoveRunning(int32_t id);
  // What MoveCandidates files for running `id`.
  void FileMoveCandidate(int32_t id);
  // Checkpoints load across these types (same vendor, so the same software stack family).
  bool SameVendor(model::DeviceTypeId a, model::DeviceTypeId b) const;

  const model::Cluster& cluster_;
  const model::ThroughputProfile* profile_;
  std::unique_ptr<Policy> policy_;
  bool keys_by_rank_;  // policy_->keys_by_rank()
  ScorerSet scorers_;
  SchedulerOptions options_;
  PreemptionPrice price_;
  ClusterState state_;
  SharingHooks* sharing_ = nullptr;

  std::vector<JobRecord> records_;  // by JobId; phase kDone once finished or dropped
  std::vector<std::vector<model::DeviceId>> pinned_;  // by JobId: resolved pinned devices
  std::vector<int32_t> queue_, running_;              // ids, unordered
  std::vector<int32_t> pos_;                          // id -> position in queue_ or running_
  mutable std::set<QueueKey> sorted_queue_;           // queued jobs by KeyOf(job, 0)
  // By JobId: its key in sorted_queue_; for a job keyed as new, the one it was filed under.
  std::vector<QueueKey> queue_key_;
  // Queued ids with a key of their own (not keyed as new), unordered, and by JobId the
  // position in it of each (-1: keyed as new). A refresh re-keys these alone.
  std::vector<int32_t> own_key_queue_, own_key_pos_;
  double new_job_rank_ = 0;  // the rank of the jobs keyed as new (belief_.NewJobRank())
  // By JobId: its entry in sorted_queue_ while queued and the index is not stale, so that
  // Dequeue erases it without a search by key.
  mutable std::vector<std::set<QueueKey>::iterator> queue_entry_;
  std::vector<int32_t> owner_;         // device -> job id, -1 if none
  std::vector<PlacementHints> hints_;  // by JobId: data locality
  // A refresh re-keyed the queue since sorted_queue_ was last read: until read it is left
  // alone, neither in order nor holding the queued jobs (SortQueue re-files it).
  mutable bool sorted_queue_stale_ = false;
  SizeBelief belief_;
  std::vector<int32_t> vendor_of_type_;  // by catalog type id
  // Time of the decision under way (NewWorkShare needs a running job's progress).
  double decision_s_ = 0;
  double last_refresh_s_ = -1e300;
  std::unique_ptr<TenantShares> tenants_;
  std::unique_ptr<MoveCandidates> moves_;
  int64_t job_set_version_ = 0;
  bool track_running_changes_ = false;
  std::vector<int32_t> running_changes_;
  int64_t queue_refiles_ = 0;
  bool track_queue_changes_ = false;
  std::vector<int32_t> queue_changes_;
};

}  // namespace hetsched::sched
