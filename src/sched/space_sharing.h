// SpaceSharing: Gavel's packing (SchedulerOptions::space_sharing). After each decision a queued
// job may join a running job alone on its devices ("host" and "guest") when the profile's pair
// entry says the pair beats running apart; guests move to free devices where they run faster.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "model/job.h"
#include "sched/decision.h"
#include "sched/job_record.h"
#include "sched/scheduler_core.h"

namespace hetsched::sched {

// Not thread-safe; owned by one Scheduler, which creates it only when space sharing is on.
// Keeps a reference to `core`. The pairing lives in JobRecord (partner, guest, pair_speed); the
// core calls the SharingHooks so that its own bookkeeping never looks at pairs.
class SpaceSharing final : public SharingHooks {
 public:
  SpaceSharing(SchedulerCore& core, double min_gain);
  SpaceSharing(const SpaceSharing&) = delete;
  SpaceSharing& operator=(const SpaceSharing&) = delete;

  // Hooks. A job was submitted (even if it is then rejected): its job type is interned.
  void OnSubmit(int32_t id, const model::Job& job);
  // A job started alone on its devices: it may host a guest from now on.
  void OnStarted(int32_t id) override;
  // A job stops running (after LeavePair): it can no longer host.
  void OnLeftRunning(int32_t id) override;
  // `id` leaves its devices (stop, finish, requeue). False when it ran alone (the caller
  // releases them). Else true: a guest just goes; a host hands its devices to its guest; the
  // partner continues alone at its solo speed.
  bool LeavePair(int32_t id, double now_s) override;
  // A host about to be preempted stops its guest first (preempted, back to the queue).
  void BeforePreempt(int32_t id, double now_s, Decision& out) override;

  // After each decision: moves guests to free devices where they run faster alone, then pairs
  // queued jobs with running ones (bounded scans).
  void Decide(double now_s, Decision& out);

  size_t guest_count() const { return guests_.size(); }
  // See Scheduler::TakeSpeedChanges.
  std::vector<model::JobId> TakeSpeedChanges();

 private:
  bool CanShare(const JobRecord& r) const;
  // Key of the solo-host index for a running job: (type, gang, job type index).
  std::tuple<int32_t, int32_t, int32_t> SoloKey(int32_t id) const;
  void IndexSolo(int32_t id);
  void UnindexSolo(int32_t id);
  // Pair throughput of (a, b) on `type` relative to each running alone, from the profile;
  // nullopt when it has no entry or either makes no progress. Cached by job types.
  std::optional<std::pair<double, double>> PairFactors(int32_t a, int32_t b,
                                                       model::DeviceTypeId type);
  // Books the partner-independent progress and service of running `id` up to now, before its
  // speed changes.
  void Rebase(int32_t id, double now_s);
  // Decide's steps: a guest that could run alone on free devices faster than in its pair moves
  // there; queued jobs in policy order each join the running job that makes the best pair.
  void MoveGuestsAlone(double now_s, Decision& out);
  void PairQueued(double now_s, Decision& out);
  // Queued job `id` joins running `host` (same devices).
  Placement Join(int32_t id, int32_t host, double own_factor, double host_factor, double now_s);

  SchedulerCore& core_;
  double min_gain_;
  // Running jobs alone on their devices that may host a guest, by SoloKey.
  std::map<std::tuple<int32_t, int32_t, int32_t>, std::set<int32_t>> solo_;
  // Job types interned (by JobId, -1: none).
  std::map<std::string, int32_t> job_type_index_;
  std::vector<int32_t> job_type_of_;
  // By (job type a, job type b, gang, device type).
  std::map<std::tuple<int32_t, int32_t, int32_t, int32_t>, std::optional<std::pair<double, double>>>
      pair_cache_;
  std::set<int32_t> guests_;                 // running guests
  std::vector<model::JobId> speed_changes_;  // not yet taken by the driver
};

}  // namespace hetsched::sched
