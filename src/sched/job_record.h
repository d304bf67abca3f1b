// JobRecord: the scheduler's view of one submitted job: which device types it may use and how
// fast it runs there, its progress, attained service and current devices.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/catalog.h"
#include "model/cluster.h"
#include "model/job.h"
#include "model/profile.h"

namespace hetsched::sched {

enum class JobPhase { kQueued, kRunning, kDone };

struct JobRecord {
  const model::Job* job = nullptr;  // owned by the driver's Workload; outlives the record
  JobPhase phase = JobPhase::kQueued;
  // Per device type (catalog id): gang steps/s there, 0 where the job may not run there
  // (filtered out, or no throughput known).
  std::vector<double> speed;
  double best_speed = 0;  // max over speed
  // Types the job is allowed to be placed on (filters passed, or any type under ignore-compat).
  std::vector<char> allowed;
  // Under ignore-compat: types the job cannot actually run on (placing it there fails).
  std::vector<char> incompatible;

  // Progress, evaluated lazily: while running, work advances at `rate` steps/s from
  // `progress_since_s` (later than the start when a restore or start-up delay applies).
  double remaining_work = 0;
  double rate = 0;
  double progress_since_s = 0;
  // Attained service in device-seconds, and the same weighted by speed on the type relative
  // to the job's best type (heterogeneity-aware LAS). Accumulated up to `service_since_s`.
  double attained_s = 0;
  double attained_norm_s = 0;
  double service_since_s = 0;

  double queued_since_s = 0;
  double first_start_s = -1;
  model::DeviceTypeId type;              // while running
  std::vector<model::DeviceId> devices;  // while running
  int32_t preemptions = 0;
  // Space sharing: the job running on the same devices (-1: none). The host holds the devices'
  // allocation; its guest joined them and holds nothing (when the host leaves first, the guest
  // becomes the holder). While paired, `pair_speed` is its gang steps/s there instead of speed.
  int32_t partner = -1;
  bool guest = false;
  double pair_speed = 0;

  double RemainingAt(double now_s) const;
  double AttainedAt(double now_s) const;
  double AttainedNormAt(double now_s) const;
  // Estimated seconds to finish on its best type from `now_s`.
  double BestRemainingSeconds(double now_s) const {
    return best_speed > 0 ? RemainingAt(now_s) / best_speed : 0;
  }
};

// Steps/s of the whole gang of `job` on `type`, from the cost model (cost/job_speed.h: the job's
// own measurements, else `profile` at its gang size, else the roofline of its ops). nullopt when
// none knows or the job makes no progress there. Communication is not included.
std::optional<double> GangSpeed(const model::Job& job, const model::DeviceType& type,
                                const model::ThroughputProfile* profile);

}  // namespace hetsched::sched
