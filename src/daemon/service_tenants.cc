// Service's tenants: GET /v1/tenants' view, the gauges by tenant, and the fair share's usage
// kept across restarts.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daemon/service.h"
#include "daemon/service_internal.h"

namespace hetsched::svc {

util::Status Service::AddTenantMetrics() {
  if (!options_.scheduler.tenants) return util::Status::Ok();
  MetricsRegistry& m = *registry_;
  ASSIGN_OR_RETURN(auto share, m.AddGauge("hetsched_tenant_share",
                                          "Fair share of each tenant with jobs (its weight "
                                          "against its siblings' with jobs, times its parent's).",
                                          {"tenant"}));
  ASSIGN_OR_RETURN(auto usage, m.AddGauge("hetsched_tenant_usage",
                                          "Decayed usage that fair share orders tenants by, in "
                                          "reference-device-seconds (or billing units).",
                                          {"tenant"}));
  ASSIGN_OR_RETURN(auto devices, m.AddGauge("hetsched_tenant_devices",
                                            "Devices a tenant's jobs hold, by device type.",
                                            {"tenant", "device_type"}));
  ASSIGN_OR_RETURN(auto normalized, m.AddGauge("hetsched_tenant_normalized_devices",
                                               "Reference devices a tenant's running jobs are "
                                               "worth (devices times speed there / on the "
                                               "reference type).",
                                               {"tenant"}));
  ASSIGN_OR_RETURN(auto borrowed, m.AddGauge("hetsched_tenant_borrowed",
                                             "What a tenant holds beyond its guarantee, in its "
                                             "quota's unit.",
                                             {"tenant"}));
  ASSIGN_OR_RETURN(auto lent,
                   m.AddGauge("hetsched_tenant_lent",
                              "Of a tenant's idle guarantee, what others borrow, in its quota's "
                              "unit.",
                              {"tenant"}));
  tenant_metrics_ = std::make_unique<TenantMetrics>(
      TenantMetrics{share, usage, devices, normalized, borrowed, lent});
  return util::Status::Ok();
}

TenantsView Service::TenantsNow(const TenantScope& scope) const {
  TenantsView out;
  if (!options_.scheduler.tenants) return out;
  const model::Tenants& tenants = *options_.scheduler.tenants;
  out.reference_type = tenants.fair_share.reference_type;
  out.half_life_s = tenants.fair_share.half_life_s;
  std::vector<sched::TenantStanding> standing = scheduler_->TenantStandings(SchedNow());
  for (size_t i = 0; i < tenants.list.size(); ++i) {
    if (!InScope(tenants.list[i].name, scope)) continue;
    TenantView v{tenants.list[i], std::move(standing[i]), {}, {}, {}};
    const auto type_name = [&](size_t t) -> const std::string& {
      return cluster_.catalog.Get(model::DeviceTypeId(static_cast<int32_t>(t))).name;
    };
    for (size_t t = 0; t < v.standing.devices.size(); ++t) {
      if (v.standing.devices[t] > 0) v.devices[type_name(t)] = v.standing.devices[t];
      if (v.standing.borrowed_devices[t] > 0) {
        v.borrowed_devices[type_name(t)] = v.standing.borrowed_devices[t];
      }
      if (v.standing.lent_devices[t] > 0) v.lent_devices[type_name(t)] = v.standing.lent_devices[t];
    }
    out.tenants.push_back(std::move(v));
  }
  return out;
}

util::Result<TenantsView> Service::Tenants(const TenantScope& scope) {
  ASSIGN_OR_RETURN(std::unique_lock<std::mutex> lock, LockWhenReady());
  return TenantsNow(scope);
}

void Service::RefreshTenantGauges() {
  if (!tenant_metrics_) return;
  const TenantMetrics& m = *tenant_metrics_;
  for (const TenantView& v : TenantsNow(std::nullopt).tenants) {
    const std::string& name = v.tenant.name;
    m.share.Get({name})->Set(v.standing.share);
    m.usage.Get({name})->Set(v.standing.usage);
    m.normalized.Get({name})->Set(v.standing.normalized);
    m.borrowed.Get({name})->Set(v.standing.borrowed);
    m.lent.Get({name})->Set(v.standing.lent);
    // Every type of the cluster, 0 where it holds none: a series does not vanish when its jobs
    // end.
    for (const auto& [type, count] : cluster_.DeviceTypeCounts()) {
      const std::string& type_name = cluster_.catalog.Get(type).name;
      const auto held = v.devices.find(type_name);
      m.devices.Get({name, type_name})->Set(held == v.devices.end() ? 0 : held->second);
    }
  }
}

void Service::SaveTenantUsage() {
  if (!options_.scheduler.tenants) return;
  const double now = SchedNow();
  nlohmann::json usage = nlohmann::json::object();
  const std::vector<sched::TenantStanding> standing = scheduler_->TenantStandings(now);
  for (size_t i = 0; i < standing.size(); ++i) {
    usage[options_.scheduler.tenants->list[i].name] = standing[i].usage;
  }
  const nlohmann::json saved = {{"sched_s", now}, {"usage", usage}};
  if (auto st = store_->Put(kTenantUsageKey, saved.dump()); !st.ok()) {
    logger_->Error("saving the tenants' usage failed", {{"error", st.message()}});
  }
}

util::Status Service::RestoreTenantUsage() {
  if (!options_.scheduler.tenants) return util::Status::Ok();
  ASSIGN_OR_RETURN(auto saved, store_->Get(kTenantUsageKey));
  if (!saved) return util::Status::Ok();
  const auto j = nlohmann::json::parse(*saved, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("sched_s") || !j["sched_s"].is_number() ||
      !j.contains("usage") || !j["usage"].is_object()) {
    logger_->Warn("the stored tenants' usage does not read; fair share starts from none");
    return util::Status::Ok();
  }
  std::map<std::string, double> usage;
  for (const auto& [name, value] : j["usage"].items()) {
    if (value.is_number()) usage[name] = value.get<double>();
  }
  // Tenants gone from the config are ignored; new ones start from none.
  scheduler_->RestoreTenantUsage(usage, j["sched_s"].get<double>());
  return util::Status::Ok();
}

namespace {

// "a1, a2 and 3 more": the first few names of a list a message quotes.
std::string FirstNames(const std::vector<std::string>& names) {
  std::string listed;
  for (size_t k = 0; k < names.size() && k < 5; ++k) listed += (k ? ", " : "") + names[k];
  if (names.size() > 5) listed += fmt::format(" and {} more", names.size() - 5);
  return listed;
}

// Services belong to no tenant; a stored job names its kind only in its spec.
bool IsService(const StoredJob& s) {
  const auto doc = nlohmann::json::parse(s.spec_json, nullptr, /*allow_exceptions=*/false);
  return doc.is_object() && doc.value("kind", nlohmann::json()) == "service";
}

}  // namespace

util::Status Service::CheckStoredTenants() const {
  if (!options_.scheduler.tenants) return util::Status::Ok();
  const model::Tenants& tenants = *options_.scheduler.tenants;
  std::map<std::string, std::vector<std::string>> jobs;  // by tenant no longer usable
  std::vector<std::string> without_tenant;               // submitted before the config had tenants
  RETURN_IF_ERROR(store_->ForEachLiveJob([&](StoredJob& s) {
    if (s.tenant.empty()) {
      // Only jobs without a tenant pay for reading their spec: none in the usual case.
      if (!IsService(s)) without_tenant.push_back(s.name);
      return util::Status::Ok();
    }
    const int i = tenants.Find(s.tenant);
    if (i < 0 || tenants.HasChildren(i)) jobs[s.tenant].push_back(s.name);
    return util::Status::Ok();
  }));
  if (!without_tenant.empty()) {
    return util::Status::InvalidArgument(fmt::format(
        "{}: live job(s) {} name no tenant: they were submitted under a config without "
        "tenants: (expected every job but a service to name a tenant; cancel them under that "
        "config before adding tenants)",
        store_->path(), FirstNames(without_tenant)));
  }
  if (jobs.empty()) return util::Status::Ok();
  const auto& [tenant, names] = *jobs.begin();
  const bool parent = tenants.Find(tenant) >= 0;
  return util::Status::InvalidArgument(fmt::format(
      "{}: live job(s) {} of tenant '{}', which {} (expected the tenants: the jobs were "
      "submitted under, with '{}' a tenant without children; cancel them under that config "
      "before changing it)",
      store_->path(), FirstNames(names), tenant,
      parent ? "has child tenants in this config" : "this config's tenants: does not list",
      tenant));
}

}  // namespace hetsched::svc
