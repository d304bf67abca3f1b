// Services and their replicas kept in the daemon's database, so that a restarted daemon carries
// on with them (docs/serving-live.md, "Restarts").
#include <nlohmann/json.hpp>

#include "daemon/job_request.h"
#include "daemon/service.h"
#include "daemon/serving_loop.h"
#include "daemon/serving_loop_internal.h"

namespace hetsched::svc {

namespace {

// Where the services are kept in the database (Service::PutValue).
constexpr const char* kServicesKey = "serving_services";

}  // namespace

void ServingLoop::Persist() {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& [name, s] : services_) {
    nlohmann::json replicas = nlohmann::json::array();
    for (const Replica& r : s->replicas) {
      replicas.push_back({{"id", r.id},
                          {"job", r.job},
                          {"port", r.port},
                          {"shape", r.shape},
                          {"draining", r.draining}});
    }
    nlohmann::json intervals = nlohmann::json::array();
    for (const auto& [rate, source] : s->interval_rates) {
      intervals.push_back({rate, static_cast<int>(source)});
    }
    all.push_back({{"spec", s->spec_json},
                   {"next_id", s->next_id},
                   {"replicas", replicas},
                   {"interval_rates", intervals},
                   {"measured_tokens", {s->measured_input_tokens, s->measured_output_tokens}},
                   {"drains_held_until", s->drains_held_until_s}});
  }
  if (auto st = service_->PutValue(kServicesKey, all.dump()); !st.ok()) {
    logger_->Error("saving the services failed", {{"error", st.message()}});
  }
  dirty_ = false;
}

void ServingLoop::Restore() {
  auto stored = service_->GetValue(kServicesKey);
  if (!stored.ok() || !*stored) return;
  const nlohmann::json all = nlohmann::json::parse(**stored, nullptr, false);
  if (!all.is_array()) return;
  const double now = service_->WallNow();
  for (const nlohmann::json& entry : all) {
    // Written by Persist: a service as it was accepted, its replicas as they were started.
    const std::string spec = entry.value("spec", "");
    auto request = ParseJobRequest(spec, service_->cluster().catalog);
    auto s = request.ok() ? MakeServed(std::move(request->job), spec)
                          : util::Result<std::unique_ptr<Served>>(request.status());
    if (!s.ok()) {
      logger_->Error("a stored service no longer reads", {{"error", s.status().message()}});
      continue;
    }
    Served& served = **s;
    served.next_id = entry.value("next_id", 0);
    for (const nlohmann::json& r : entry.value("interval_rates", nlohmann::json::array())) {
      if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number_integer())
        continue;
      const int source = r[1].get<int>();
      if (source < 0 || source > static_cast<int>(Served::From::kGateway)) continue;
      served.interval_rates.emplace_back(r[0].get<double>(), static_cast<Served::From>(source));
    }
    const nlohmann::json tokens = entry.value("measured_tokens", nlohmann::json::array());
    if (tokens.size() == 2 && tokens[0].is_number() && tokens[1].is_number() &&
        tokens[0].get<double>() >= 0 && tokens[1].get<double>() >= 0) {
      served.measured_input_tokens = tokens[0].get<double>();
      served.measured_output_tokens = tokens[1].get<double>();
    }
    if (const auto held = entry.find("drains_held_until");
        held != entry.end() && held->is_number()) {
      served.drains_held_until_s = held->get<double>();
    }
    for (const nlohmann::json& r : entry.value("replicas", nlohmann::json::array())) {
      Replica replica;
      replica.id = r.value("id", 0);
      replica.job = r.value("job", "");
      replica.port = r.value("port", 0);
      replica.shape = r.value("shape", 0);
      replica.draining = r.value("draining", false);
      replica.state = "starting";
      replica.submitted_s = now;
      if (replica.shape < 0 || replica.shape >= static_cast<int32_t>(served.shapes.size()))
        continue;
      served.replicas.push_back(std::move(replica));
    }
    logger_->Info(
        "service recovered",
        {{"service", served.job.name}, {"replicas", static_cast<int64_t>(served.replicas.size())}});
    const std::string name = served.job.name;
    services_[name] = std::move(*s);
  }
}

}  // namespace hetsched::svc
