#include "daemon/api/serving_json.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "daemon/job_request.h"

namespace hetsched::svc {

namespace {

using json = nlohmann::json;

json SecondsOrNull(const std::optional<double>& s) { return s ? json(*s) : json(nullptr); }

}  // namespace

json ServingJson(const ServingView& v) {
  json replicas = json::array();
  for (const ReplicaView& r : v.replicas) {
    replicas.push_back({{"job", r.job},
                        {"endpoint", r.endpoint},
                        {"state", r.state},
                        {"node", r.node},
                        {"device_type", r.device_type},
                        {"tp", r.tp},
                        {"weight", r.weight},
                        {"message", r.message}});
  }
  const MeasuredLoad& m = v.measured;
  json plan_replicas = json::object();
  for (const auto& [shape, count] : v.plan.replicas) plan_replicas[shape] = count;
  return {{"name", v.name},
          {"kind", "service"},
          {"model", v.model},
          {"slo",
           {{"ttft_s", v.slo.ttft_s}, {"tpot_s", v.slo.tpot_s}, {"percentile", v.slo.percentile}}},
          {"replicas", std::move(replicas)},
          {"measured",
           {{"window_s", m.window_s},
            {"requests_per_s", m.requests_per_s},
            {"ttft_p50_s", SecondsOrNull(m.ttft_p50_s)},
            {"ttft_slo_percentile_s", SecondsOrNull(m.ttft_slo_s)},
            {"tpot_p50_s", SecondsOrNull(m.tpot_p50_s)},
            {"tpot_slo_percentile_s", SecondsOrNull(m.tpot_slo_s)},
            {"running", m.running},
            {"waiting", m.waiting},
            {"mean_input_tokens", m.mean_input_tokens},
            {"mean_output_tokens", m.mean_output_tokens}}},
          {"plan",
           {{"planned_at", v.plan.planned_at_s > 0 ? json(v.plan.planned_at_s) : json(nullptr)},
            {"forecast_requests_per_s", v.plan.forecast_requests_per_s},
            {"measured_requests_per_s", v.plan.measured_requests_per_s},
            {"interval_rates", v.plan.interval_rates},
            {"burst_rates", v.plan.burst_rates},
            {"burst_window_s", v.plan.burst_window_s},
            {"replicas", std::move(plan_replicas)},
            {"why", v.plan.why}}},
          {"gateway_load",
           v.pushed_requests_per_s
               ? json({{"requests_per_s", *v.pushed_requests_per_s}, {"at", v.pushed_at_s}})
               : json(nullptr)},
          {"message", v.message}};
}

json ServiceEndpointsJson(const ServingView& v) {
  json endpoints = json::array();
  for (const ReplicaView& r : v.replicas) {
    if (r.weight <= 0) continue;
    endpoints.push_back({{"endpoint", r.endpoint},
                         {"weight", r.weight},
                         {"job", r.job},
                         {"node", r.node},
                         {"device_type", r.device_type}});
  }
  const char* state = endpoints.empty() ? "unavailable" : "ready";
  return {{"name", v.name},
          {"state", state},
          {"endpoints", std::move(endpoints)},
          {"message", v.message}};
}

util::Result<double> ParsePushedLoad(std::string_view body) {
  constexpr double kMaxRate = 1e6;
  const std::string expected = fmt::format("a number from 0 to {:g}", kMaxRate);
  ASSIGN_OR_RETURN(json doc, ParseBodyObject(body, R"({"requests_per_s": R})"));
  for (const auto& [key, value] : doc.items()) {
    if (key != "requests_per_s") {
      return util::Status::InvalidArgument(
          fmt::format("request body: {}: unknown field (expected requests_per_s only)", key));
    }
  }
  const auto rate = doc.find("requests_per_s");
  if (rate == doc.end()) {
    return util::Status::InvalidArgument(
        fmt::format("request body: requests_per_s: missing (expected {})", expected));
  }
  if (!rate->is_number() || !std::isfinite(rate->get<double>()) || rate->get<double>() < 0 ||
      rate->get<double>() > kMaxRate) {
    return util::Status::InvalidArgument(
        fmt::format("request body: requests_per_s: {} (expected {})", rate->dump(), expected));
  }
  return rate->get<double>();
}

}  // namespace hetsched::svc
