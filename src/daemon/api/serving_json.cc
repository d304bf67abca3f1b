#include "daemon/api/serving_json.h"

#include <optional>

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
            {"replicas", std::move(plan_replicas)},
            {"why", v.plan.why}}},
          {"message", v.message}};
}

}  // namespace hetsched::svc
