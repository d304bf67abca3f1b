// JobRecord: the scheduler's view of one submitted job: which device types it may use and how
// fast it runs there, its progress, attained service and current devices.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/catalog.h"
#include "model/cluster.h"
#include "model/job.h"
#include "model/profile.h"

namespace hetsched::sched {

// kStopping: preempted and writing its checkpoint; it still holds its devices until the driver
// reports it stopped (Scheduler::Stopped), then it is queued.
enum class JobPhase { kQueued, kRunning, kStopping, kDone };

// Where a job's size estimate comes from (sched/size_belief.h learns how right each proved).
enum class EstimateSource : int8_t {
  kNone,       // nothing is known
  kUser,       // the job's `estimate`
  kTimeLimit,  // the job's `time_limit` (users over-ask)
  kDriver,     // given by the driver with the submission (the simulator's --estimates modes)
  kHistory,    // the mean of completed jobs of the same type and gang size
};
inline constexpr int kEstimateSources = 5;

// An estimate handed to Scheduler::Submit: total steps, and where it comes from.
struct SizeEstimate {
  double work = 0;
  EstimateSource source = EstimateSource::kDriver;
};

// What the policy remembers of a live job beyond its progress: attained service (LAS, the
// Gittins ranks) and, under the LP allocation policies, the seconds it ran on each device type
// (Gavel's priorities). A daemon stores it so that a restart resumes where the policy was.
struct JobHistory {
  double attained_s = 0;       // device-seconds
  double attained_norm_s = 0;  // the same weighted by speed relative to the job's best type
  std::vector<std::pair<std::string, double>> received_s;  // by device type name (LP only)
};

struct JobRecord {
  // The scheduler's copy of the job, without its true size: `work` is 0 there (the scheduler
  // sees estimates, never the truth); shared with the caller when that one had no size to
  // hide (Scheduler::Submit). Null before submission and after it ends.
  std::shared_ptr<const model::Job> job;
  bool submitted = false;  // admitted once (stays true after it ends)
  // The fields up to `ref_speed` are those a full decision reads for every job (its policy key,
  // whether it may move, its class in a plan): together they take the record's first 96 bytes,
  // two or three cache lines. `id`, `arrival_s`, `preemptible` and `gang` are copies of the
  // job's, set by SchedulerCore::Admit: read from the job each would be one more cache miss.
  bool preemptible = true;
  // Space sharing: a guest runs on the devices its partner (below) holds.
  bool guest = false;
  // The job's gang size, at least 1: a copy of the job's (SchedulerCore::Admit, and ApplySize
  // as an elastic job changes size), for the walks that read it for every job.
  int32_t gang = 1;
  int64_t seq = 0;  // submission order: ties are broken by it, never by slot id
  JobPhase phase = JobPhase::kQueued;
  int32_t id = -1;
  double arrival_s = 0;
  // Progress, evaluated lazily: while running, work advances at `rate` steps/s from
  // `progress_since_s` (later than the start when a restore or start-up delay applies). This is
  // what the scheduler observes (time run at a known speed), not the job's size.
  double done_work = 0;
  double rate = 0;
  double progress_since_s = 0;
  // Size belief: estimated total steps (0: unknown) and its source; `ref_speed` (best_speed at
  // submission) turns steps into seconds on the fastest type, the unit of sched/size_belief.h.
  double estimated_work = 0;
  EstimateSource estimate_source = EstimateSource::kNone;
  model::DeviceTypeId type;  // while running
  double run_start_s = 0;    // when its current (or last) run started
  double ref_speed = 0;

  // Per device type (catalog id): gang steps/s there, 0 where the job may not run there
  // (filtered out, or no throughput known).
  std::vector<double> speed;
  double best_speed = 0;  // max over speed
  // Types the job is allowed to be placed on (filters passed, or any type under ignore-compat).
  std::vector<char> allowed;
  // Under ignore-compat: types the job cannot actually run on (placing it there fails).
  std::vector<char> incompatible;
  // Attained service in device-seconds, and the same weighted by speed on the type relative
  // to the job's best type (heterogeneity-aware LAS). Accumulated up to `service_since_s`.
  double attained_s = 0;
  double attained_norm_s = 0;
  double service_since_s = 0;

