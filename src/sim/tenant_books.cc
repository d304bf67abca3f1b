#include "sim/tenant_books.h"

#include <algorithm>

#include "sched/job_record.h"

namespace hetsched::sim {

using model::DeviceTypeId;

TenantBooks::TenantBooks(const model::Tenants& tenants, const model::Cluster& cluster,
                         const model::Workload& workload, const model::ThroughputProfile* profile)
    : tenants_(tenants),
      cluster_(cluster),
      workload_(workload),
      profile_(profile),
      reference_(cluster.catalog.FindId(tenants.fair_share.reference_type).value()) {
  for (size_t i = 0; i < tenants.list.size(); ++i) guarantee_.push_back(tenants.Guarantee(i));
}

double TenantBooks::Worth(const model::Job& job, DeviceTypeId type) const {
  const auto speed = [&](DeviceTypeId t) {
    return sched::GangSpeed(job, cluster_.catalog.Get(t), profile_).value_or(0);
  };
  double base = speed(reference_);
  if (!(base > 0)) {  // it cannot run on the reference type: its fastest type is the unit
    for (const auto& [t, count] : cluster_.DeviceTypeCounts()) base = std::max(base, speed(t));
  }
  return base > 0 ? speed(type) / base : 0;
}

void TenantBooks::Run(int32_t job, DeviceTypeId type, int32_t devices, double from_s, double to_s) {
  const model::Job& j = workload_.jobs[job];
  const int t = tenants_.Find(j.tenant);
  if (t < 0 || !(to_s > from_s) || devices <= 0) return;
  spans_.push_back({t, type, devices, devices * Worth(j, type), from_s, to_s});
}

void TenantBooks::Lending(std::pair<double, double> window, std::vector<TenantResult>& out) const {
  const size_t n = tenants_.list.size();
  struct Change {
    double time_s;
    int tenant;
    double devices, normalized;
  };
  std::vector<Change> changes;
  for (const Span& s : spans_) {
    const double from = std::max(s.from_s, window.first), to = std::min(s.to_s, window.second);
    if (!(to > from)) continue;
    changes.push_back({from, s.tenant, 1.0 * s.devices, s.normalized});
    changes.push_back({to, s.tenant, -1.0 * s.devices, -s.normalized});
  }
  std::sort(changes.begin(), changes.end(),
            [](const Change& a, const Change& b) { return a.time_s < b.time_s; });
  double unguaranteed = 0;
  for (const auto& [type, count] : cluster_.DeviceTypeCounts()) unguaranteed += count;
  for (double g : guarantee_) unguaranteed -= g;
  std::vector<double> devices(n, 0), normalized(n, 0), idle(n, 0);
  for (size_t c = 0; c < changes.size(); ++c) {
    devices[changes[c].tenant] += changes[c].devices;
    normalized[changes[c].tenant] += changes[c].normalized;
    const double dt_h =
        c + 1 < changes.size() ? (changes[c + 1].time_s - changes[c].time_s) / 3600 : 0;
    if (dt_h <= 0) continue;
    double borrowed = 0, idle_total = 0;
    for (size_t t = 0; t < n; ++t) {
      const bool by_worth = tenants_.list[t].normalized.has_value();
      const double held = by_worth ? normalized[t] : devices[t];
      const double beyond = std::max(0.0, held - guarantee_[t]);
      const double beyond_devices = by_worth && held > 0 ? devices[t] * beyond / held : beyond;
      out[t].borrowed_device_hours += beyond_devices * dt_h;
      borrowed += beyond_devices;
      idle[t] = std::max(0.0, guarantee_[t] - held);
      idle_total += idle[t];
    }
    const double lent = std::min(idle_total, std::max(0.0, borrowed - std::max(0.0, unguaranteed)));
    if (lent <= 0) continue;
    for (size_t t = 0; t < n; ++t) out[t].lent_device_hours += lent * idle[t] / idle_total * dt_h;
  }
}

std::map<std::string, TenantResult> TenantBooks::Summarize(
    const std::vector<TenantJobEnd>& measured, std::pair<double, double> window) const {
  const size_t n = tenants_.list.size();
  std::vector<TenantResult> out(n);
  std::vector<double> jct_sum(n, 0);
  double all_normalized = 0;
  for (const Span& s : spans_) {
    const double from = std::max(s.from_s, window.first), to = std::min(s.to_s, window.second);
    if (!(to > from)) continue;
    const double hours = (to - from) / 3600;
    out[s.tenant].device_hours[cluster_.catalog.Get(s.type).name] += s.devices * hours;
    out[s.tenant].normalized_device_hours += s.normalized * hours;
    all_normalized += s.normalized * hours;
  }
  Lending(window, out);
  for (const TenantJobEnd& e : measured) {
    const int t = tenants_.Find(workload_.jobs[e.id].tenant);
    if (t < 0 || e.completion_s < 0) continue;
    jct_sum[t] += e.completion_s - e.arrival_s;
    out[t].jobs_completed++;
  }
  // A parent's books are the sums of its children's (children come after their parents).
  for (size_t i = n; i-- > 0;) {
    const int p = tenants_.Find(tenants_.list[i].parent);
    if (p < 0) continue;
    for (const auto& [type, h] : out[i].device_hours) out[p].device_hours[type] += h;
    out[p].normalized_device_hours += out[i].normalized_device_hours;
    out[p].borrowed_device_hours += out[i].borrowed_device_hours;
    out[p].lent_device_hours += out[i].lent_device_hours;
    out[p].jobs_completed += out[i].jobs_completed;
    jct_sum[p] += jct_sum[i];
  }
  std::map<std::string, TenantResult> by_name;
  for (size_t t = 0; t < n; ++t) {
    TenantResult& r = out[t];
    if (all_normalized > 0) r.normalized_share = r.normalized_device_hours / all_normalized;
    if (r.jobs_completed > 0) r.avg_jct_s = jct_sum[t] / r.jobs_completed;
    by_name[tenants_.list[t].name] = std::move(r);
  }
  return by_name;
}

}  // namespace hetsched::sim
