// How long one step of a job takes on a device type, preferring measurements over estimates:
// the job's own throughput table, then a measured profile, then the roofline from its ops.
#pragma once

#include <optional>
#include <string_view>

#include "model/device_type.h"
#include "model/job.h"
#include "model/profile.h"

namespace hetsched::cost {

// Where a step time came from, so that reports can say which numbers are estimates.
enum class SpeedSource { kJobThroughput, kProfile, kRoofline };
std::string_view SpeedSourceName(SpeedSource source);  // "job", "profile", "roofline"

struct StepTime {
  double seconds = 0;  // per step of the whole gang; +infinity: cannot progress on this type
  SpeedSource source = SpeedSource::kRoofline;
};

// Seconds per step of `job` (its gang of job.gang_size workers, each on one device of `type`),
// from the first source that knows:
//  1. job.throughput[name]: steps/s measured for this job, keyed by the type's name or any of
//     its aliases (case-insensitive). A 0 entry means "makes no progress here" (+infinity).
//     With job.unit_speed_assumed instead: 1 step/s on every type that runs the job
//     (model::TypeRunsJob), none on the others.
//  2. profile->Isolated(job.job_type, job.gang_size, name or alias), when `profile` is non-null
//     and the job has a job_type.
//  3. The roofline time of job.ops (per worker, so per step) on `type`
//     (fp16/bf16 when ops->low_precision, else fp32).
// std::nullopt when none applies. Communication between workers is not included: add
// cost::RingAllReduceSeconds(job.sync_bytes_per_step, ...) along the gang's path.
// Non-finite or negative measurements are ignored (the readers reject them).
std::optional<StepTime> EstimateStepTime(const model::Job& job, const model::DeviceType& type,
                                         const model::ThroughputProfile* profile);

// EstimateStepTime(...)->seconds, or std::nullopt.
std::optional<double> StepSeconds(const model::Job& job, const model::DeviceType& type,
                                  const model::ThroughputProfile* profile);

}  // namespace hetsched::cost