  double queued_since_s = 0;
  double first_start_s = -1;
  std::vector<model::DeviceId> devices;  // while running
  int32_t preemptions = 0;
  // Preempted to move to another type while it writes its checkpoint: its next start counts
  // as a migration.
  bool migrating = false;
  // Waits for devices a full decision reserved for it (sched/reservations.h): the fills
  // between decisions do not start it elsewhere.
  bool reserved = false;
  // Space sharing: the job running on the same devices (-1: none). The host holds the devices'
  // allocation; its guest (`guest`, above) joined them and holds nothing (when the host leaves
  // first, the guest becomes the holder). While paired, `pair_speed` is its gang steps/s there
  // instead of speed.
  int32_t partner = -1;
  double pair_speed = 0;

  // Elastic training (sched/elastic.h): the gang sizes the job may run at, ascending, each with
  // its gang speed and allowed flags per type; empty for a rigid job. `job->gang_size`,
  // `speed` and `allowed` are those of the size it has now; `best_speed` is the best over
  // every size and stays put (the queue order must not move when a size changes).
  struct SizeOption {
    int32_t workers = 0;
    std::vector<double> speed;
    std::vector<char> allowed;
    // The job at this size, made at its first resize to it and kept until the job ends: the
    // queue walk resizes queued jobs before every decision, and a fresh copy of the job each
    // time (a malloc of ~640 bytes, strings and vectors) was most of a fill decision's time.
    std::shared_ptr<const model::Job> job;
  };
  std::vector<SizeOption> sizes;
  int32_t size_cap = 0;       // the largest size it may take now (resizes move it)
  double resized_s = -1e300;  // when it last stopped to change size
  int32_t last_workers = 0;   // devices of its last run: a start at another size resizes

  double DoneAt(double now_s) const;
  // Done work in seconds on the fastest type (the size unit of sched/size_belief.h).
  double DoneSecondsAt(double now_s) const { return ref_speed > 0 ? DoneAt(now_s) / ref_speed : 0; }
  double AttainedAt(double now_s) const;
  double AttainedNormAt(double now_s) const;

  // A running job's done work at `now_s` from its progress fields (one expression for DoneAt
  // and RunningKeyInputs, so both give the same bits).
  static double RunningDoneAt(double done_work, double rate, double progress_since_s,
                              double now_s) {
    return done_work + rate * std::max(0.0, now_s - progress_since_s);
  }
};

// A running job's key inputs under a policy that keys_by_rank (Policy::Key is KeyFromRank of
// SizeBelief::Rank and the arrival, with the arrival, seq and id after it in the queue key),
// and its run start (PreemptionPrice::InQuantum): the fields of its record that those read,
// copied when it is filed in a RunningOrder, so that a full decision keys tens of thousands of
// running jobs from one array instead of a record each (a cache miss each). Good while the
// job runs and no progress of it is set (Scheduler::SetProgress notes a running change, and
// the order re-files the job with a new copy).
struct RunningKeyInputs {
  double arrival_s = 0, done_work = 0, rate = 0, progress_since_s = 0, estimated_work = 0;
  double ref_speed = 0, run_start_s = 0;
  int64_t seq = 0;
  int32_t id = -1;
  EstimateSource estimate_source = EstimateSource::kNone;

  static RunningKeyInputs Of(const JobRecord& r);
  // JobRecord::DoneSecondsAt of the running job.
  double DoneSecondsAt(double now_s) const {
    return ref_speed > 0
               ? JobRecord::RunningDoneAt(done_work, rate, progress_since_s, now_s) / ref_speed
               : 0;
  }
};

// Steps/s of the whole gang of `job` on `type`, from the cost model (cost/job_speed.h: the job's
// own measurements, else `profile` at its gang size, else the roofline of its ops). nullopt when
// none knows or the job makes no progress there. Communication is not included.
std::optional<double> GangSpeed(const model::Job& job, const model::DeviceType& type,
                                const model::ThroughputProfile* profile);

}  // namespace hetsched::sched
