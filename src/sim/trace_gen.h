// Synthetic traces with Gavel's continuous-arrival job mix (Narayanan et al., OSDI 2020):
// Poisson arrivals, job types uniform over the profile's single-worker templates, Gavel's
// duration distribution, and optionally its multi-GPU scale factors.
#pragma once

#include <cstdint>
#include <string>

#include "model/job.h"
#include "model/profile.h"
#include "util/status.h"

namespace hetsched::sim {

struct GavelTraceOptions {
  double rate_per_hour = 1;  // mean arrivals per hour (Poisson)
  int64_t jobs = 100;
  uint64_t seed = 0;
  bool multi_gpu = false;  // scale factors 1/2/4/8 with probability 0.7/0.1/0.15/0.05
  // Durations are defined on this type: steps = duration x its isolated throughput.
  std::string reference_device = "v100-32g";
};

// Job i: type uniform over the job types the profile has at scale 1 on the reference device;
// duration 60 x 10^U(1.5, 3) s with probability 0.8, else 60 x 10^U(3, 4) s; with multi_gpu,
// templates the profile has at scale 2 draw a scale factor (others stay at 1); work = duration
// x reference throughput at that scale (rounded up); arrival 0 for the first job, then
// exponential gaps of mean 3600 / rate. Stacks {cuda}, as Gavel's jobs are CUDA programs.
util::Result<model::Workload> GenerateGavelTrace(const model::ThroughputProfile& profile,
                                                 const GavelTraceOptions& options);

}  // namespace hetsched::sim
