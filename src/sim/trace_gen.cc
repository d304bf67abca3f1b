#include "sim/trace_gen.h"

#include <fmt/format.h>

#include <cmath>
#include <random>

namespace hetsched::sim {

util::Result<model::Workload> GenerateGavelTrace(const model::ThroughputProfile& profile,
                                                 const GavelTraceOptions& o) {
  if (!(o.rate_per_hour > 0) || !std::isfinite(o.rate_per_hour)) {
    return util::Status::InvalidArgument(
        fmt::format("--rate {}: expected jobs per hour > 0", o.rate_per_hour));
  }
  if (o.jobs < 1 || o.jobs > 10'000'000) {
    return util::Status::InvalidArgument(fmt::format("--jobs {}: expected 1 to 10000000", o.jobs));
  }
  std::vector<std::string> templates;
  std::vector<char> distributed;
  for (const std::string& t : profile.JobTypes()) {
    if (!profile.Isolated(t, 1, o.reference_device)) continue;
    templates.push_back(t);
    distributed.push_back(profile.Isolated(t, 2, o.reference_device).has_value() ? 1 : 0);
  }
  if (templates.empty()) {
    return util::Status::InvalidArgument(
        fmt::format("the throughput file has no job type at scale 1 on {}", o.reference_device));
  }
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<size_t> pick(0, templates.size() - 1);
  std::exponential_distribution<double> gap(o.rate_per_hour / 3600.0);
  model::Workload w;
  w.jobs.reserve(o.jobs);
  double arrival = 0;
  for (int64_t i = 0; i < o.jobs; ++i) {
    if (i > 0) arrival += gap(rng);
    const size_t k = pick(rng);
    const double exponent = unit(rng) < 0.8 ? 1.5 + 1.5 * unit(rng) : 3.0 + unit(rng);
    const double duration = 60.0 * std::pow(10.0, exponent);
    int scale = 1;
    if (o.multi_gpu && distributed[k]) {
      const double u = unit(rng);
      scale = u < 0.7 ? 1 : u < 0.8 ? 2 : u < 0.95 ? 4 : 8;
      if (scale > 1 && !profile.Isolated(templates[k], scale, o.reference_device)) scale = 1;
    }
    const double speed = *profile.Isolated(templates[k], scale, o.reference_device);
    model::Job j;
    j.id = model::JobId(static_cast<int32_t>(i));
    j.name = fmt::format("job-{}", i);
    j.job_type = templates[k];
    j.gang_size = j.min_workers = j.max_workers = scale;
    j.stacks = {{"cuda", ""}};
    j.work = std::ceil(duration * speed);
    j.arrival_s = arrival;
    w.jobs.push_back(std::move(j));
  }
  return w;
}

}  // namespace hetsched::sim
