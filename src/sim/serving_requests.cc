// The serving simulation's requests (sim/serving.h): a service's requests over the day, the
// same arrivals warped to a constant rate for probing one replica, and the split of a workload
// into services and the rest.
#include <fmt/format.h>

#include <algorithm>

#include "model/io/azure_trace_reader.h"
#include "sim/serving.h"
#include "sim/serving_internal.h"
#include "util/source_location.h"

namespace hetsched::sim {

std::string ServiceError(const model::Job& job, const std::string& problem) {
  if (job.origin.line <= 0 || job.origin.file == nullptr) {
    return fmt::format("service '{}': {}", job.name, problem);
  }
  return util::FormatInputError({*job.origin.file, job.origin.line, job.origin.column},
                                fmt::format("jobs[{}]", job.origin.entry),
                                fmt::format("service '{}': {}", job.name, problem));
}

bool HasServices(const model::Workload& workload) {
  return std::any_of(workload.jobs.begin(), workload.jobs.end(),
                     [](const model::Job& j) { return j.kind == model::JobKind::kService; });
}

model::Workload WithoutServices(const model::Workload& workload) {
  model::Workload rest;
  for (const model::Job& job : workload.jobs) {
    if (job.kind == model::JobKind::kService) continue;
    rest.jobs.push_back(job);
    rest.jobs.back().id = model::JobId(static_cast<int32_t>(rest.jobs.size() - 1));
  }
  return rest;
}

util::Result<std::vector<model::InferenceRequest>> RequestsOf(const model::Job& service,
                                                              double horizon_s, uint64_t seed) {
  const model::ServiceSpec& spec = *service.service;
  std::vector<model::InferenceRequest> trace;
  if (!spec.requests_file.empty()) {
    ASSIGN_OR_RETURN(trace, model::io::LoadAzureTrace(spec.requests_file));
  }
  if (spec.rate.empty()) return model::LoopTrace(trace, 0, horizon_s);
  auto curve = model::MakeRateCurve(spec.rate);
  if (!curve.ok()) {
    return util::Status::InvalidArgument(ServiceError(service, curve.status().message()));
  }
  return model::GenerateRequests(*curve, 0, horizon_s, trace, spec.input_tokens, spec.output_tokens,
                                 seed);
}

std::vector<model::InferenceRequest> AtConstantRate(
    std::span<const model::InferenceRequest> requests, const model::RateCurve* curve, double rate,
    size_t count) {
  std::vector<model::InferenceRequest> out(requests.begin(),
                                           requests.begin() + std::min(count, requests.size()));
  if (out.empty() || !(rate > 0)) return {};
  // Where each request sits in a process of one request per second: the curve's expected
  // count up to it, or its time at the requests' own mean rate.
  const double first = out.front().arrival_s;
  const double span = out.back().arrival_s - first;
  const double mean_rate = span > 0 ? static_cast<double>(out.size() - 1) / span : 0;
  const double first_u = curve != nullptr ? curve->Integral(0, first) : 0;
  for (model::InferenceRequest& q : out) {
    const double u = curve != nullptr ? curve->Integral(0, q.arrival_s) - first_u
                                      : (q.arrival_s - first) * mean_rate;
    q.arrival_s = u / rate;
  }
  return out;
}

}  // namespace hetsched::sim
